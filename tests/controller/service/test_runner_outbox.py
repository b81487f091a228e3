"""The outbox is handed each commit's rows (no read of the journal on the way out), and the
retained ``state`` says how far it is behind (``outbox.pending``, docs/mqtt.md)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from tablectl.controller.core.events import BallLaunched, BetsClosed, Card, RoundOpen
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import ANCHOR, Committed, Journal, KeyedAnchors
from tablectl.controller.mqtt.outbound import HANDED_RECORDS, Outbound, published_payload
from tablectl.controller.mqtt.topics import Topics
from tablectl.controller.service.runner import TableRunner
from tablectl.drivers.clock import ManualClock

TS = "2026-11-30T10:00:00.000000Z"


class _States:
    """The runner's outputs, keeping the ``state`` views."""

    key: bytes | None = None

    def __init__(self) -> None:
        self.states: list[dict[str, Any]] = []

    def committed(self, committed: Committed, withheld: Collection[int] = ()) -> None:
        pass

    def set_view(self, suffix: str, payload: Mapping[str, Any]) -> None:
        if suffix == "state":
            self.states.append(dict(payload))

    def alarm(self, payload: Mapping[str, Any]) -> None:
        pass

    def set_status(self, extra: Mapping[str, Any]) -> None:
        pass

    def republish(self, payloads: Sequence[bytes]) -> bool:
        return False


def test_the_backlog_counts_what_earlier_batches_left_unacknowledged(tmp_path: Path) -> None:
    outputs = _States()
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {}, source="test"),
            journal=journal,
            outputs=outputs,
            clock=ManualClock(1_764_496_800.0),
        )
        runner.committer.handle(RoundOpen(ts=TS, device="wheel"))
        # The batch just journaled is not a backlog: it is always unpublished at this point.
        assert outputs.states[-1]["outbox"] == {"pending": 0}
        runner.committer.handle(BallLaunched(ts=TS, device="wheel", rotor_direction="cw"))
        assert outputs.states[-1]["outbox"] == {"pending": 1}  # round_open, never acknowledged
        journal.mark_published(journal.last_seq)  # the broker caught up
        runner.committer.handle(BetsClosed(ts=TS, device="wheel"))
        assert outputs.states[-1]["outbox"] == {"pending": 0}


def test_the_runner_hands_every_row_of_each_commit_to_the_outbox_as_the_file_has_it(
    tmp_path: Path,
) -> None:
    outbound = Outbound(Topics("casino", "T1"))
    anchors = KeyedAnchors(b"k" * 32, every=3)
    with Journal(tmp_path / "j.sqlite", "T1", anchors=anchors) as journal:
        runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {}, source="test"),
            journal=journal,
            outputs=outbound,
            clock=ManualClock(1_764_496_800.0),
        )
        runner.committer.handle(RoundOpen(ts=TS, device="wheel"))
        runner.committer.handle(BallLaunched(ts=TS, device="wheel", rotor_direction="cw"))
        runner.committer.journal_records([{"type": "power_on", "ts": TS}], raising=True)
        # A fresh outbox reads the file first (a start's backlog, written by no runner of it).
        assert outbound.handed(100, after=0) is None
        outbound.read_file(exhausted=True)
        handed = outbound.handed(100, after=0)
        assert handed == journal.unpublished_payloads(100, after=0)
        # The anchor the third record made due was chained in the same commit: handed too.
        assert [kind for _, kind, _ in handed or []] == [
            "round_open",
            "ball_launched",
            "power_on",
            ANCHOR,
        ]


def test_the_outbox_reads_the_file_for_what_it_was_not_handed() -> None:
    outbound = Outbound(Topics("casino", "T1"))
    assert outbound.handed(10, after=0) is None  # fresh: the file first
    outbound.read_file(exhausted=True)
    assert outbound.handed(10, after=0) == []
    outbound.committed(Committed([], [(1, "a", b"1"), (2, "b", b"2")]))
    assert outbound.handed(1, after=0) == [(1, "a", b"1")]
    assert outbound.handed(10, after=1) == [(2, "b", b"2")]  # 1 acknowledged: dropped
    outbound.committed(Committed([], [(4, "d", b"4")]))  # 3 was written without the runner
    assert outbound.handed(10, after=2) is None
    outbound.read_file(exhausted=True)
    assert outbound.handed(10, after=4) == []
    # Told of a record it was not handed (a time-based anchor): the file, until read through.
    outbound.notify()
    assert outbound.handed(10, after=4) is None
    outbound.read_file(exhausted=False)  # more than one read's worth
    assert outbound.handed(10, after=4) is None
    outbound.read_file(exhausted=True)
    assert outbound.handed(10, after=4) == []
    # A broker away long: the oldest handed rows are dropped, and read from the file instead.
    outbound.committed(Committed([], [(seq, "x", b"") for seq in range(5, 6 + HANDED_RECORDS)]))
    assert outbound.handed(10, after=4) is None
    outbound.read_file(exhausted=True)
    assert [seq for seq, _, _ in outbound.handed(10, after=5) or []] == list(range(6, 16))


def test_a_card_dealt_face_down_is_handed_withheld_as_decided_with_its_batch(
    tmp_path: Path,
) -> None:
    """The runner decides the hole card goes face down once, with the batch; the outbox is
    handed it withheld, byte for byte what it would publish from the file."""
    outbound = Outbound(Topics("casino", "BJ-1"))
    with Journal(tmp_path / "j.sqlite", "BJ-1") as journal:
        runner = TableRunner(
            table_id="BJ-1",
            engine=build_engine(
                "BJ-1", "blackjack", {"boxes": 1, "hole_card": "scanned"}, source="test"
            ),
            journal=journal,
            outputs=outbound,
            clock=ManualClock(1_764_496_800.0),
        )
        outbound.handed(100, after=0)
        outbound.read_file(exhausted=True)
        for event in (RoundOpen(), BetsClosed(), *(Card(card=c) for c in ("TS", "6D", "9H"))):
            runner.committer.handle(event)
        [hole] = runner.committer.handle(Card(card="QC"))
        assert (hole["card"], hole["face_down"]) == ("QC", True)  # journaled in full
        handed = {seq: payload for seq, _, payload in outbound.handed(100, after=0) or []}
        stored = journal.unpublished_payloads(100, after=0)
        assert handed == {seq: published_payload(kind, body) for seq, kind, body in stored}
        assert b"QC" not in handed[hole.seq]
        assert b'"withheld":true' in handed[hole.seq]
        changed = [seq for seq, _, body in stored if handed[seq] != body]
        assert changed == [hole.seq]  # every other record goes out as stored
