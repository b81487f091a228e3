"""Rotation that never breaks the chain, reading across rotated files, and retention."""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core.errors import ChainBrokenError, JournalError
from tablectl.controller.core.events import (
    BallLaunched,
    BetsClosed,
    Fault,
    RoundOpen,
    WinningNumber,
)
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import (
    GENESIS_HASH,
    Journal,
    JournalIntegrityError,
    add_verify_arguments,
    archive_path,
    list_archives,
    prune,
    read_retired,
    read_seal,
    retired_log_path,
    run_verify,
    seal_path,
    verify_chain,
    verify_file,
    verify_journal_file,
)
from tablectl.controller.service.clock import ClockWatch
from tablectl.controller.service.runner import TableRunner
from tablectl.drivers.clock import SYSTEM_CLOCK, ManualClock

TABLE = "ROU-01"
DAY0 = datetime(2026, 1, 1, tzinfo=UTC)


def ts(day: float, second: int = 0) -> str:
    moment = DAY0 + timedelta(days=day, seconds=second)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rec(kind: str = "winning_number", day: float = 0, **data: Any) -> dict[str, Any]:
    return {"type": kind, "ts": ts(day), **data}


@pytest.fixture
def live(tmp_path: Path) -> Path:
    return tmp_path / "ROU-01.sqlite"


def _publish_all(journal: Journal) -> None:
    journal.mark_published(journal.last_seq)


def _three_files(live: Path) -> list[dict[str, Any]]:
    """Two rotations by hand: files 1-3, 4-5, and live 6-7."""
    stored: list[dict[str, Any]] = []
    with Journal(live, TABLE) as journal:
        stored += journal.append([rec(n=1), rec(n=2), rec(n=3)])
        _publish_all(journal)
        assert journal.rotate() == archive_path(live, 1, 3)
        stored += journal.append([rec(n=4), rec(n=5)])
        _publish_all(journal)
        assert journal.rotate() == archive_path(live, 4, 5)
        stored += journal.append([rec(n=6), rec(n=7)])
    return stored


def test_rotation_continues_the_chain(live: Path) -> None:
    stored = _three_files(live)
    assert [r["seq"] for r in stored] == list(range(1, 8))
    # The first record of each new file carries the last hash of the old one.
    assert stored[3]["prev_hash"] == stored[2]["hash"]
    assert stored[5]["prev_hash"] == stored[4]["hash"]
    names = sorted(p.name for p in live.parent.iterdir())
    assert names == [
        "ROU-01.000001-000003.sqlite",
        "ROU-01.000001-000003.sqlite.seal",
        "ROU-01.000004-000005.sqlite",
        "ROU-01.000004-000005.sqlite.seal",
        "ROU-01.sqlite",
        "ROU-01.sqlite.seal",
    ]
    # Each file verifies on its own (anchored), and the set as one chain.
    assert verify_file(archive_path(live, 4, 5)) == 2
    assert verify_file(live) == 2
    (report,) = verify_chain([live.parent])
    assert (report.count, report.first_seq, report.last_seq, report.sealed) == (7, 1, 7, 3)


def test_rotated_files_are_self_contained_and_sealed(live: Path) -> None:
    _three_files(live)
    archive = archive_path(live, 1, 3)
    header = archive.read_bytes()[18:20]
    assert header == b"\x01\x01"  # rollback mode: no -wal/-shm needed to read it
    seal = read_seal(archive)
    assert seal is not None
    assert (seal["file"], seal["anchor_seq"], seal["last_seq"]) == (archive.name, 0, 3)
    assert verify_journal_file(archive).sealed


def test_the_live_journal_reads_across_rotated_files(live: Path) -> None:
    stored = _three_files(live)
    with Journal(live, TABLE) as journal:
        assert journal.last_seq == 7
        assert list(journal.records()) == stored
        assert [r["seq"] for r in journal.records(since_seq=2)] == [3, 4, 5, 6, 7]
        assert [r["seq"] for r in journal.records(since_seq=5)] == [6, 7]
        journal.rotate()  # live file empty after this one
        (last,) = [journal.last_record_of_type("winning_number")]
        assert last is not None
        assert last["seq"] == 7
        assert journal.last_record_of_type("nothing") is None
        assert list(journal.records()) == stored


def test_a_rotation_during_iteration_loses_nothing(live: Path) -> None:
    with Journal(live, TABLE) as journal:
        journal.append([rec(n=i) for i in range(1200)])
        _publish_all(journal)
        seen = []
        for record in journal.records():
            seen.append(record["seq"])
            if record["seq"] == 10:
                assert journal.rotate() is not None
                journal.append([rec(n=-1)])
        assert seen == list(range(1, 1202))


def test_rotation_waits_for_the_outbox(live: Path) -> None:
    with Journal(live, TABLE) as journal:
        journal.append([rec(), rec()])
        journal.mark_published(1)
        assert journal.rotate() is None  # seq 2 is still to be published from this file
        assert list_archives(live) == []
        _publish_all(journal)
        assert journal.rotate() is not None
        assert journal.rotate() is None  # nothing to rotate


def test_append_rotates_by_age_at_a_round_boundary(live: Path) -> None:
    with Journal(live, TABLE, rotate_days=1) as journal:
        journal.append([rec("round_open", day=0)])
        journal.append([rec(day=0.5)])
        _publish_all(journal)
        journal.append([rec(day=1.2)])  # past a day, but not a round boundary
        assert list_archives(live) == []
        _publish_all(journal)
        (opened,) = journal.append([rec("round_open", day=1.5)])
        assert [a.path.name for a in list_archives(live)] == ["ROU-01.000001-000003.sqlite"]
        assert opened["seq"] == 4
        assert journal.first_live_seq == 4
        _publish_all(journal)
        journal.append([rec(day=3.6)])  # twice the age: rotated wherever it is
        assert len(list_archives(live)) == 2
    assert verify_chain([live.parent])[0].count == 5


def test_append_rotates_by_size(live: Path) -> None:
    with Journal(live, TABLE, rotate_bytes=64 * 1024) as journal:
        for i in range(60):
            journal.append([rec("round_open", n=i, pad="x" * 2000)])
            _publish_all(journal)
        archives = list_archives(live)
        assert len(archives) >= 1
        assert all(a.path.stat().st_size < 80 * 1024 for a in archives)
        assert [r["seq"] for r in journal.records()] == list(range(1, 61))
    assert verify_chain([live.parent])[0].count == 60


def test_restart_after_rotation_keeps_the_chain(live: Path) -> None:
    _three_files(live)
    with Journal(live, TABLE) as journal:
        _publish_all(journal)
        journal.rotate()
    # The live file is new and empty: its anchor is in its meta table.
    with Journal(live, TABLE) as journal:
        assert journal.last_seq == 7
        (record,) = journal.append([rec()])
        assert record["seq"] == 8
    assert verify_chain([live.parent])[0].count == 8


def test_a_crash_between_rename_and_new_file_keeps_the_chain(live: Path) -> None:
    _three_files(live)
    with Journal(live, TABLE) as journal:
        _publish_all(journal)
        journal.rotate()
    live.unlink()  # as if the crash came before the new live file existed
    seal_path(live).unlink(missing_ok=True)
    with Journal(live, TABLE) as journal:
        assert journal.last_seq == 7
        (record,) = journal.append([rec()])
    assert (record["seq"], record["prev_hash"]) == (
        8,
        verify_chain([live.parent])[0].files[2].last_hash,
    )
    assert verify_chain([live.parent])[0].count == 8


def test_runner_recovery_sees_records_of_rotated_files(live: Path) -> None:
    """A fault latched before a rotation is still latched after a restart."""
    t = ts(0)
    with Journal(live, "T1") as journal:
        runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {}, source="test"),
            journal=journal,
            clock=ManualClock(0.0),
        )
        for event in [
            RoundOpen(ts=t, device="wheel"),
            BallLaunched(ts=t, device="wheel", rotor_direction="cw"),
            BetsClosed(ts=t, device="wheel"),
            WinningNumber(ts=t, device="wheel", number=5, revolutions=6, ball_direction="ccw"),
            Fault(ts=t, device="wheel", code="ball_sensor"),
        ]:
            runner.committer.handle(event)
        _publish_all(journal)
        assert journal.rotate() is not None
    with Journal(live, "T1") as journal:
        runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {}, source="test"),
            journal=journal,
            clock=ManualClock(0.0),
        )
        assert runner.restart.recover() == 5
        assert runner.latches.journaled.get("wheel") == {"ball_sensor"}


# -- verifying a set ------------------------------------------------------------------------------


def test_a_missing_middle_file_is_a_broken_link(live: Path) -> None:
    _three_files(live)
    archive_path(live, 4, 5).unlink()
    with pytest.raises(ChainBrokenError) as info:
        verify_chain([live.parent])
    assert info.value.seq == 4
    assert "missing" in info.value.why


def test_a_missing_first_file_is_detected_in_a_folder(live: Path) -> None:
    _three_files(live)
    archive_path(live, 1, 3).unlink()
    seal_path(archive_path(live, 1, 3)).unlink()
    with pytest.raises(ChainBrokenError, match="before seq 4 are missing"):
        verify_chain([live.parent])
    # Given explicitly, a partial set is fine and says so.
    (report,) = verify_chain([archive_path(live, 4, 5), live])
    assert report.partial_start
    assert report.first_seq == 4


def test_a_substituted_file_breaks_the_link(live: Path, tmp_path: Path) -> None:
    _three_files(live)
    other = tmp_path / "other" / "ROU-01.sqlite"
    other.parent.mkdir()
    with Journal(other, TABLE) as journal:
        journal.append([rec(n=1), rec(n=2), rec(n=99)])
        _publish_all(journal)
        journal.rotate()
    # Swap in a different (self-consistent, sealed) file with the same name and range.
    for made in (archive_path(other, 1, 3), seal_path(archive_path(other, 1, 3))):
        os.replace(made, live.parent / made.name)
    with pytest.raises(ChainBrokenError) as info:
        verify_chain([live.parent])
    assert info.value.seq == 4
    assert "does not continue" in info.value.why


def test_overlapping_files_are_a_broken_link(live: Path, tmp_path: Path) -> None:
    _three_files(live)
    other = tmp_path / "other" / "ROU-01.sqlite"
    other.parent.mkdir()
    with Journal(other, TABLE) as journal:
        journal.append([rec(n=1), rec(n=2), rec(n=3), rec(n=4)])
        _publish_all(journal)
        journal.rotate()
    for made in (archive_path(other, 1, 4), seal_path(archive_path(other, 1, 4))):
        os.replace(made, live.parent / made.name)
    for gone in (archive_path(live, 1, 3), seal_path(archive_path(live, 1, 3))):
        gone.unlink()
    with pytest.raises(ChainBrokenError, match="overlap") as info:
        verify_chain([live.parent])
    assert info.value.seq == 4


def test_a_rotated_file_without_its_seal_or_renamed_is_refused(live: Path) -> None:
    _three_files(live)
    archive = archive_path(live, 4, 5)
    seal_path(archive).unlink()
    with pytest.raises(JournalIntegrityError, match="no seal"):
        verify_file(archive)


def test_cli_verify_shape(live: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _three_files(live)
    capsys.readouterr()
    parser = argparse.ArgumentParser()
    add_verify_arguments(parser)
    assert run_verify(parser.parse_args([str(live)])) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "OK: 2 records, hash chain intact"
    assert "sealed" in out
    assert run_verify(parser.parse_args([str(live.parent)])) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK: 7 records, hash chain intact (ROU-01.sqlite: 3 file(s), seq 1-7)")


# -- retention ------------------------------------------------------------------------------------


def _days_of_files(live: Path, days: int, *, publish: bool = True) -> None:
    """One rotated file per day, each opened by a round."""
    with Journal(live, TABLE, rotate_days=1) as journal:
        for day in range(days):
            journal.append([rec("round_open", day=day), rec(day=day + 0.1)])
            if publish:
                _publish_all(journal)


def test_prune_deletes_only_published_files_past_retention(live: Path) -> None:
    _days_of_files(live, 10)
    assert len(list_archives(live)) == 9
    removed = prune(live, retention_days=5, now=DAY0 + timedelta(days=10))
    # Files of days 0-3 hold records older than 5 days (day 4's newest is 4.1 > 5 days ago? no).
    assert [p.name for p in removed] == [
        archive_path(live, 2 * d + 1, 2 * d + 2).name for d in range(5)
    ]
    assert not any(p.exists() for p in removed)
    assert not any(seal_path(p).exists() for p in removed)
    entries = read_retired(live)
    assert [(e["first_seq"], e["last_seq"]) for e in entries] == [
        (1, 2),
        (3, 4),
        (5, 6),
        (7, 8),
        (9, 10),
    ]
    # What is left still verifies as one chain, its start accounted for by the log.
    (report,) = verify_chain([live.parent])
    assert (report.first_seq, report.last_seq, report.retired_through) == (11, 20, 10)
    with Journal(live, TABLE) as journal:
        assert next(r["seq"] for r in journal.records()) == 11


def test_prune_never_deletes_unpublished_records(live: Path) -> None:
    _days_of_files(live, 3)
    archive = archive_path(live, 1, 2)
    conn = sqlite3.connect(archive)
    with conn:
        conn.execute("UPDATE records SET published = 0 WHERE seq = 2")
    conn.close()
    assert prune(live, retention_days=1, now=DAY0 + timedelta(days=400)) == []
    assert archive.exists()


def test_prune_keeps_files_with_a_recent_record(live: Path) -> None:
    _days_of_files(live, 3)
    assert prune(live, retention_days=90, now=DAY0 + timedelta(days=60)) == []
    assert len(list_archives(live)) == 2


def test_the_journal_prunes_after_rotating_by_its_newest_record(live: Path) -> None:
    with Journal(live, TABLE, rotate_days=1, retention_days=90) as journal:
        for day in range(0, 200, 10):
            journal.append([rec("round_open", day=day)])
            _publish_all(journal)
        # The wall clock (2026 or later) is past everything; the newest record (day 190)
        # is what bounds the deletion.
        first_kept = min(a.first_seq for a in journal.archives)
        # Pruned at the rotation before day 190's record: now = day 180, cutoff day 90.
        assert first_kept == 10
    (report,) = verify_chain([live.parent])
    assert report.retired_through == 9


def test_removing_the_retirement_log_is_detected(live: Path) -> None:
    _days_of_files(live, 4)
    prune(live, retention_days=1, now=DAY0 + timedelta(days=30))
    retired_log_path(live).unlink()
    with pytest.raises(ChainBrokenError, match="missing"):
        verify_chain([live.parent])


def test_a_tampered_retirement_log_is_detected(live: Path) -> None:
    _days_of_files(live, 4)
    prune(live, retention_days=1, now=DAY0 + timedelta(days=30))
    log = retired_log_path(live)
    text = log.read_text(encoding="utf-8")
    log.write_text(text.replace('"first_seq":3', '"first_seq":2'), encoding="utf-8")
    with pytest.raises(JournalIntegrityError, match="does not continue"):
        verify_chain([live.parent])


def test_a_stray_seal_from_a_crashed_rotation_is_tidied(live: Path) -> None:
    _days_of_files(live, 2)
    stray = seal_path(archive_path(live, 3, 9))
    stray.write_text("{}\n", encoding="utf-8")
    prune(live, retention_days=90, now=DAY0)
    assert not stray.exists()


def test_genesis_is_the_start_of_an_unrotated_journal(live: Path) -> None:
    with Journal(live, TABLE) as journal:
        (first,) = journal.append([rec()])
    assert first["prev_hash"] == GENESIS_HASH
    (report,) = verify_chain([live.parent])
    assert (report.first_seq, report.count, report.partial_start) == (1, 1, False)


def test_no_journal_files(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="no journal files"):
        verify_chain([tmp_path])


def test_an_open_journal_keeps_one_descriptor_of_its_live_file(live: Path) -> None:
    """Retention reads the clock records through the journal's own connection: a second
    connection to the open live file kept its descriptor after a start's prune (SQLite holds it
    while the file's locks are held) — one more per table, and 100 tables in one process ran out
    of the 1,024 descriptors ``select`` can watch."""
    for _ in range(2):
        with Journal(live, TABLE, rotate_days=1, retention_days=90) as journal:
            runner = TableRunner(
                table_id=TABLE,
                engine=build_engine(TABLE, "roulette", {}, source="test"),
                journal=journal,
                clock=SYSTEM_CLOCK,
                clock_watch=ClockWatch(max_step=120),
            )
            runner.restart.recover()
            runner.restart.power_on()
            assert _descriptors_of(live) == 1
            runner.restart.power_off("shutdown")


def _descriptors_of(path: Path) -> int:
    found = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor is gone by now
            found += os.readlink(f"/proc/self/fd/{fd}") == str(path)
    return found
