"""The roster: slow salted hashes only, owner-only file, one-line errors naming the person."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.staff.credentials import (
    CredentialError,
    SlowHash,
    hash_secret,
)
from tablectl.controller.staff.roster import Roster
from tests.support.staff import CREW, make_roster, write_roster


@settings(max_examples=15, deadline=None)
@given(st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=20))
def test_a_hash_verifies_its_secret_and_no_other(secret: str, other: str) -> None:
    hashed = SlowHash.parse(str(hash_secret(secret)))
    assert hashed.matches(secret)
    assert hashed.matches(other) == (other == secret)


def test_the_same_pin_hashes_differently_for_two_people() -> None:
    assert str(hash_secret("1234")) != str(hash_secret("1234"))


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("1234", "not a hash"),
        ("scrypt$1024$8$1$AAAAAAAAAAAAAAAAAAAAAA$" + "A" * 43, "want a power of two from"),
        ("scrypt$20000$8$1$AAAAAAAAAAAAAAAAAAAAAA$" + "A" * 43, "want a power of two from"),
        ("scrypt$16384$99$1$AAAAAAAAAAAAAAAAAAAAAA$" + "A" * 43, "out of range"),
        ("scrypt$131072$16$1$AAAAAAAAAAAAAAAAAAAAAA$" + "A" * 43, "needs more memory"),
        ("bcrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$" + "A" * 43, "not a hash"),
    ],
)
def test_foreign_or_weak_hashes_are_refused(text: str, why: str) -> None:
    with pytest.raises(CredentialError, match=why):
        SlowHash.parse(text)


def test_a_written_roster_loads_back_and_holds_no_secret_in_clear(tmp_path: Path) -> None:
    path = write_roster(tmp_path / "roster.toml")
    text = path.read_text()
    for member in CREW:
        assert member.pin not in text
        assert member.badge is None or member.badge not in text
    roster = Roster.load(path)
    assert sorted(roster.people) == sorted(m.id for m in CREW)
    ana = roster.person("D-0142")
    assert ana is not None
    assert ana.name == "Ana Ruiz"
    assert ana.roles == {"dealer"}
    assert ana.pin_matches("4821")
    assert not ana.pin_matches("4822")
    assert roster.by_badge("BADGE-0007") == roster.person("S-0007")
    assert roster.by_badge("BADGE-9999") is None
    assert [p.id for p in roster.holding("dealer")] == ["D-0142", "D-0177", "S-0007"]


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620])
def test_a_roster_others_may_touch_is_refused(tmp_path: Path, mode: int) -> None:
    path = write_roster(tmp_path / "roster.toml")
    path.chmod(mode)
    with pytest.raises(ConfigError, match=r"staff.roster .*roster.toml: mode 0"):
        Roster.load(path)


def _raw() -> dict[str, object]:
    return tomllib.loads(make_roster().dump())


def _person(raw: dict[str, object], index: int) -> dict[str, object]:
    people = raw["person"]
    assert isinstance(people, list)
    entry = people[index]
    assert isinstance(entry, dict)
    return entry


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: _person(r, 1).update(id="D-0142"), "person 2: id 'D-0142' appears twice"),
        (lambda r: _person(r, 0).update(roles=["boss"]), r"person 1 \(D-0142\): roles must"),
        (lambda r: _person(r, 0).update(roles=[]), r"person 1 \(D-0142\): roles must"),
        (lambda r: _person(r, 0).update(roles=[["dealer"]]), r"person 1 \(D-0142\): roles must"),
        (lambda r: _person(r, 0).update(pin="4821"), r"\(D-0142\): pin: not a hash"),
        (lambda r: _person(r, 0).pop("pin"), r"\(D-0142\): pin: a hash is required"),
        (lambda r: _person(r, 0).update(id="has space"), r"person 1: id must match"),
        (lambda r: _person(r, 0).update(name=""), r"\(D-0142\): name must be"),
        (lambda r: _person(r, 0).update(colour="red"), r"unknown key\(s\) colour"),
        (lambda r: _person(r, 1).update(badge=_person(r, 0)["badge"]), "has the badge of D-0142"),
        (lambda r: r.update(badge_salt="c2hvcnQ="), "badge_salt: 5 bytes"),
        (lambda r: r.update(badge_salt="not base64!"), "badge_salt: not base64"),
        (lambda r: r.update(extra=1), r"unknown key\(s\) extra"),
    ],
)
def test_a_broken_roster_is_one_line_naming_the_person_and_field(
    change: Callable[[dict[str, object]], object], message: str
) -> None:
    raw = _raw()
    change(raw)
    with pytest.raises(ConfigError, match=message) as caught:
        Roster.parse(raw, source="r.toml")
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith("staff.roster r.toml:")


def test_a_badge_hashed_with_another_salt_is_refused() -> None:
    raw = _raw()
    _person(raw, 0)["badge"] = str(hash_secret("BADGE-0142"))  # its own salt, not the roster's
    with pytest.raises(ConfigError, match="not hashed with this roster's badge_salt"):
        Roster.parse(raw)
