"""A baccarat table end to end: a whole 8-deck shoe, with real parts only.

Simulated shuffler on a TCP port (pyserial ``socket://``), simulated barcode shoe as a USB HID
keyboard behind a simulated pyusb backend (``usb.backend.IBackend``), the real drivers, engine,
journal and publisher, a real Mosquitto, and a simulated dealer pulling cards the way a dealer
does (one at a time, until the screen says the coup is complete).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.lab.dealer import DealerPace
from tablectl.controller.lab.tables import start_card_table
from tablectl.controller.service.app import open_table
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(180)]

POINTS = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}


def _points(cards: list[str]) -> int:
    return sum(POINTS.get(c[0], int(c[0]) if c[0].isdigit() else 0) for c in cards) % 10


def _banker_draws(banker: int, player_third: str | None) -> bool:
    """seed-000 §4.3, written out again independently of
    tablectl.controller.games.cards.baccarat."""
    if player_third is None:
        return banker <= 5
    third = _points([player_third])
    table = {
        0: range(10),
        1: range(10),
        2: range(10),
        3: [0, 1, 2, 3, 4, 5, 6, 7, 9],
        4: [2, 3, 4, 5, 6, 7],
        5: [4, 5, 6, 7],
        6: [6, 7],
    }
    return third in table.get(banker, [])


def _check_coup(result: dict[str, Any]) -> None:
    player, banker = result["player"]["cards"], result["banker"]["cards"]
    p2, b2 = _points(player[:2]), _points(banker[:2])
    natural = p2 >= 8 or b2 >= 8
    assert result["natural"] == natural
    if natural:
        assert (len(player), len(banker)) == (2, 2)
    else:
        assert len(player) == (3 if p2 <= 5 else 2)
        third = player[2] if len(player) == 3 else None
        assert len(banker) == (3 if _banker_draws(b2, third) else 2)
    p, b = _points(player), _points(banker)
    assert (result["player"]["total"], result["banker"]["total"]) == (p, b)
    assert result["winner"] == ("player" if p > b else "banker" if b > p else "tie")
    assert result["player_pair"] == (player[0][0] == player[1][0])
    assert result["banker_pair"] == (banker[0][0] == banker[1][0])


async def test_a_full_shoe_one_outcome_per_coup_and_a_reconciled_shoe_end(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    prefix = "it"
    async with (
        Subscriber(mosquitto.host, mosquitto.port, f"{prefix}/BAC-E2E/#") as sub,
        asyncio.TaskGroup() as group,
    ):
        sim = await start_card_table(
            group,
            tmp_path / "bac.sqlite",
            table_id="BAC-E2E",
            seed=5,
            speed=200,
            prefix=prefix,
            mqtt_url=mosquitto.url,
        )
        async with open_table(
            sim.config,
            broker=(mosquitto.host, mosquitto.port),
            driver_kwargs=sim.driver_kwargs,
        ) as app:
            table = group.create_task(app.runner.run())
            dealer = sim.dealer(app, pace=DealerPace(betting=0.0, between_rounds=0.0))
            try:
                async with asyncio.timeout(150):
                    await dealer.run()
                    await sub.wait_for(
                        lambda m: m.topic.endswith("/events") and m.json()["type"] == "shoe_end",
                        timeout=10,
                    )
            finally:
                table.cancel()
                for task in group._tasks:
                    task.cancel()
    events = {p["seq"]: p for p in sub.payloads(f"{prefix}/BAC-E2E/events")}
    records = [events[seq] for seq in sorted(events)]
    assert sorted(events) == list(range(1, max(events) + 1)), "gapless seq"
    outcomes = [r for r in records if r["type"] == "outcome"]
    rounds = [r for r in records if r["type"] == "round_open"]
    assert len(outcomes) == len(rounds) == dealer.rounds
    assert len(outcomes) > 60  # 416 cards, ≤ 6 per coup, 14 behind the cut card
    for outcome in outcomes:
        assert outcome["status"] == "settled", outcome
        _check_coup(outcome["result"])
    verdicts = [r["code"] for r in records if r["type"] == "verdict"]
    assert verdicts == []
    (shoe_end,) = [r for r in records if r["type"] == "shoe_end"]
    assert shoe_end["shuffler_count"] == 416  # R6: the shuffler's count ...
    assert shoe_end["cards_read"] == 416  # ... reconciled against the cards actually read
    assert shoe_end["reconciled"] is True
    assert shoe_end["rounds"] == len(outcomes)
    shuffles = [r for r in records if r["type"] == "shuffle_completed"]
    assert [s["cards"] for s in shuffles] == [416]
    # Every card left the shoe as the simulator dealt it; the burned ones are published withheld
    # (seed-000 BAC-E6: burned "without anyone seeing them"): the shown first card's value of them.
    cards = [r["card"] for r in records if r["type"] == "card"]
    dealt = list(sim.shoe.cards)
    burn = min(10, _points([dealt[0]]) or 10)
    assert cards[0] == dealt[0]
    assert cards[1 : 1 + burn] == [None] * burn
    assert cards[1 + burn :] == dealt[1 + burn :]
