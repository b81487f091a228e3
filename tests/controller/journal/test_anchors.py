"""Keyed tamper evidence (issue 11, defect 6): anchors, seal macs and ``tablectl verify --key``.

The defect, reproduced as it was reported: change a settled number in the SQLite file, recompute
the sha256 chain (with :func:`record_hash`, as the journal does), delete the ``.seal`` — and the
unkeyed ``verify`` passes. It still does (a chain proves order, not authorship, and says so);
``verify --key`` does not. The attacker here is the well-informed one: the recomputed chain
also rewrites every anchor's ``head_hash``, so only the macs can tell.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablectl.controller.config import parse_config
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.journal import (
    ANCHOR,
    AUTH,
    UNKEYED_NOTE,
    Journal,
    JournalIntegrityError,
    KeyedAnchors,
    KeyedEvidenceError,
    canonical_json,
    head_mac,
    read_seal,
    record_hash,
    seal_path,
    verify_journal_file,
)
from tablectl.controller.journal import live as live_module
from tablectl.controller.mqtt.topics import Topics
from tablectl.controller.secrets import read_journal_key
from tablectl.controller.service.app import anchor_timer, journal_anchors
from tablectl.controller.service.recovery import POWER_OFF, JournalScan
from tablectl.controller.tools.cli import main
from tablectl.controller.tools.export import export_all
from tablectl.controller.tools.journal_reader import JournalReader
from tablectl.drivers.clock import ManualClock
from tests.support.records import journaled
from tests.support.waiting import wait_until

TABLE = "ROU-01"
KEY = b"5f0c3a9e1b7d4c2a8e6f0b1d3c5a7e9f"


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    """The key, outside the journal's folder, readable by the owner only."""
    folder = tmp_path / "etc"
    folder.mkdir()
    path = folder / "journal.key"
    path.write_bytes(KEY + b"\n")
    path.chmod(0o600)
    return path


def _anchors(every: int = 4, seconds: float = 60.0, key: bytes = KEY) -> KeyedAnchors:
    return KeyedAnchors(key, every=every, seconds=seconds)


def _spin(i: int) -> dict[str, Any]:
    return {"type": "winning_number", "ts": f"2026-11-30T10:00:{i:02d}.000000Z", "number": i % 37}


def _settled(number: int) -> dict[str, Any]:
    return {
        "type": "outcome",
        "ts": "2026-11-30T10:01:00.000000Z",
        "round": "ROU-01-000001",
        "status": "settled",
        "result": {"number": number, "color": "black"},
    }


def _write(path: Path, *, every: int = 4, tail: int = 5) -> int:
    """A keyed journal: 9 spins, a settled round (17), ``tail`` more spins. Returns the outcome's
    seq. With ``every=4``: anchors at 5, 10, 15 (and the outcome at 12)."""
    with Journal(path, TABLE, anchors=_anchors(every)) as journal:
        for i in range(9):
            journal.append([_spin(i)])
        outcome = journal.append([_settled(17)])[0]
        for i in range(tail):
            journal.append([_spin(40 + i)])
    return int(outcome["seq"])


def _rows(path: Path) -> list[tuple[int, str]]:
    conn = sqlite3.connect(path)
    try:
        return [(int(s), str(b)) for s, b in conn.execute("SELECT seq, body FROM records")]
    finally:
        conn.close()


def _rewrite(path: Path, seq: int, change: dict[str, Any], *, keep_auth: bool = False) -> None:
    """The attack: change record ``seq`` with raw sqlite3, then recompute the whole chain the way
    the journal does (anchors' ``head_hash`` included), then delete the seal.

    The records' own ``auth`` MACs cannot be recomputed without the key: the attacker strips them
    all (what is left to catch the edit is the anchors and the seal, tested here), unless
    ``keep_auth`` (then the first edited record's ``auth`` gives it away)."""
    conn = sqlite3.connect(path)
    with conn:
        prev = "0" * 64
        for number, body in conn.execute("SELECT seq, body FROM records ORDER BY seq").fetchall():
            record = json.loads(body)
            if not keep_auth:
                record.pop(AUTH, None)
            if number == seq:
                record.update(change)
            record["prev_hash"] = prev
            if record["type"] == ANCHOR:
                record["head_hash"] = prev
            record["hash"] = prev = record_hash(prev, record)
            conn.execute(
                "UPDATE records SET body = ?, ts = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                (canonical_json(record), record["ts"], record["prev_hash"], record["hash"], number),
            )
    conn.close()
    seal_path(path).unlink(missing_ok=True)


def _settle_as(number: int) -> dict[str, Any]:
    return {"result": {"number": number, "color": "red"}}


def _cut(path: Path, from_seq: int) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DELETE FROM records WHERE seq >= ?", (from_seq,))
    conn.close()
    seal_path(path).unlink(missing_ok=True)


def _verify(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["verify", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- the reported scenario -----------------------------------------------------------------------


def test_untouched_keyed_journal_verifies_with_its_key(
    tmp_path: Path, key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ROU-01.sqlite"
    _write(path)
    code, out, err = _verify(capsys, "--key", key_file, path)
    assert (code, err) == (0, "")
    assert "keyed: 3 anchor(s) and 1 seal mac(s) match: the key vouches for seq 1-18" in out
    assert UNKEYED_NOTE not in out


def test_a_recomputed_chain_without_its_seal_fails_naming_the_anchor(
    tmp_path: Path, key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ROU-01.sqlite"
    outcome = _write(path)
    _rewrite(path, outcome, _settle_as(3))
    assert json.loads(dict(_rows(path))[outcome])["result"]["number"] == 3
    # What the defect was: without the key, nothing is wrong with the file — and verify says
    # plainly that this proves order, not authorship, and that the anchors were not checked.
    code, out, _ = _verify(capsys, path)
    assert code == 0
    assert UNKEYED_NOTE in out.splitlines()
    assert "keyed evidence not checked: 3 anchor(s)" in out
    code, out, err = _verify(capsys, "--key", key_file, path)
    assert code == 1
    assert out == ""
    assert len(err.splitlines()) == 1
    assert "seq 15: anchor mac does not match the chain head it names (seq 14)" in err


def test_a_rewritten_record_after_the_last_anchor_needs_the_keyed_seal(
    tmp_path: Path, key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ROU-01.sqlite"
    _write(path, tail=5)  # the last anchor is seq 15; 16-18 follow it
    _rewrite(path, 17, {"number": 0})
    code, _, err = _verify(capsys, "--key", key_file, path)
    assert code == 1
    assert "seq 16: closed journal without a keyed seal: seq 16-18 are not covered" in err


def test_a_forged_seal_fails_on_its_mac(tmp_path: Path, key_file: Path) -> None:
    path = tmp_path / "ROU-01.sqlite"
    outcome = _write(path, tail=1)  # no anchor after the outcome: only the seal covers it
    seal = read_seal(path)
    assert seal is not None
    _rewrite(path, outcome, _settle_as(3))
    # The attacker writes a seal for the new file too: sha256, size and chain ends all right.
    with Journal(path, TABLE):
        pass  # the journal's own close seals it (unkeyed: without the mac) ...
    forged = read_seal(path)
    assert forged is not None
    assert "mac" not in forged
    with pytest.raises(KeyedEvidenceError, match="the seal has no mac") as info:
        verify_journal_file(path, key=KEY)
    assert info.value.seq == forged["last_seq"]
    # ... and with the old mac copied in, it still does not match the new head.
    text = seal_path(path).read_text(encoding="utf-8")
    seal_path(path).write_text(
        canonical_json({**json.loads(text), "mac": seal["mac"]}) + "\n", encoding="utf-8"
    )
    with pytest.raises(KeyedEvidenceError, match="seal's mac does not match"):
        verify_journal_file(path, key=KEY)


def test_a_cut_tail_with_the_seal_deleted_fails(
    tmp_path: Path, key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ROU-01.sqlite"
    outcome = _write(path)
    _cut(path, outcome)  # the settled round and everything after it
    assert main(["verify", str(path)]) == 0  # the reported defect, without the key
    code, _, err = _verify(capsys, "--key", key_file, path)
    assert code == 1
    assert "seq 11: closed journal without a keyed seal: seq 11-11 are not covered" in err


def test_a_cut_tail_right_after_an_anchor_fails_too(tmp_path: Path, key_file: Path) -> None:
    path = tmp_path / "ROU-01.sqlite"
    _write(path)
    _cut(path, 11)  # seq 10 is an anchor: everything kept is keyed, but the seal is gone
    with pytest.raises(KeyedEvidenceError, match="whether records followed") as info:
        verify_journal_file(path, key=KEY)
    assert info.value.seq == 10


def test_a_cut_tail_keeping_the_seal_names_both_ends(tmp_path: Path) -> None:
    path = tmp_path / "ROU-01.sqlite"
    _write(path)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DELETE FROM records WHERE seq >= 12")
    conn.close()
    with pytest.raises(JournalIntegrityError, match="ends at seq 11, its seal at seq 18"):
        verify_journal_file(path)


def test_a_wrong_key_fails(
    tmp_path: Path, key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ROU-01.sqlite"
    _write(path)
    other = key_file.with_name("other.key")
    other.write_bytes(b"ffffffffffffffffffffffffffffffff")
    other.chmod(0o400)
    code, _, err = _verify(capsys, "--key", other, path)
    assert code == 1
    assert "seq 1: record auth does not match the record" in err
    assert "another journal's key" in err


def test_every_record_carries_its_own_auth_and_a_forgery_is_named_at_once(tmp_path: Path) -> None:
    """Issue 26: authorship checkable one record at a time, not only at the next anchor."""
    path = tmp_path / "ROU-01.sqlite"
    outcome = _write(path)
    for seq, body in _rows(path):
        record = json.loads(body)
        assert record[AUTH] == head_mac(KEY, TABLE, seq, record["hash"])
    # A rewrite that keeps the records' auth (it cannot recompute them): caught where it is.
    _rewrite(path, outcome, _settle_as(3), keep_auth=True)
    with pytest.raises(KeyedEvidenceError, match="record auth does not match") as info:
        verify_journal_file(path, key=KEY)
    assert info.value.seq == outcome
    assert verify_journal_file(path).count > 0  # without the key: order only, as before


def test_an_auth_stripped_from_one_record_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "ROU-01.sqlite"
    _write(path)
    conn = sqlite3.connect(path)
    with conn:
        body = conn.execute("SELECT body FROM records WHERE seq = 7").fetchone()[0]
        record = json.loads(body)
        del record[AUTH]  # outside the hash: the chain does not notice
        conn.execute("UPDATE records SET body = ? WHERE seq = 7", (canonical_json(record),))
    conn.close()
    seal_path(path).unlink()
    with pytest.raises(KeyedEvidenceError, match="no auth after authenticated records") as info:
        verify_journal_file(path, key=KEY)
    assert info.value.seq == 7


def test_without_a_key_verify_says_it_proves_order_not_authorship(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ROU-01.sqlite"
    with Journal(path, TABLE) as journal:
        journal.append([_spin(i) for i in range(3)])
    code, out, err = _verify(capsys, path)
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == (
        "hash chain intact: proves order, not authorship; pass --key to check the keyed anchors"
    )
    assert "not checked" not in out  # there is nothing keyed to leave unchecked
    # With a key, an unkeyed closed journal is not proven.
    key = tmp_path / "k" / "journal.key"
    key.parent.mkdir()
    key.write_bytes(KEY)
    key.chmod(0o600)
    code, _, err = _verify(capsys, "--key", key, path)
    assert code == 1
    assert "the seal has no mac" in err


def test_a_live_journals_unanchored_tail_is_a_warning(
    tmp_path: Path, key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ROU-01.sqlite"
    with Journal(path, TABLE, anchors=_anchors(every=4)) as journal:
        journal.append([_spin(i) for i in range(6)])  # seq 1-6, anchor 7
        journal.append([_spin(9)])  # seq 8
        code, out, err = _verify(capsys, "--key", key_file, path)
    assert code == 0
    assert "the key vouches for seq 1-7" in out
    assert "warning:" in err
    assert "seq 8-8 follow the newest anchor and are not covered by the key" in err


def test_the_published_anchor_catches_a_cut_the_file_cannot_show(
    tmp_path: Path, key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ROU-01.sqlite"
    _write(path)
    with Journal(path, TABLE, anchors=_anchors()) as journal:
        published = journal.last_record_of_type(ANCHOR)  # what {prefix}/ROU-01/anchor retains
    assert published is not None
    assert published["seq"] == 15
    anchor_file = tmp_path / "anchor.json"
    anchor_file.write_text(canonical_json(published), encoding="utf-8")
    assert _verify(capsys, "--key", key_file, "--anchor", anchor_file, path)[0] == 0
    # Cut right after an earlier anchor, delete the seal, and hold the file open the way the
    # service does (frames in its WAL): the file alone verifies, everything in it is keyed.
    _cut(path, 11)
    holder = sqlite3.connect(path)
    try:
        with holder:
            holder.execute("UPDATE records SET published = published WHERE seq = 1")
        assert path.with_name(path.name + "-wal").stat().st_size > 0
        assert _verify(capsys, "--key", key_file, path)[:3:2] == (0, "")
        code, _, err = _verify(capsys, "--key", key_file, "--anchor", anchor_file, path)
        assert code == 1
        assert "the published anchor names seq 15, beyond the journal's end (seq 10)" in err
        # A "published" anchor made without the key is refused, not trusted.
        forged = {**published, "mac": head_mac(b"x" * 32, TABLE, 14, published["head_hash"])}
        forged["hash"] = record_hash(forged["prev_hash"], forged)
        anchor_file.write_text(canonical_json(forged), encoding="utf-8")
        code, _, err = _verify(capsys, "--key", key_file, "--anchor", anchor_file, path)
        assert code == 1
        assert "its mac does not match" in err
    finally:
        holder.close()


# -- writing anchors -----------------------------------------------------------------------------


def test_an_anchor_is_journaled_every_n_records(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", TABLE, anchors=_anchors(every=3)) as journal:
        stored = [journal.append([_spin(i)])[0]["seq"] for i in range(7)]
        assert stored == [1, 2, 3, 5, 6, 7, 9]  # the anchors take seq 4 and 8
        # A batch that crosses the count gets its anchor in the same transaction, after it; the
        # caller gets its own records back only.
        batch = journal.append([_spin(i) for i in range(5)])
        assert [r["seq"] for r in batch] == [10, 11, 12, 13, 14]
        records = list(journal.records())
    anchors = [r for r in records if r["type"] == ANCHOR]
    assert [a["seq"] for a in anchors] == [4, 8, 15]
    by_seq = {r["seq"]: r for r in records}
    for anchor in anchors:
        head = by_seq[anchor["seq"] - 1]
        assert anchor["head_seq"] == head["seq"]
        assert anchor["head_hash"] == head["hash"] == anchor["prev_hash"]
        assert anchor["mac"] == head_mac(KEY, TABLE, head["seq"], head["hash"])
        assert anchor["ts"] == head["ts"]
        assert anchor["hash"] == record_hash(anchor["prev_hash"], anchor)  # chained like any
        assert set(anchor) == {
            *("type", "ts", "head_seq", "head_hash", "mac"),
            *("schema", "table", "seq", "prev_hash", "hash", AUTH),
        }
        assert anchor[AUTH] == head_mac(KEY, TABLE, anchor["seq"], anchor["hash"])


def test_an_anchor_is_journaled_after_t_seconds(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", TABLE, anchors=_anchors(every=1000, seconds=60)) as j:
        assert j.anchor_if_due(0.0, "2026-11-30T10:00:00Z") is None  # nothing to anchor
        j.append([_spin(1), _spin(2)])
        assert j.anchor_if_due(100.0, "2026-11-30T10:01:40Z") is None  # first seen: the wait starts
        assert j.anchor_if_due(159.9, "2026-11-30T10:02:39Z") is None
        anchor = j.anchor_if_due(160.0, "2026-11-30T10:02:40Z")
        assert anchor is not None
        assert (anchor["seq"], anchor["head_seq"], anchor["ts"]) == (3, 2, "2026-11-30T10:02:40Z")
        assert j.anchor_if_due(1000.0, "2026-11-30T10:16:40Z") is None  # the head is covered
        j.append([_spin(3)])
        assert j.anchor_if_due(1001.0, "t") is None
        assert j.anchor_if_due(1061.0, "t") is not None
        assert j.last_seq == 5


async def test_the_anchor_timer_journals_and_wakes_the_outbox(tmp_path: Path) -> None:
    # Each look is 30 s later than the one before: no real waiting.
    clock = ManualClock(1_800_000_000.0 - 90.0)
    woken: list[int] = []
    with Journal(tmp_path / "j.sqlite", TABLE, anchors=_anchors(every=1000)) as journal:
        journal.append([_spin(1)])
        timer = asyncio.create_task(
            anchor_timer(journal, lambda: woken.append(journal.last_seq), tick=30.0, clock=clock)
        )
        try:
            async with asyncio.timeout(5):
                while not woken:
                    await wait_until(lambda: clock.pending or woken)
                    if not woken:
                        clock.advance_to_next()
        finally:
            timer.cancel()
        assert woken == [2]
        assert clock.monotonic() == 1_800_000_000.0  # first seen at 30 s, anchored at 90 s
        anchor = journal.last_record_of_type(ANCHOR)
        assert anchor is not None
        assert anchor["ts"] == "2027-01-15T08:00:00.000000Z"


def test_a_tail_found_at_open_is_anchored_at_the_first_tick(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, TABLE, anchors=_anchors(every=1000)) as journal:
        journal.append([_spin(1), _spin(2)])
    assert read_seal(path) is not None
    with Journal(path, TABLE, anchors=_anchors(every=1000)) as journal:
        anchor = journal.anchor_if_due(0.0, "t")
        assert anchor is not None
        assert anchor["head_seq"] == 2
    assert verify_journal_file(path, key=KEY).keyed_through == 3


def test_only_the_journal_writes_anchors(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", TABLE, anchors=_anchors()) as journal:
        fake = {"type": ANCHOR, "ts": "t", "head_seq": 0, "head_hash": "0" * 64, "mac": "0" * 64}
        with pytest.raises(ValueError, match="written by the journal itself"):
            journal.append([fake])


def test_an_unkeyed_journal_writes_no_anchor_and_no_mac(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, TABLE) as journal:
        journal.append([_spin(i) for i in range(2000)])
        assert journal.anchor("t") is None
        assert journal.anchor_if_due(1e9, "t") is None
        assert journal.last_record_of_type(ANCHOR) is None
    seal = read_seal(path)
    assert seal is not None
    assert "mac" not in seal


def test_a_rotated_archive_is_sealed_with_the_mac_and_verifies_as_one_chain(
    tmp_path: Path, key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "journal" / "ROU-01.sqlite"
    path.parent.mkdir()
    with Journal(path, TABLE, anchors=_anchors(every=4)) as journal:
        journal.append([_spin(i) for i in range(6)])
        journal.mark_published(journal.last_seq)
        archive = journal.rotate()
        assert archive is not None
        journal.append([_spin(i) for i in range(2)])
    seal = read_seal(archive)
    assert seal is not None
    assert seal["mac"] == head_mac(KEY, TABLE, seal["last_seq"], seal["last_hash"])
    code, out, _ = _verify(capsys, "--key", key_file, path.parent)
    assert code == 0
    assert "2 file(s), seq 1-9" in out
    assert "the key vouches for seq 1-9" in out
    # The archive's seal rewritten with another mac: named by the seal's last seq.
    text = seal_path(archive).read_text(encoding="utf-8")
    seal_path(archive).write_text(
        canonical_json({**json.loads(text), "mac": "a" * 64}) + "\n", encoding="utf-8"
    )
    code, _, err = _verify(capsys, "--key", key_file, path.parent)
    assert code == 1
    assert f"seq {seal['last_seq']}: the seal's mac does not match" in err


def test_export_leaves_anchors_out_of_the_events(tmp_path: Path) -> None:
    path = tmp_path / "ROU-01.sqlite"
    _write(path)
    with JournalReader(path) as reader:
        exported = export_all(reader)
    assert ANCHOR not in {e["type"] for e in exported.events}
    assert ANCHOR in {r["type"] for r in exported.records}


def test_an_anchor_after_power_off_is_still_a_clean_stop() -> None:
    scan = JournalScan()
    scan.record(journaled({"type": POWER_OFF, "ts": "2026-11-30T10:00:00Z"}), None)
    scan.record(journaled({"type": ANCHOR, "ts": "2026-11-30T10:00:01Z"}), None)
    assert scan.previous == "power_off"


def test_anchors_are_published_retained_on_their_topic() -> None:
    topics = Topics("tablectl", TABLE)
    assert topics.anchor == "tablectl/ROU-01/anchor"
    assert topics.routes({"type": ANCHOR}) == [
        ("tablectl/ROU-01/events", False),
        ("tablectl/ROU-01/anchor", True),
    ]
    assert topics.retained_records()[ANCHOR] == "tablectl/ROU-01/anchor"


# -- the key's place and mode --------------------------------------------------------------------


def _config(journal: Path, key: Path) -> dict[str, Any]:
    return {
        "table": {"id": TABLE, "game": "roulette"},
        "journal": {"path": str(journal), "key_file": str(key)},
    }


def test_a_key_inside_the_journals_directory_is_refused(tmp_path: Path) -> None:
    journal = tmp_path / "var" / "ROU-01.sqlite"
    for key in (tmp_path / "var" / "journal.key", tmp_path / "var" / "keys" / "journal.key"):
        with pytest.raises(ConfigError) as info:
            parse_config(_config(journal, key), "t.toml")
        message = str(info.value)
        assert f"key_file {key} is inside the journal's directory {journal.parent}" in message
        assert str(journal) in message


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o610])
def test_a_key_readable_by_others_is_refused(tmp_path: Path, key_file: Path, mode: int) -> None:
    key_file.chmod(mode)
    config = parse_config(_config(tmp_path / "var" / "ROU-01.sqlite", key_file), "t.toml")
    with pytest.raises(ConfigError) as info:
        journal_anchors(config)
    # The one message of every secret file (tablectl.controller.secrets.read_secret).
    assert re.fullmatch(
        rf"journal\.key_file {re.escape(str(key_file))}: mode {mode:04o}, "
        r"(readable|writable|executable) by group/others \(chmod 600\)",
        str(info.value),
    ), str(info.value)


def test_the_key_file_is_read_strictly(tmp_path: Path, key_file: Path) -> None:
    assert read_journal_key(key_file) == KEY
    config = parse_config(_config(tmp_path / "var" / "ROU-01.sqlite", key_file), "t.toml")
    anchors = journal_anchors(config)
    assert anchors is not None
    assert (anchors.key, anchors.every, anchors.seconds) == (KEY, 1000, 60.0)
    short = key_file.with_name("short.key")
    short.write_bytes(b"abc")
    short.chmod(0o600)
    with pytest.raises(ConfigError, match="key has 3 bytes"):
        read_journal_key(short)
    with pytest.raises(ConfigError, match="cannot read"):
        read_journal_key(key_file.with_name("missing.key"))


def test_verify_refuses_a_key_readable_by_others(
    tmp_path: Path, key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ROU-01.sqlite"
    _write(path)
    key_file.chmod(0o644)
    code, _, err = _verify(capsys, "--key", key_file, path)
    assert code == 1
    assert f"verify --key {key_file}: mode 0644" in err


# -- any single edit, chain recomputed, is caught by the key ------------------------------------


@pytest.fixture(scope="module")
def pristine() -> Iterator[tuple[bytes, bytes, list[int]]]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ROU-01.sqlite"
        _write(path, tail=7)  # the last anchor is seq 20, one record follows it
        rows = _rows(path)
        editable = [seq for seq, body in rows if json.loads(body)["type"] != ANCHOR]
        yield path.read_bytes(), seal_path(path).read_bytes(), editable


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    index=st.integers(min_value=0, max_value=100),
    value=st.one_of(st.integers(), st.text(max_size=8)),
    field=st.sampled_from(["number", "ts", "device", "extra"]),
    forge_seal=st.booleans(),
)
def test_any_single_record_rewrite_is_caught_by_the_key(
    pristine: tuple[bytes, bytes, list[int]],
    index: int,
    value: int | str,
    field: str,
    forge_seal: bool,
) -> None:
    data, _, editable = pristine
    seq = editable[index % len(editable)]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ROU-01.sqlite"
        path.write_bytes(data)
        before = dict(_rows(path))[seq]
        _rewrite(path, seq, {field: str(value) if field == "ts" else value})
        if dict(_rows(path))[seq] == before:
            return  # the "edit" changed nothing
        assert verify_journal_file(path).count == 21  # unkeyed: a perfect forgery
        if forge_seal:
            with Journal(path, TABLE):  # a fresh seal for the forged file (no key: no mac)
                pass
        with pytest.raises(KeyedEvidenceError) as info:
            verify_journal_file(path, key=KEY)
        assert info.value.seq >= seq


class _Log:
    """Stands in for the journal module's logger: records warnings."""

    def __init__(self) -> None:
        self.warnings: list[dict[str, Any]] = []

    def warning(self, event: str, **fields: Any) -> None:
        self.warnings.append({"event": event, **fields})

    def info(self, event: str, **fields: Any) -> None:
        pass


def test_a_tail_no_keyed_seal_vouched_for_is_logged_at_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, TABLE) as journal:  # written before the key was configured
        journal.append([_spin(1), _spin(2)])
    log = _Log()
    monkeypatch.setattr(live_module, "log", log)
    with Journal(path, TABLE, anchors=_anchors(every=1000)):
        pass
    assert [(e["event"], e["first_seq"], e["last_seq"], e["why"]) for e in log.warnings] == [
        ("journal_tail_not_keyed", 1, 2, "the seal has no mac (sealed without a key)")
    ]
    log.warnings.clear()
    with Journal(path, TABLE, anchors=_anchors(every=1000)) as journal:
        anchor = journal.anchor_if_due(0.0, "t")  # the keyed seal vouched: anchored, no warning
        assert anchor is not None
        assert anchor["head_seq"] == 2
    assert log.warnings == []
