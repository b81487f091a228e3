"""Dice tables end to end: a simulated dice unit on a TCP port (pyserial ``socket://``, the serial
reference protocol) or a simulated studio shaker and camera on MQTT → the real driver, engine,
journal and publisher → a real Mosquitto.

Every dice game settles its rolls; a craps point is made across several rolls; a cocked die is a
re-roll with bets standing; Lightning Dice's RNG picks are journaled before the dice drop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.config import parse_config
from tablectl.controller.lab.dice import SimulatedRng, start_dice_table
from tablectl.controller.service.app import open_table
from tablectl.drivers.transports.pubsub import BrokerEndpoint
from tablectl.simulators.dice_studio import FaultSpec, SimDiceStudio, StudioService
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(120)]


async def _play(
    tmp_path: Path,
    mosquitto: MosquittoProcess,
    *,
    game: str,
    faces: Sequence[Sequence[int]],
    outcomes: int,
    faults: Sequence[str] = (),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Run a dice table until ``outcomes`` rounds are published: (outcomes, events) as received."""
    table = f"{game.replace('_', '-').upper()}-E2E"
    async with (
        Subscriber(mosquitto.host, mosquitto.port, f"it/{table}/#") as sub,
        asyncio.TaskGroup() as group,
    ):
        sim = await start_dice_table(
            group,
            tmp_path / f"{game}.sqlite",
            game=game,
            table_id=table,
            speed=20,
            faces=faces,
            faults=faults,
            betting_seconds=2.0,
            prefix="it",
            mqtt_url=mosquitto.url,
        )
        async with open_table(sim.config, broker=(mosquitto.host, mosquitto.port)) as app:
            tasks = [group.create_task(app.runner.run())]
            if game == "lightning_dice":
                rng = SimulatedRng(app.runner, sim.unit, seed=5)
                app.runner.listeners.append(rng.on_record)
                tasks.append(group.create_task(rng.run()))
            try:
                await sub.wait_until(
                    lambda ms: sum(m.topic == f"it/{table}/outcome" for m in ms) >= outcomes,
                    timeout=60,
                )
            finally:
                for task in (*tasks, *group._tasks):
                    task.cancel()
    return sub.payloads(f"it/{table}/outcome")[:outcomes], sub.payloads(f"it/{table}/events")


async def test_sic_bo_settles_a_triple_and_a_big_roll(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    outcomes, _ = await _play(
        tmp_path, mosquitto, game="sic_bo", faces=[(4, 4, 4), (6, 5, 3)], outcomes=2
    )
    results = [o["result"] for o in outcomes]
    assert [o["status"] for o in outcomes] == ["settled", "settled"]
    assert (results[0]["total"], results[0]["triple"], results[0]["big"]) == (12, True, False)
    assert (results[1]["total"], results[1]["big"], results[1]["small"]) == (14, True, False)
    assert sorted(results[1]["dice"]) == [3, 5, 6]


async def test_craps_makes_a_point_across_several_rolls(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    """seed-001 L2751–2757: a come-out 6 sets the point; the game stays in the point phase until
    the point or a 7; a roll in between decides nothing."""
    faces = [(2, 4), (1, 2), (5, 3), (3, 3), (6, 1)]
    outcomes, _ = await _play(tmp_path, mosquitto, game="craps", faces=faces, outcomes=5)
    rolls = [
        (o["result"]["phase"], o["result"]["point"], o["result"]["puck"], o["result"]["decision"])
        for o in outcomes
    ]
    assert rolls == [
        ("come_out", None, "off", "point_set"),
        ("point", 6, "on", None),
        ("point", 6, "on", None),
        ("point", 6, "on", "point_made"),
        ("come_out", None, "off", "natural"),
    ]
    assert [sum(o["result"]["dice"]) for o in outcomes] == [6, 3, 8, 6, 7]


async def test_dice_duel_reads_the_dice_by_colour(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    outcomes, events = await _play(
        tmp_path, mosquitto, game="dice_duel", faces=[(6, 2), (3, 3)], outcomes=2
    )
    dice = [e for e in events if e["type"] == "dice"]
    assert all(e["colors"] == ["red", "blue"] for e in dice)
    assert [(o["result"]["red"], o["result"]["blue"]) for o in outcomes] == [(6, 2), (3, 3)]
    assert [o["result"]["winner"] for o in outcomes] == ["red", "draw"]


async def test_lightning_dice_journals_the_rng_strike_before_the_dice(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    outcomes, events = await _play(
        tmp_path, mosquitto, game="lightning_dice", faces=[(1, 2, 3), (6, 6, 5)], outcomes=2
    )
    kinds = [e["type"] for e in events if e["type"] in ("bets_closed", "rng_draw", "dice")]
    assert kinds[:6] == ["bets_closed", "rng_draw", "dice"] * 2
    for outcome in outcomes:
        result = outcome["result"]
        lightning = {pick["value"]: pick["multiplier"] for pick in result["lightning"]}
        assert result["multiplier"] == lightning.get(result["total"])
        assert all(3 <= value <= 18 for value in lightning)
    assert [o["result"]["total"] for o in outcomes] == [6, 17]


async def test_a_cocked_die_is_a_reroll_with_bets_standing(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    outcomes, events = await _play(
        tmp_path, mosquitto, game="sic_bo", faces=[(1, 1, 2)], faults=["cocked@1=2"], outcomes=1
    )
    invalid = [e for e in events if e["type"] == "roll_invalid"]
    assert [e["code"] for e in invalid] == ["die_cocked"]
    verdicts = [e for e in events if e["type"] == "verdict"]
    assert [v["code"] for v in verdicts] == ["die_cocked"]
    (outcome,) = outcomes
    assert outcome["status"] == "settled"
    assert outcome["result"]["rerolls"] == 1
    assert outcome["result"]["dice"] == [1, 1, 2]
    # One round: the re-roll did not open a new one.
    assert sum(e["type"] == "round_open" for e in events) == 1


async def test_a_studio_table_on_mqtt_settles_rolls_and_rerolls_an_unreadable_one(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    """The second wiring: the shaker and the camera service on the table's own broker, the
    ``mqtt-dice`` driver running the cycle between them (docs/protocols/dice-mqtt.md)."""
    studio = SimDiceStudio(dice=2, seed=9, speed=20, faults=[FaultSpec("unreadable", 2)])
    endpoint = BrokerEndpoint(mosquitto.host, mosquitto.port)
    config = parse_config(
        {
            "table": {"id": "CR-E2E", "game": "craps"},
            "rules": {"min_tumble_seconds": 0.05},
            "mqtt": {"url": mosquitto.url, "topic_prefix": "it"},
            "journal": {"path": str(tmp_path / "craps.sqlite")},
            "devices": [
                {
                    "id": "dice",
                    "driver": "mqtt-dice",
                    "dice": 2,
                    "betting_seconds": 0.3,
                    "shake_seconds": 1.0,
                    "result_seconds": 0.2,
                    "result_timeout": 5.0,
                }
            ],
        },
        "<CR-E2E>",
    )
    async with (
        Subscriber(mosquitto.host, mosquitto.port, "it/CR-E2E/#") as sub,
        asyncio.TaskGroup() as group,
    ):
        service = group.create_task(StudioService(studio, endpoint).run())
        async with open_table(config, broker=(mosquitto.host, mosquitto.port)) as app:
            table = group.create_task(app.runner.run())
            try:
                await sub.wait_until(
                    lambda ms: sum(m.topic == "it/CR-E2E/outcome" for m in ms) >= 3, timeout=60
                )
            finally:
                for task in (table, service, *group._tasks):
                    task.cancel()
    outcomes = sub.payloads("it/CR-E2E/outcome")[:3]
    events = sub.payloads("it/CR-E2E/events")
    assert [o["status"] for o in outcomes] == ["settled"] * 3
    assert all(len(o["result"]["dice"]) == 2 for o in outcomes)
    # The camera could not read shake 2: a re-roll with bets standing, then a result.
    assert [e["code"] for e in events if e["type"] == "roll_invalid"] == ["dice_unreadable"]
    assert sum(o["result"]["rerolls"] for o in outcomes) == 1
    dice = [e for e in events if e["type"] == "dice"]
    assert all(e["device"] == "dice" and e["reader"] == "camera" for e in dice)
