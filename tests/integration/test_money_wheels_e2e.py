"""Money wheels end to end: a simulated big-wheel sensor on a TCP port (pyserial ``socket://``),
spun by the presenter once bets close (and, for a wheel with an RNG overlay, once the lab's studio
RNG has drawn) → the real driver, engine, journal and publisher → a real Mosquitto.

Wheelbet's "00" is published as the string "00" (contracts §4.3, seed-001 L4345); Spin & Win's 0 and
36 carry their colour and bet facts (L3971–3977); Mega Wheel's lucky number (L3959) and Music
Wheel's bonus sector (L4339) are journaled after bets close and before the wheel is set spinning,
and each outcome says whether its overlay applies.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.engines import load_rules
from tablectl.controller.lab.wheels import start_money_wheel_table
from tablectl.controller.service.app import open_table
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(120)]


async def _play(
    tmp_path: Path,
    mosquitto: MosquittoProcess,
    *,
    game: str,
    labels: Sequence[str] = (),
    outcomes: int,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """Run a wheel table until ``outcomes`` rounds are published, the wheel stopping on
    ``labels`` (the first sector of each, in the preset layout; seeded after them):
    (outcomes, events, layout) as received."""
    table = f"{game.replace('_', '-').upper()}-E2E"
    async with (
        Subscriber(mosquitto.host, mosquitto.port, f"it/{table}/#") as sub,
        asyncio.TaskGroup() as group,
    ):
        layout = list(load_rules(game).segments)
        sim = await start_money_wheel_table(
            group,
            tmp_path / f"{game}.sqlite",
            game=game,
            table_id=table,
            stops=[layout.index(label) for label in labels],
            prefix="it",
            mqtt_url=mosquitto.url,
        )
        async with open_table(sim.config, broker=(mosquitto.host, mosquitto.port)) as app:
            tasks = [group.create_task(app.runner.run())]
            rng = sim.rng(app, seed=5)
            if rng is not None:
                tasks.append(group.create_task(rng.run()))
            tasks.append(group.create_task(sim.presenter(app, rng=rng).run()))
            try:
                await sub.wait_until(
                    lambda ms: sum(m.topic == f"it/{table}/outcome" for m in ms) >= outcomes,
                    timeout=60,
                )
            finally:
                for task in (*tasks, *group._tasks):
                    task.cancel()
    found = sub.payloads(f"it/{table}/outcome")[:outcomes]
    return found, sub.payloads(f"it/{table}/events"), layout


async def test_wheelbet_publishes_00_as_the_string_00(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    outcomes, events, layout = await _play(
        tmp_path, mosquitto, game="wheelbet", labels=["00", "17"], outcomes=2
    )
    assert [o["status"] for o in outcomes] == ["settled", "settled"]
    zero, seventeen = (o["result"] for o in outcomes)
    # contracts §4.3: "00" is the string "00", never 0; green, neither even nor odd (L4345, L4389).
    assert (zero["segment"], zero["number"], zero["color"]) == ("00", "00", "green")
    assert (zero["parity"], zero["dozen"], zero["row"]) == (None, None, None)
    assert zero["index"] == layout.index("00")
    # L4363 dozens, L4385 rows (17: row II).
    assert (seventeen["number"], seventeen["color"], seventeen["parity"]) == (17, "black", "odd")
    assert (seventeen["dozen"], seventeen["row"]) == (2, 2)
    segments = [e for e in events if e["type"] == "segment"]
    assert [e["index"] for e in segments[:2]] == [layout.index("00"), layout.index("17")]


async def test_spin_and_win_settles_its_zero_and_36(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    outcomes, _, _ = await _play(
        tmp_path, mosquitto, game="spin_and_win", labels=["0", "36"], outcomes=2
    )
    zero, top = (o["result"] for o in outcomes)
    assert (zero["number"], zero["color"], zero["parity"], zero["dozen"]) == (
        0,
        "green",
        None,
        None,
    )
    assert (top["number"], top["color"], top["parity"], top["dozen"], top["row"]) == (
        36, "red", "even", 3, 3,
    )  # fmt: skip


def _kinds(events: list[dict[str, Any]]) -> list[str]:
    kept = ("bets_closed", "rng_draw", "wheel_spin", "segment")
    return [e["type"] for e in events if e["type"] in kept]


async def test_mega_wheel_draws_the_lucky_number_before_the_wheel_stops(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    outcomes, events, _ = await _play(tmp_path, mosquitto, game="mega_wheel", outcomes=3)
    # seed-001 L3959, §2.2 (d): the lucky number is committed after bets close, before the stop.
    assert _kinds(events)[:12] == ["bets_closed", "rng_draw", "wheel_spin", "segment"] * 3
    assert [e["type"] for e in events if e["type"] == "verdict"] == []
    for outcome in outcomes:
        result = outcome["result"]
        lucky = result["rng"]
        assert outcome["status"] == "settled"
        assert lucky["kind"] == "lucky_number"
        assert lucky["index"] is None  # a number: every sector showing it
        assert 1 <= lucky["multiplier"] <= 500  # L3963: "odds up to x500"
        assert lucky["applies"] is (result["segment"] == lucky["segment"])


async def test_music_wheel_takes_the_bonus_sector_before_the_spin(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    outcomes, events, layout = await _play(tmp_path, mosquitto, game="music_wheel", outcomes=3)
    # L4339: "After the betting round and before start of the spin".
    assert _kinds(events)[:12] == ["bets_closed", "rng_draw", "wheel_spin", "segment"] * 3
    draws = [e for e in events if e["type"] == "rng_draw"]
    for outcome, draw in zip(outcomes, draws, strict=False):
        bonus = outcome["result"]["rng"]
        lit = draw["numbers"][0]["value"]
        assert bonus["kind"] == "bonus_sector"
        assert bonus["segment"] == layout[lit]
        # C26: one sector for 16 and 48, every sector of the number otherwise.
        assert bonus["index"] == (lit if layout[lit] in ("16", "48") else None)
        landed = (outcome["result"]["segment"], outcome["result"]["index"])
        hit = landed[1] == lit if bonus["index"] is not None else landed[0] == bonus["segment"]
        assert bonus["applies"] is hit
