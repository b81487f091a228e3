"""An archive holding a table's journal key refuses a record that is not the table's own.

Issue 26 #3: with the key on both sides, a chain-valid forged outcome (right ``prev_hash``, right
sha256) was stored first and the table's own record went to ``archive_conflicts``. Each record
of a keyed journal now carries ``auth`` (its own MAC); the records here are written by a real
keyed journal and published the way the outbox publishes them.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.archive.gate.admission import Admitted, Context, Quarantined, admit
from tablectl.controller.journal import (
    AUTH,
    WITHHELD_AUTH,
    Journal,
    KeyedAnchors,
    canonical_json,
    record_hash,
)
from tablectl.controller.mqtt.outbound import published_payload

KEY = b"k" * 32
NOW = datetime(2026, 11, 30, 10, 5, tzinfo=UTC)
TS = "2026-11-30T10:00:00.000000Z"


@pytest.fixture
def published(tmp_path: Path) -> list[dict[str, Any]]:
    with Journal(tmp_path / "ROU-01.sqlite", "ROU-01", anchors=KeyedAnchors(KEY)) as journal:
        journal.append([{"type": "round_open", "ts": TS, "device": "wheel"}])
        journal.append([{"type": "bets_closed", "ts": TS, "device": "wheel"}])
        return [record.as_dict() for record in journal.records()]


def _admit(record: dict[str, Any], key: bytes | None = KEY) -> Admitted | Quarantined:
    context = Context(topic="tablectl/ROU-01/events", table="ROU-01", now=NOW, key=key)
    return admit(canonical_json(record).encode(), context)


def test_the_tables_own_records_are_admitted(published: list[dict[str, Any]]) -> None:
    assert all(isinstance(_admit(record), Admitted) for record in published)


def test_a_chain_valid_forgery_is_quarantined_as_forged(published: list[dict[str, Any]]) -> None:
    last = published[-1]
    forged: dict[str, Any] = {
        "schema": 1,
        "table": "ROU-01",
        "type": "outcome",
        "ts": TS,
        "round": "ROU-01-000001",
        "status": "settled",
        "result": {"number": 0, "color": "green"},
        "seq": last["seq"] + 1,
        "prev_hash": last["hash"],
    }
    forged["hash"] = record_hash(forged["prev_hash"], forged)  # the right sha256
    verdict = _admit(forged)
    assert isinstance(verdict, Quarantined)
    assert verdict.reason == "unauthenticated"
    # With an auth copied from a genuine record: forged.
    verdict = _admit({**forged, AUTH: last[AUTH]})
    assert isinstance(verdict, Quarantined)
    assert verdict.reason == "forged"
    # Without the key the archive cannot tell (and says authorship is unverified elsewhere).
    assert isinstance(_admit(forged, key=None), Admitted)


def test_a_genuine_auth_on_another_body_is_forged(published: list[dict[str, Any]]) -> None:
    genuine = published[-1]
    verdict = _admit({**genuine, "device": "elsewhere"})
    assert isinstance(verdict, Quarantined)
    assert verdict.reason == "forged"
    assert "body does not hash" in verdict.detail


def test_another_tables_key_is_forged(published: list[dict[str, Any]]) -> None:
    verdict = _admit(published[0], key=b"x" * 32)
    assert isinstance(verdict, Quarantined)
    assert verdict.reason == "forged"
    assert json.loads(verdict.payload)["seq"] == 1


def test_a_genuine_auth_replayed_on_a_withheld_card_body_is_refused(
    published: list[dict[str, Any]], tmp_path: Path
) -> None:
    """The hostile lane's find: a withheld card is not re-hashed (its hash covers the face it
    does not show), so a genuine record's seq, hash and auth on a made-up face-down card passed,
    and the conflict it made broke the table's chain in the archive for good. A withheld record
    must carry withheld_auth, the MAC of the body as published."""
    genuine = published[-1]
    dressed = {
        **{k: genuine[k] for k in ("schema", "table", "seq", "ts", "prev_hash", "hash", AUTH)},
        "type": "card",
        "face_down": True,
        "card": None,
        "withheld": True,
    }
    verdict = _admit(dressed)
    assert isinstance(verdict, Quarantined)
    assert (verdict.reason, verdict.detail) == (
        "unauthenticated",
        f"seq {genuine['seq']} is withheld without withheld_auth",
    )
    # A card the table dealt face down, as its outbox publishes it with the key: admitted; its
    # body changed (withheld_auth kept, or made with another key): forged.
    with Journal(tmp_path / "BAC-01.sqlite", "ROU-01", anchors=KeyedAnchors(KEY)) as journal:
        journal.append([{"type": "card", "ts": TS, "card": "KH", "face_down": True}])
        (card,) = journal.records()
    own = json.loads(published_payload("card", canonical_json(card.fields).encode(), KEY))
    assert own["card"] is None
    assert own[WITHHELD_AUTH]
    assert isinstance(_admit(own), Admitted)
    moved = {**own, "ts": "2026-11-30T10:00:01.000000Z"}
    assert _forged_reason(moved) == "forged"
    other = json.loads(published_payload("card", canonical_json(card.fields).encode(), b"x" * 32))
    assert _forged_reason(other) == "forged"


def _forged_reason(record: dict[str, Any]) -> str:
    verdict = _admit(record)
    assert isinstance(verdict, Quarantined)
    return verdict.reason
