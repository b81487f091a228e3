"""A supervisor's void is bound to its round, and a signed nonce is spent whenever it is seen.

The reproduction of issue 25 #6: a signed void sent during a journal outage was refused before
its nonce was consumed; replayed within the freshness window after the outage, it voided a round
that opened after it. The journal is real; only its ``append`` is gated, as a full disk refuses
it (the end-to-end outage on a real full tmpfs is tests/integration/test_journal_outage.py).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core.events import RoundOpen
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal
from tablectl.controller.mqtt.authority import CommandAuthority
from tablectl.controller.mqtt.security import sign_command
from tablectl.controller.service.runner import TableRunner
from tests.support.clocks import WallClock
from tests.support.journals import GatedJournal

NOW = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
KEY = b"s" * 32
REQUIRED = {"void": frozenset({"supervisor"}), "event": frozenset({"supervisor"})}


def _void(round_id: str | None, nonce: str = "nonce-void-0001") -> bytes:
    payload: dict[str, Any] = {"id": "v1", "reason": "foreign_object"}
    if round_id is not None:
        payload["round"] = round_id
    request = sign_command(
        payload,
        verb="void",
        table="T1",
        role="supervisor",
        key=KEY,
        by="FM-0042",
        ts=NOW,
        nonce=nonce,
    )
    return json.dumps(request).encode()


@pytest.fixture
async def table(tmp_path: Path) -> AsyncIterator[TableRunner]:
    clock = [NOW.timestamp()]
    with GatedJournal(tmp_path / "j.sqlite", "T1") as journal:
        runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {}, source="test"),
            journal=journal,
            clock=WallClock(lambda: clock[0]),
            authority=CommandAuthority({"supervisor": KEY}, REQUIRED, table="T1"),
        )
        task = asyncio.create_task(runner.run())
        try:
            yield runner
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def test_a_void_refused_in_an_outage_cannot_be_replayed_into_a_later_round(
    table: TableRunner,
) -> None:
    journal = table.journal
    assert isinstance(journal, GatedJournal)
    table.committer.handle(RoundOpen(device="wheel"))
    first = table.engine.current_round
    journal.full = True
    await table.step([RoundOpen(device="wheel")])  # a device event: the outage begins
    assert table.state.outage is not None
    sent = _void(first)
    reply = await table.commands.command("void", sent)
    assert reply["code"] == "journal_unavailable"
    journal.full = False
    await asyncio.sleep(0.7)  # the outage watch journals the outage's end (voids round 1)
    assert table.state.outage is None
    table.committer.handle(RoundOpen(device="wheel"))
    later = table.engine.current_round
    assert later not in (None, first)
    # The same bytes again, well within 30 s: spent, whatever round they name.
    reply = await table.commands.command("void", sent)
    assert reply["error"] == "refused: replayed command: nonce already used"
    assert table.engine.current_round == later


async def test_a_void_names_the_round_in_play(table: TableRunner) -> None:
    table.committer.handle(RoundOpen(device="wheel"))
    in_play = table.engine.current_round
    assert in_play is not None
    reply = await table.commands.command("void", _void(None, "nonce-void-0002"))
    assert reply["code"] == "bad_request"
    assert "void needs 'round'" in reply["error"]
    reply = await table.commands.command("void", _void("T1-999999", "nonce-void-0003"))
    assert reply["code"] == "wrong_round"
    assert table.engine.current_round == in_play
    reply = await table.commands.command("void", _void(in_play, "nonce-void-0004"))
    assert reply["ok"], reply
    assert table.engine.current_round is None


async def test_a_refused_signed_nonce_survives_a_restart(tmp_path: Path) -> None:
    """The refusal window's record lists the spent nonces, and a restart re-reads them."""
    path = tmp_path / "j.sqlite"
    sent = _void("T1-999999", "nonce-void-0005")
    for attempt in range(2):
        with Journal(path, "T1") as journal:
            runner = TableRunner(
                table_id="T1",
                engine=build_engine("T1", "roulette", {}, source="test"),
                journal=journal,
                clock=WallClock(lambda: NOW.timestamp() + 1),
                authority=CommandAuthority({"supervisor": KEY}, REQUIRED, table="T1"),
            )
            runner.restart.recover()
            runner.committer.handle(RoundOpen(device="wheel"))
            task = asyncio.create_task(runner.run())
            try:
                reply = await runner.commands.command("void", sent)
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            runner.refusals.flush(force=True)
        if attempt == 0:
            assert reply["code"] == "wrong_round"
        else:
            assert reply["error"] == "refused: replayed command: nonce already used"
