"""The retained ``state`` says how far the outbox is behind (``outbox.pending``, docs/mqtt.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tablectl.controller.core.events import BallLaunched, BetsClosed, RoundOpen
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal
from tablectl.controller.service.runner import TableRunner

TS = "2026-11-30T10:00:00.000000Z"


class _States:
    """The runner's outputs, keeping the ``state`` views."""

    def __init__(self) -> None:
        self.states: list[dict[str, Any]] = []

    def notify(self) -> None:
        pass

    def set_view(self, suffix: str, payload: Mapping[str, Any]) -> None:
        if suffix == "state":
            self.states.append(dict(payload))

    def alarm(self, payload: Mapping[str, Any]) -> None:
        pass

    def set_status(self, extra: Mapping[str, Any]) -> None:
        pass

    def republish(self, records: Sequence[tuple[str, bytes]]) -> bool:
        return False


def test_the_backlog_counts_what_earlier_batches_left_unacknowledged(tmp_path: Path) -> None:
    outputs = _States()
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {}, source="test"),
            journal=journal,
            outputs=outputs,
            clock=lambda: 1_764_496_800.0,
        )
        runner.committer.handle(RoundOpen(ts=TS, device="wheel"))
        # The batch just journaled is not a backlog: it is always unpublished at this point.
        assert outputs.states[-1]["outbox"] == {"pending": 0}
        runner.committer.handle(BallLaunched(ts=TS, device="wheel", rotor_direction="cw"))
        assert outputs.states[-1]["outbox"] == {"pending": 1}  # round_open, never acknowledged
        journal.mark_published(journal.last_seq)  # the broker caught up
        runner.committer.handle(BetsClosed(ts=TS, device="wheel"))
        assert outputs.states[-1]["outbox"] == {"pending": 0}
