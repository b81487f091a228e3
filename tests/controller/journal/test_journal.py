"""The journal: contiguous seq, hash chain, outbox marks, and staying usable after a disk error."""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ChainBrokenError, JournalError
from tablectl.controller.journal import (
    ANCHOR,
    GENESIS_HASH,
    Journal,
    KeyedAnchors,
    canonical_json,
    record_hash,
    verify_file,
)

TABLE = "BAC-01"


def rec(kind: str = "card", **data: Any) -> dict[str, Any]:
    return {"type": kind, "ts": "2026-11-30T10:00:00.000000Z", **data}


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "journal.sqlite"


def test_append_stamps_and_chains(path: Path) -> None:
    with Journal(path, TABLE) as journal:
        first, second = journal.append([rec(card="KH"), rec("outcome", result={"n": "é"})])
    assert first["seq"] == 1
    assert first["prev_hash"] == GENESIS_HASH
    assert first["schema"] == 1
    assert first["table"] == TABLE
    assert second["prev_hash"] == first["hash"]
    assert first["hash"] == record_hash(GENESIS_HASH, first)
    unhashed = {k: v for k, v in second.items() if k != "hash"}
    assert second["hash"] == record_hash(first["hash"], unhashed)


def test_seq_contiguous_across_reopen(path: Path) -> None:
    with Journal(path, TABLE) as journal:
        journal.append([rec(), rec()])
        last_hash = journal.last_hash
    with Journal(path, TABLE) as journal:
        assert journal.last_seq == 2
        assert journal.last_hash == last_hash
        (third,) = journal.append([rec()])
        assert third["seq"] == 3
        assert third["prev_hash"] == last_hash
        assert [r["seq"] for r in journal.records()] == [1, 2, 3]
        assert journal.verify() == 3


def test_records_since_and_paging(path: Path) -> None:
    with Journal(path, TABLE) as journal:
        journal.append([rec(i=i) for i in range(1200)])
        assert [r["seq"] for r in journal.records(since_seq=1195)] == [1196, 1197, 1198, 1199, 1200]
        seqs = [r["seq"] for r in journal.records()]
    assert seqs == list(range(1, 1201))


def test_stored_body_is_what_append_returned(path: Path) -> None:
    with Journal(path, TABLE) as journal:
        stored = journal.append([rec("outcome", result={"winner": "banker"})])
        assert list(journal.records()) == stored
        raw = sqlite3.connect(path).execute("SELECT body FROM records").fetchone()[0]
        assert raw == canonical_json(stored[0])


def test_empty_batch_writes_nothing(path: Path) -> None:
    with Journal(path, TABLE) as journal:
        assert journal.append([]) == []
        assert journal.last_seq == 0
        assert journal.last_hash == GENESIS_HASH
        assert journal.verify() == 0


def test_unpublished_and_mark_published(path: Path) -> None:
    with Journal(path, TABLE) as journal:
        journal.append([rec() for _ in range(5)])
        assert [r["seq"] for r in journal.unpublished()] == [1, 2, 3, 4, 5]
        assert [r["seq"] for r in journal.unpublished(limit=2)] == [1, 2]
        journal.mark_published(3)
        assert [r["seq"] for r in journal.unpublished()] == [4, 5]
        journal.mark_published(2)  # going back is harmless
        assert [r["seq"] for r in journal.unpublished()] == [4, 5]
    with Journal(path, TABLE) as journal:  # marks are durable too
        assert [r["seq"] for r in journal.unpublished()] == [4, 5]
        journal.mark_published(5)
        assert journal.unpublished() == []


def test_last_record_of_type(path: Path) -> None:
    with Journal(path, TABLE) as journal:
        assert journal.last_record_of_type("round_open") is None
        journal.append([rec("round_open", round="R-1"), rec(), rec("round_open", round="R-2")])
        journal.append([rec("outcome")])
        last = journal.last_record_of_type("round_open")
        assert last is not None
        assert (last["round"], last["seq"]) == ("R-2", 3)


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"ts": "t"}, "type"),
        ({"type": "card"}, "ts"),
        ({"type": "card", "ts": "t", "seq": 9}, "assigned by the journal"),
        ({"type": "card", "ts": "t", "hash": "x"}, "assigned by the journal"),
        ({"type": "card", "ts": "t", "table": "OTHER"}, "table"),
        ({"type": "card", "ts": "t", "schema": 2}, "schema"),
        ({"type": "card", "ts": "t", "x": object()}, "JSON"),
        ({"type": "card", "ts": "t", "x": float("nan")}, "JSON"),
    ],
)
def test_bad_records_refused_and_nothing_written(
    path: Path, bad: dict[str, Any], match: str
) -> None:
    with Journal(path, TABLE) as journal:
        with pytest.raises(ValueError, match=match):
            journal.append([rec(), bad])
        assert journal.last_seq == 0
        assert list(journal.records()) == []


def test_matching_table_and_schema_accepted(path: Path) -> None:
    with Journal(path, TABLE) as journal:
        (stored,) = journal.append([rec("outcome", table=TABLE, schema=1)])
        assert stored["seq"] == 1


def test_other_tables_journal_refused(path: Path) -> None:
    with Journal(path, TABLE) as journal:
        journal.append([rec()])
    with pytest.raises(JournalError, match="belongs to table 'BAC-01'"):
        Journal(path, "BAC-02")


def test_not_a_database(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(JournalError, match="cannot open"):
        Journal(junk, TABLE)
    with pytest.raises(JournalError):
        verify_file(junk)


def test_close_is_idempotent_and_final(path: Path) -> None:
    journal = Journal(path, TABLE)
    journal.close()
    journal.close()
    with pytest.raises(JournalError, match="closed"):
        journal.append([rec()])


def _tamper(path: Path, sql: str, *params: Any) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(sql, params)
    conn.close()


@pytest.fixture
def ten(path: Path) -> Path:
    with Journal(path, TABLE) as journal:
        journal.append([rec(card=c) for c in ["AS", "KH", "QD", "JC", "TS", "9H", "8D", "7C"]])
        journal.append([rec("outcome", result={"winner": "player"}), rec()])
    return path


def test_flipped_byte_in_body_names_the_seq(ten: Path) -> None:
    _tamper(ten, "UPDATE records SET body = replace(body, '\"QD\"', '\"QH\"') WHERE seq = 3")
    with pytest.raises(ChainBrokenError) as info:
        verify_file(ten)
    assert info.value.seq == 3
    assert "content" in info.value.why
    with Journal(ten, TABLE) as journal, pytest.raises(ChainBrokenError) as again:
        journal.verify()
    assert again.value.seq == 3


def test_recomputed_hash_breaks_the_next_link(ten: Path) -> None:
    # A forger who rewrites record 4 and its own hash still breaks record 5's prev_hash.
    conn = sqlite3.connect(ten)
    body = conn.execute("SELECT body FROM records WHERE seq = 4").fetchone()[0]
    conn.close()
    forged = {**json.loads(body), "card": "AS"}
    forged["hash"] = record_hash(forged["prev_hash"], forged)
    _tamper(
        ten,
        "UPDATE records SET body = ?, hash = ? WHERE seq = 4",
        canonical_json(forged),
        forged["hash"],
    )
    with pytest.raises(ChainBrokenError) as info:
        verify_file(ten)
    assert info.value.seq == 5
    assert "prev_hash" in info.value.why


def test_deleted_record_is_a_gap(ten: Path) -> None:
    _tamper(ten, "DELETE FROM records WHERE seq = 6")
    with pytest.raises(ChainBrokenError) as info:
        verify_file(ten)
    assert info.value.seq == 6
    assert "missing" in info.value.why


def test_hash_column_edit_detected(ten: Path) -> None:
    _tamper(ten, "UPDATE records SET hash = ? WHERE seq = 10", "f" * 64)
    with pytest.raises(ChainBrokenError) as info:
        verify_file(ten)
    assert info.value.seq == 10


def test_verify_file_reads_a_copy_without_writing(ten: Path, tmp_path: Path) -> None:
    copy = tmp_path / "evidence.sqlite"
    shutil.copy(ten, copy)
    before = copy.read_bytes()
    assert verify_file(copy) == 10
    assert copy.read_bytes() == before
    with pytest.raises(JournalError, match="no such journal"):
        verify_file(tmp_path / "missing.sqlite")


def test_verify_file_while_journal_is_open(path: Path) -> None:
    with Journal(path, TABLE) as journal:
        journal.append([rec(), rec()])
        assert verify_file(path) == 2  # sees committed records still in the WAL


def test_disk_full_is_a_journal_error_and_recoverable(path: Path) -> None:
    with Journal(path, TABLE) as journal:
        journal.append([rec(i=0)])
        conn = journal._live.conn  # the one way to make SQLite run out of space on demand
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        big = [rec(blob="x" * 20_000) for _ in range(5)]
        with pytest.raises(JournalError, match="cannot append 5 record"):
            journal.append(big)
        assert journal.last_seq == 1
        assert [r["seq"] for r in journal.records()] == [1]
        conn.execute("PRAGMA max_page_count = 1073741823")
        stored = journal.append(big)  # the caller's retry succeeds, chain unbroken
        assert [r["seq"] for r in stored] == [2, 3, 4, 5, 6]
        assert journal.verify() == 6


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)
records = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["card", "outcome", "fault", "round_open"]),
        "ts": st.text(min_size=1),
    },
    optional={"data": json_values, "device": st.text(max_size=6)},
)


@settings(max_examples=40, deadline=None)
@given(batches=st.lists(st.lists(records, max_size=4), max_size=5))
def test_any_sequence_of_appends_verifies(batches: list[list[dict[str, Any]]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "j.sqlite"
        stored: list[dict[str, Any]] = []
        for batch in batches:
            # A reopen per batch: the chain must continue across restarts.
            with Journal(path, TABLE) as journal:
                stored += journal.append(batch)
        with Journal(path, TABLE) as journal:
            assert journal.verify() == len(stored)
            assert list(journal.records()) == stored
            assert [r["seq"] for r in stored] == list(range(1, len(stored) + 1))
        assert verify_file(path) == len(stored)


def test_the_write_ahead_log_cannot_fill_a_small_disk_by_itself(tmp_path: Path) -> None:
    """Each commit adds whole pages (~14 KB) to the WAL; with SQLite's defaults it reached
    4 MiB before a checkpoint, so on a 2-4 MiB disk the journal locked itself out for good: a
    checkpoint needs room in the main file (found by the fault suite's journal-outage lane)."""
    from tests.support.disk import small_disk  # noqa: PLC0415

    with small_disk(tmp_path / "disk", "2m") as disk, Journal(disk / "j.sqlite", "T1") as j:
        for i in range(600):  # ~8 MB of WAL without a checkpoint; ~150 fitted before
            j.append([rec(i=i, pad="x" * 200)])
        assert j.last_seq == 600
        assert (disk / "j.sqlite-wal").stat().st_size <= 1024 * 1024 + 64 * 1024
        assert j.verify() == 600


def test_a_full_disk_that_is_not_the_journals_is_a_write_error(tmp_path: Path) -> None:
    from tablectl.controller.core.errors import JournalWriteError  # noqa: PLC0415
    from tests.support.disk import fill, small_disk  # noqa: PLC0415

    with small_disk(tmp_path / "disk", "2m") as disk, Journal(disk / "j.sqlite", "T1") as j:
        j.append([rec(i=0)])
        filler = fill(disk)
        big = [rec(i=i, pad="x" * 2000) for i in range(200)]  # more than the last free pages
        with pytest.raises(JournalWriteError, match="database or disk is full"):
            j.append(big)
        assert j.last_seq == 1  # all or nothing
        filler.unlink()
        j.append([rec(i=-1)])  # usable again, the chain unbroken
        assert j.verify() == j.last_seq


def test_a_commit_returns_every_row_it_wrote_as_the_file_has_it(path: Path) -> None:
    """What the outbox is handed after a commit is byte for byte what it would read back."""
    key = b"k" * 32
    with Journal(path, TABLE, anchors=KeyedAnchors(key, every=4)) as journal:
        first = journal.commit([rec(n=i) for i in range(3)])
        assert [r.seq for r in first.records] == [1, 2, 3]
        assert first.rows == journal.unpublished_payloads(100, after=0)
        # The fourth record makes an anchor due: chained after it, in the same transaction.
        second = journal.commit([rec(n=3)])
        assert [r.seq for r in second.records] == [4]
        assert [(seq, kind) for seq, kind, _ in second.rows] == [(4, "card"), (5, ANCHOR)]
        assert second.rows == journal.unpublished_payloads(100, after=3)
        assert journal.append([rec(n=4)])[0].seq == 6


def test_the_writer_thread_runs_calls_in_order_and_refuses_them_once_closed(path: Path) -> None:
    journal = Journal(path, TABLE)
    first = journal.in_writer(lambda: journal.append([rec(n=1)]))
    second = journal.in_writer(lambda: journal.append([rec(n=2)]))
    assert [r.seq for r in first.result(5) + second.result(5)] == [1, 2]
    mark = journal.in_writer(lambda: journal.mark_published(2))
    journal.close()  # lets the queued mark finish first
    assert mark.done()
    assert mark.exception() is None
    with pytest.raises(JournalError, match="closed"):
        journal.in_writer(lambda: journal.append([rec(n=3)]))
    with Journal(path, TABLE) as reopened:
        assert reopened.acknowledged_seq == 2
