"""Per-table verification in the archive, on real published records (pure: no database)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tablectl.controller.archive.chains import (
    ChainState,
    Gap,
    StoredRow,
    find_gaps,
    is_withheld,
    reconcile_gaps,
    resends_due,
    walk,
)
from tablectl.controller.journal import canonical_json, record_hash
from tablectl.controller.mqtt.outbound import published_payload
from tests.controller.archive.published import KEY, Published, publish_journal

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def _rows(published: list[Published]) -> list[StoredRow]:
    out = []
    for p in published:
        record = json.loads(p.payload)
        out.append(StoredRow(p.seq, record["hash"], record["prev_hash"], p.type, p.payload))
    return out


def _edit(row: StoredRow, **fields: object) -> StoredRow:
    record = {**json.loads(row.raw), **fields}
    raw = canonical_json(record).encode("utf-8")
    return StoredRow(row.seq, record["hash"], record["prev_hash"], row.type, raw)


@pytest.fixture
def rows(tmp_path: Path) -> list[StoredRow]:
    return _rows(publish_journal(tmp_path / "j.sqlite", "T1", rounds=4))


def test_a_published_chain_verifies_end_to_end_with_its_key(rows: list[StoredRow]) -> None:
    result = walk("T1", ChainState(), rows, key=KEY)
    assert result.broke is None
    assert result.state.verified_seq == rows[-1].seq
    assert result.state.verified_hash == rows[-1].hash
    assert result.checked == len(rows)
    # The face-down cards: published withheld, so only their links are checked.
    assert result.withheld == 4
    assert result.anchors == len([r for r in rows if r.type == "anchor"]) >= 2


def test_a_walk_continues_from_the_verified_head(rows: list[StoredRow]) -> None:
    first = walk("T1", ChainState(), rows[:5], key=KEY)
    second = walk("T1", first.state, rows, key=KEY)  # rows up to the head are skipped
    assert second.state.verified_seq == rows[-1].seq
    assert second.checked == len(rows) - 5


def test_an_anchor_under_another_key_breaks_the_chain_at_the_anchor(
    rows: list[StoredRow],
) -> None:
    anchor = next(r for r in rows if r.type == "anchor")
    # A journal written before per-record auth: the anchors are the key's only evidence.
    rows = [_strip_auth(r) for r in rows]
    result = walk("T1", ChainState(), rows, key=b"x" * 32)
    assert result.broke is not None
    assert (result.broke.table, result.broke.seq) == ("T1", anchor.seq)
    assert "mac does not match" in result.broke.reason
    assert result.state.verified_seq == anchor.seq - 1
    assert result.state.broken_at == anchor.seq
    # Without a key the anchor's own fields are still checked, the mac is not.
    assert walk("T1", ChainState(), rows).broke is None


def test_each_record_s_own_auth_is_checked_under_the_key(rows: list[StoredRow]) -> None:
    """Issue 26: a record's authorship is checkable on its own, not only at the next anchor."""
    result = walk("T1", ChainState(), rows, key=b"x" * 32)  # another table's key
    assert result.broke is not None
    assert result.broke.seq == 1
    assert result.broke.reason.startswith("record auth does not match the record")
    # A chain-valid forgery after the head (rehashed, relinked, the auth kept) is named itself.
    outcome = next(r for r in rows if r.type == "outcome")
    record = {**json.loads(outcome.raw), "result": {"number": 36}}
    record["hash"] = record_hash(record["prev_hash"], record)
    forged = StoredRow(
        outcome.seq,
        record["hash"],
        record["prev_hash"],
        outcome.type,
        canonical_json(record).encode(),
    )
    result = walk("T1", ChainState(), [forged if r is outcome else r for r in rows], key=KEY)
    assert result.broke is not None
    assert (result.broke.seq, result.state.verified_seq) == (outcome.seq, outcome.seq - 1)
    assert "record auth does not match" in result.broke.reason


def _strip_auth(row: StoredRow) -> StoredRow:
    record = json.loads(row.raw)
    record.pop("auth", None)
    return StoredRow(row.seq, row.hash, row.prev_hash, row.type, canonical_json(record).encode())


def test_an_edited_record_breaks_the_chain_naming_its_seq(rows: list[StoredRow]) -> None:
    outcome = next(r for r in rows if r.type == "outcome")
    edited = [_edit(r, result={"number": 36}) if r is outcome else r for r in rows]
    result = walk("T1", ChainState(), edited, key=KEY)
    assert result.broke is not None
    assert (result.broke.seq, result.broke.reason) == (
        outcome.seq,
        "content does not match its hash",
    )
    # A broken chain is not walked again: nothing after the break is vouched for.
    assert walk("T1", result.state, edited, key=KEY).state == result.state


def test_a_withheld_record_is_checked_by_its_links(rows: list[StoredRow]) -> None:
    card = next(r for r in rows if r.type == "card")
    assert json.loads(card.raw)["withheld"] is True  # the outbox withheld its face
    # Its body cannot be re-hashed (the face is withheld): without the key a changed body
    # passes; with it, its withheld_auth names it (a genuine seq, hash and auth on another body).
    quiet = [_edit(r, ts="2026-11-30T10:59:00.000000Z") if r is card else r for r in rows]
    assert walk("T1", ChainState(), quiet).broke is None
    result = walk("T1", ChainState(), quiet, key=KEY)
    assert result.broke is not None
    assert result.broke.seq == card.seq
    assert "withheld_auth does not match" in result.broke.reason
    assert walk("T1", ChainState(), rows, key=KEY).broke is None  # the table's own passes
    # … but a changed hash does not: its own auth no longer matches (with the key) …
    forged = [_edit(r, hash="f" * 64) if r is card else r for r in rows]
    result = walk("T1", ChainState(), forged, key=KEY)
    assert result.broke is not None
    assert result.broke.seq == card.seq
    assert "record auth does not match" in result.broke.reason
    # … and the next record no longer links to it (without a key).
    result = walk("T1", ChainState(), forged)
    assert result.broke is not None
    assert result.broke.seq == card.seq + 1
    assert "does not link" in result.broke.reason


@pytest.mark.parametrize(
    ("kind", "fields"),
    [
        ("outcome", {"withheld": True, "result": {"number": 36}}),  # not a card at all
        ("card", {"face_down": False, "withheld": True}),  # a card dealt face up
        ("card", {"withheld": True, "barcode": "x"}),  # a face-down card with its barcode
    ],
)
def test_only_what_the_outbox_withholds_escapes_the_hash(
    rows: list[StoredRow], kind: str, fields: dict[str, object]
) -> None:
    victim = next(r for r in rows if r.type == kind)
    forged = [_edit(r, **fields) if r is victim else r for r in rows]
    result = walk("T1", ChainState(), forged, key=KEY)
    assert result.broke is not None
    assert (result.broke.seq, result.broke.reason) == (
        victim.seq,
        "content does not match its hash",
    )


def test_the_archive_and_the_outbox_share_one_withholding_rule() -> None:
    journaled = {"type": "card", "seq": 2, "card": "QC", "face_down": True, "barcode": "x"}
    published = json.loads(published_payload("card", canonical_json(journaled).encode()))
    assert is_withheld(published)
    assert not is_withheld(journaled)
    for record in ({**published, "type": "outcome"}, {**published, "card": "QC"}):
        assert not is_withheld(record)


def test_a_missing_seq_stops_the_walk_as_a_gap(rows: list[StoredRow]) -> None:
    result = walk("T1", ChainState(), rows[:3] + rows[5:], key=KEY)
    assert result.broke is None
    assert result.stopped_at_gap
    assert result.state.verified_seq == 3
    assert find_gaps(3, [r.seq for r in rows[5:]]) == [(4, 5)]


def test_a_second_record_for_a_seq_is_a_break(rows: list[StoredRow]) -> None:
    other = _edit(rows[2], ts="2026-11-30T11:00:00.000000Z")
    result = walk("T1", ChainState(), [*rows[:3], other, *rows[3:]], key=KEY)
    assert result.broke is not None
    assert result.broke.seq == 3
    assert "second, different record" in result.broke.reason


def test_records_of_another_table_do_not_verify(rows: list[StoredRow]) -> None:
    result = walk("T2", ChainState(), rows, key=KEY)
    assert result.broke is not None
    assert result.broke.seq == 1
    assert "'table'" in result.broke.reason


def test_the_first_record_must_link_to_the_genesis(rows: list[StoredRow]) -> None:
    result = walk("T1", ChainState(), rows[1:], key=KEY)
    assert result.stopped_at_gap  # seq 1 missing: a gap from 1, not a break
    assert result.state.verified_seq == 0


# --- gaps ----------------------------------------------------------------------------------


def test_gaps_between_the_head_and_the_stored_seqs() -> None:
    assert find_gaps(0, [1, 2, 5, 6, 9]) == [(3, 4), (7, 8)]
    assert find_gaps(4, [5, 6]) == []
    assert find_gaps(0, [3]) == [(1, 2)]


def test_a_gap_shrunk_by_a_partial_resend_is_the_same_gap() -> None:
    old = [Gap("T1", 10, 100, T0, T0 + timedelta(seconds=5), requests=1)]
    later = T0 + timedelta(seconds=9)
    change = reconcile_gaps("T1", old, [(60, 100)], later)
    [gap] = change.open
    assert (gap.from_seq, gap.since, gap.requests) == (60, T0, 1)
    assert change.opened == []
    assert change.filled == []
    done = reconcile_gaps("T1", change.open, [], later)
    assert done.filled == change.open
    assert done.open == []


def test_a_gap_is_asked_for_after_the_timeout_then_with_backoff() -> None:
    timeout = timedelta(seconds=5)
    gap = Gap("T1", 4, 5, T0)
    assert resends_due([gap], T0 + timedelta(seconds=4), timeout) == []
    assert resends_due([gap], T0 + timedelta(seconds=5), timeout) == [gap]
    asked = Gap("T1", 4, 5, T0, T0 + timedelta(seconds=5), requests=2)
    # Two requests so far: the next after 5 s × 2² = 20 s.
    assert resends_due([asked], T0 + timedelta(seconds=24), timeout) == []
    assert resends_due([asked], T0 + timedelta(seconds=25), timeout) == [asked]
    many = Gap("T1", 4, 5, T0, T0, requests=30)
    assert resends_due([many], T0 + timedelta(minutes=10), timeout) == [many]  # capped
