"""A poker room's Hold'em table end to end: a dealer who misdeals, and the flags on the broker.

The simulated shuffler on a TCP port and the simulated barcode shoe as a USB HID keyboard (the
lab's scripted table: real drivers, engine, journal, publisher, a real Mosquitto). The dealer's
buttons (open the hand, close each betting round) go to the table as a dealer screen sends them;
the cards come out of the simulated shoe one pull at a time. The hand: one hole card too many
(seed-002 G 33 M6, L87), a 4-card flop (seed-000 PR-8.4.1, L593), no burn before the river
(PR-8.4.2, L594) — three flags with stable codes, a settled hand record with no winner, and no
hole card or burn ever on the broker (seed-002 T 35).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tablectl.controller.core.events import BetsClosed, Confirm, RoundOpen
from tablectl.controller.lab.tables import ScriptedTableSim, start_scripted_table
from tablectl.controller.service.app import TableApp, open_table
from tablectl.drivers.shuffler.driver import ShufflerDriver
from tests.support.live_journal import read_rows
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.broker, pytest.mark.timeout(90)]

TABLE = "PR-E2E"
PREFIX = f"it/{TABLE}"


class MisdealingDealer:
    """The dealer's hands: pulls from the simulated shoe, presses on the dealer screen."""

    def __init__(self, app: TableApp, sim: ScriptedTableSim) -> None:
        self.app = app
        self.sim = sim

    async def shuffle(self) -> None:
        runner = self.app.runner
        shuffler = next(d for d in runner.drivers if isinstance(d, ShufflerDriver))
        await wait_until(lambda: shuffler.available, 10, what="the shuffler's link")
        mark = runner.journal.last_seq
        await shuffler.start_shuffle(1)
        await wait_until(
            lambda: any(r.type == "shuffle_completed" for r in runner.journal.records(mark)),
            10,
            what="the shuffle",
        )

    async def pull(self, n: int) -> None:
        """Pull ``n`` cards, one at a time, each read (journaled) before the next."""
        journal = self.app.runner.journal
        for _ in range(n):
            before = journal.last_seq
            self.sim.shoe.request(1)
            await wait_until(lambda: journal.last_seq > before, 10, what="the card's read")  # noqa: B023

    async def press(self, event: RoundOpen | BetsClosed | Confirm) -> None:
        await self.app.runner.queue.submit(event)


async def test_the_misdeals_a_shoe_sees_are_flagged_on_the_broker(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    async with (
        Subscriber(mosquitto.host, mosquitto.port, f"{PREFIX}/#") as sub,
        asyncio.TaskGroup() as group,
    ):
        sim = await start_scripted_table(
            group,
            tmp_path / "pr.sqlite",
            game="poker_room_holdem",
            table_id=TABLE,
            prefix="it",
            mqtt_url=mosquitto.url,
        )
        async with open_table(
            sim.config, broker=(mosquitto.host, mosquitto.port), driver_kwargs=sim.driver_kwargs
        ) as app:
            task = group.create_task(app.runner.run())
            dealer = MisdealingDealer(app, sim)
            try:
                await dealer.shuffle()
                await dealer.press(RoundOpen())
                await dealer.press(BetsClosed(boxes=(1, 2, 3)))
                await dealer.pull(7)  # six hole cards and one more
                await dealer.press(Confirm())  # pre-flop betting over
                await dealer.pull(4)  # the flop (the extra card was its burn) and a fourth card
                await dealer.press(Confirm())
                await dealer.pull(1)  # the turn (one of the four was its burn)
                await dealer.press(Confirm())
                await dealer.pull(1)  # the river, with no burn
                await dealer.press(Confirm())
                await sub.wait_for(lambda m: m.topic == f"{PREFIX}/outcome", timeout=10)
            finally:
                task.cancel()
                for running in group._tasks:
                    running.cancel()
    events = {p["seq"]: p for p in sub.payloads(f"{PREFIX}/events")}
    records = [events[seq] for seq in sorted(events)]
    assert sorted(events) == list(range(1, max(events) + 1)), "gapless seq"
    flags = [(r["code"], r["rule"]) for r in records if r["type"] == "verdict"]
    assert [code for code, _ in flags] == ["wrong_card_count", "four_card_flop", "missing_burn"]
    assert "G 33 M6 (L87)" in flags[0][1]
    assert flags[1][1] == "seed-000 PR-8.4.1 (L593)"
    assert flags[2][1] == "seed-000 PR-8.4.2 (L594)"

    (outcome,) = [r for r in records if r["type"] == "outcome"]
    assert (outcome["status"], outcome["game"]) == ("settled", "poker_room_holdem")
    result = outcome["result"]
    assert set(result) == {"seats", "hole_cards", "board", "burns", "folded", "returned", "extra"}
    assert result["hole_cards"] == {"box1": 2, "box2": 2, "box3": 2}
    assert [len(result["board"][s]) for s in ("flop", "turn", "river")] == [3, 1, 1]
    assert result["burns"] == 2

    # Face-down cards (hole cards, burns) go out withheld; only the board is ever revealed
    # (T 35). The river, dealt where its burn was due, went out withheld and is revealed as the
    # board by the record.
    cards = [r for r in records if r["type"] == "card"]
    assert len(cards) == 13
    assert all(c["card"] is None for c in cards if c.get("withheld"))
    journaled = _journal_cards(tmp_path / "pr.sqlite")
    faces = [journaled[c["seq"]] for c in cards]
    board = [c for street in ("flop", "turn", "river") for c in result["board"][street]]
    assert board == [*faces[7:10], faces[11], faces[12]]
    assert {c["card"] for c in cards if not c.get("withheld")} == set(faces[7:10]) | {faces[11]}
    assert not set(faces[:7]) & set(board)  # the hole cards and the first burn stay secret
    assert faces[10] not in board  # the fourth flop card, the turn's burn


def _journal_cards(path: Path) -> dict[int, str]:
    """Every journaled card's face by ``seq`` (the journal holds them in full)."""
    rows = read_rows(path, "SELECT seq, body FROM records")
    bodies = [(int(seq), json.loads(body)) for seq, body in rows]
    return {seq: body["card"] for seq, body in bodies if body["type"] == "card"}
