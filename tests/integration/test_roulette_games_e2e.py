"""Lightning Roulette and Double Ball Roulette end to end: a simulated SS2 wheel on a TCP port
(pyserial ``socket://``, the SS2 wire protocol) → the real driver, engine, journal and publisher →
a real Mosquitto.

Lightning (seed-001 L115): the lab's studio RNG strikes once bets close, before the ball settles;
the outcome carries the round's lightning numbers and the winning number's multiplier. Double Ball
(seed-001 L119): the wheel reports one ball; the second reaches the table from a simulated ball
reader as ``cmd/event`` over the same broker (docs/games/roulette.md, "Double Ball Roulette").

The wheel runs its own cycle at 5x (the RNG has the wheel's "no more bets" phase, about 1 s, to
strike, and the reader the rest of the spin): every wait is for a condition, with a deadline.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.lab.roulette import (
    SecondBallReader,
    command_sender,
    lightning_picker,
    lightning_rng,
    start_roulette_game,
)
from tablectl.controller.service.app import TableApp, open_table
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(120)]

SPEED = 5.0


async def _play(
    tmp_path: Path,
    mosquitto: MosquittoProcess,
    *,
    game: str,
    table: str,
    numbers: Sequence[int],
    outcomes: int,
    helper: Callable[[TableApp], Any],
    faults: Sequence[str] = (),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Any]:
    """Run ``game`` until ``outcomes`` rounds are published: (outcomes, events, helper)."""
    async with (
        Subscriber(mosquitto.host, mosquitto.port, f"it/{table}/#") as sub,
        asyncio.TaskGroup() as group,
    ):
        sim = await start_roulette_game(
            group,
            tmp_path / f"{table}.sqlite",
            game=game,
            table_id=table,
            speed=SPEED,
            numbers=numbers,
            faults=faults,
            prefix="it",
            mqtt_url=mosquitto.url,
        )
        async with open_table(sim.config, broker=(mosquitto.host, mosquitto.port)) as app:
            made = helper(app)
            app.runner.listeners.append(made.on_record)
            tasks = [group.create_task(app.runner.run()), group.create_task(made.run())]
            try:
                await sub.wait_until(
                    lambda ms: sum(m.topic == f"it/{table}/outcome" for m in ms) >= outcomes,
                    timeout=90,
                )
            finally:
                for task in (*tasks, *group._tasks):
                    task.cancel()
    found = sub.payloads(f"it/{table}/outcome")[:outcomes]
    return found, sub.payloads(f"it/{table}/events"), made


async def test_lightning_roulette_pays_the_drawn_multiplier_on_a_lightning_number(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    """Seed-001 L115, seed-000 L255–265: the draw comes between bets closed and the result; the
    result carries the draw and the straight-up multiplier of the winning number."""
    preview = lightning_picker(seed=5)  # the RNG's draws, in order
    draws = [preview.strike() for _ in range(2)]
    hit = draws[0].numbers[0]
    miss = next(n for n in range(37) if n not in {p.value for p in draws[1].numbers})
    assert isinstance(hit.value, int)
    outcomes, events, rng = await _play(
        tmp_path,
        mosquitto,
        game="lightning_roulette",
        table="LR-E2E",
        numbers=[hit.value, miss],
        outcomes=2,
        helper=lambda app: lightning_rng(app.runner, seed=5),
    )
    assert [o["status"] for o in outcomes] == ["settled", "settled"]
    assert [o["game"] for o in outcomes] == ["lightning_roulette"] * 2
    results = [o["result"] for o in outcomes]
    assert [r["number"] for r in results] == [hit.value, miss]
    assert [r["multiplier"] for r in results] == [hit.multiplier, None]
    assert [r["lightning"] for r in results] == [
        [{"value": p.value, "multiplier": p.multiplier} for p in draw.numbers] for draw in draws
    ]
    assert all(r["revolutions"] >= 4 for r in results)
    # Journal order: each round's draw after its close of bets and before its result.
    kinds = [
        e["type"] for e in events if e["type"] in ("bets_closed", "rng_draw", "winning_number")
    ]
    assert kinds[:6] == ["bets_closed", "rng_draw", "winning_number"] * 2
    assert rng.strikes >= 2


async def test_double_ball_roulette_settles_both_balls_one_from_the_wheel_one_by_command(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    """Seed-001 L119–177: two balls a spin, either order; both on one number is the "two balls
    on any number" bet (L155), both red the external red bet (L141)."""
    outcomes, events, reader = await _play(
        tmp_path,
        mosquitto,
        game="double_ball_roulette",
        table="DB-E2E",
        numbers=[17, 5],
        outcomes=2,
        helper=lambda app: SecondBallReader(
            command_sender(app.config, mosquitto.host, mosquitto.port), numbers=[17, 32]
        ),
    )
    assert [o["status"] for o in outcomes] == ["settled", "settled"]
    first, second = (o["result"] for o in outcomes)
    assert first["numbers"] == [17, 17]
    assert first["same_number"] is True
    assert (first["both_color"], first["both_parity"], first["both_column"]) == ("black", "odd", 2)
    assert second["numbers"] == [5, 32]
    assert (second["same_number"], second["both_color"], second["red_and_black"]) == (
        False,
        "red",
        False,
    )
    # Ball 1 is the wheel's (with its revolutions), ball 2 the reader's command (manual).
    assert all(r["per_ball"][0]["revolutions"] >= 4 for r in (first, second))
    balls = [e for e in events if e["type"] == "winning_number"]
    assert [(e.get("ball"), e.get("manual", False)) for e in balls[:4]] == [
        (2, True),
        (None, False),
    ] * 2
    assert all(reply is not None and reply["ok"] for reply in reader.replies[:2])


async def test_one_bad_ball_voids_the_double_ball_spin(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    """Seed-001 L97 applied to both balls [GAP]: the wheel's ball made 2 revolutions in game 1
    (seed-000 RL-I2: fewer than 4 is "no spin"), so the spin is void with both numbers named;
    the next spin settles."""
    outcomes, _, _ = await _play(
        tmp_path,
        mosquitto,
        game="double_ball_roulette",
        table="DB-E2E-VOID",
        numbers=[8, 20],
        outcomes=2,
        faults=["short_spin@1=2"],
        helper=lambda app: SecondBallReader(
            command_sender(app.config, mosquitto.host, mosquitto.port), numbers=[11, 0]
        ),
    )
    void, settled = outcomes
    assert (void["status"], void["reason"]) == ("void", "min_revolutions")
    assert void["result"] == {"number": 8, "ball": 1, "numbers": [8, 11]}
    assert settled["status"] == "settled"
    assert settled["result"]["numbers"] == [20, 0]
    assert settled["result"]["both_color"] is None  # zero is green: no colour bet wins
