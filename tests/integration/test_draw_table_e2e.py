"""Ball-draw tables end to end over CAN: the simulated drum on python-can's virtual bus → the real
drum driver (python-can ``virtual`` interface, as production uses ``socketcan``) → the draw
engine → journal → a real Mosquitto. Lucky 7, and the two drum games settled on something else
than the numbers: Fruitrace (a comparison panel) and Cash or Crash (a ladder that ends at a red
ball)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from tablectl.controller.lab.tables import start_draw_table
from tablectl.controller.service.app import open_table
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Received, Subscriber

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(120)]


async def _run_draws(
    tmp_path: Path,
    mosquitto: MosquittoProcess,
    table: str,
    faults: tuple[str, ...],
    draws: int,
    also: Callable[[list[Received]], bool] = lambda _: True,
    *,
    game: str = "lucky7",
    balls: int = 42,
    draw: int = 7,
) -> Subscriber:
    """Play until ``draws`` outcomes (and ``also`` holds on what was received)."""
    async with (
        Subscriber(mosquitto.host, mosquitto.port, f"it/{table}/#") as sub,
        asyncio.TaskGroup() as group,
    ):
        sim = await start_draw_table(
            group,
            tmp_path / f"{table}.sqlite",
            table_id=table,
            game=game,
            balls=balls,
            draw=draw,
            channel=f"it-{table}",
            speed=50,
            faults=faults,
            prefix="it",
            mqtt_url=mosquitto.url,
        )
        async with open_table(sim.config, broker=(mosquitto.host, mosquitto.port)) as app:
            runner = group.create_task(app.runner.run())
            host = sim.presenter(app, betting=0.05, mixing=0.05, interval=0.05)
            presenter = group.create_task(host.run())
            try:
                await sub.wait_until(
                    lambda ms: (
                        sum(m.topic == f"it/{table}/outcome" for m in ms) >= draws and also(ms)
                    ),
                    timeout=60,
                )
            finally:
                for task in (presenter, runner, *group._tasks):
                    task.cancel()
    return sub


async def test_draws_of_seven_distinct_balls(tmp_path: Path, mosquitto: MosquittoProcess) -> None:
    sub = await _run_draws(tmp_path, mosquitto, "L7-E2E", (), draws=3)
    outcomes = sub.payloads("it/L7-E2E/outcome")
    for outcome in outcomes:
        balls = outcome["result"]["balls"]
        assert outcome["status"] == "settled"
        assert len(balls) == len(set(balls)) == 7  # seed-001 §6.2: 7 of 42, all distinct
        assert all(1 <= b <= 42 for b in balls)
        assert outcome["result"]["sum"] == sum(balls)
    events = {p["seq"]: p for p in sub.payloads("it/L7-E2E/events")}
    assert sorted(events) == list(range(1, max(events) + 1))


async def test_lucky7_eighth_ball_is_flagged_not_drawn(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    # The drum over-fills: 8 balls in the tube. The outcome has the first 7 (L2319), the 8th is
    # flagged with a verdict; a duplicate read never yields a repeated ball.
    def flagged(messages: list[Received]) -> bool:
        return any(
            m.topic == "it/L7-X/events" and m.json().get("code") == "extra_ball" for m in messages
        )

    sub = await _run_draws(
        tmp_path, mosquitto, "L7-X", ("extra_ball@1", "double_read@2"), draws=2, also=flagged
    )
    events = [p for p in sub.payloads("it/L7-X/events")]
    outcomes = [e for e in events if e["type"] == "outcome"]
    first = outcomes[0]["result"]["balls"]
    drawn = [e["ball"] for e in events if e["type"] == "ball_drawn"]
    assert first == drawn[:7]
    extra = [e for e in events if e["type"] == "verdict" and e["code"] == "extra_ball"]
    assert extra, [e.get("code") for e in events if e["type"] == "verdict"]
    for outcome in outcomes:
        balls = outcome["result"]["balls"]
        assert len(balls) == len(set(balls)) == 7


async def test_fruitrace_matches_the_tube_with_the_panel(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    # seed-001 §6.12 L2907: all ten symbol balls fall into the result tube, each compared with
    # the panel beside it.
    sub = await _run_draws(
        tmp_path, mosquitto, "FR-E2E", (), draws=3, game="fruitrace", balls=10, draw=10
    )
    for outcome in sub.payloads("it/FR-E2E/outcome"):
        result = outcome["result"]
        assert outcome["status"] == "settled"
        assert sorted(result["balls"]) == list(range(1, 11))
        panel = ["blue"] * 3 + ["red"] * 3 + ["yellow"] * 3 + ["orange"]
        pairs = zip(result["ball_colors"], panel, strict=True)
        matched = [i for i, (c, p) in enumerate(pairs, 1) if c == p]
        assert result["matched"] == matched
        assert result["matches"] == len(matched) != 9


async def test_cash_or_crash_ends_each_round_at_its_red_ball(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    # seed-001 §6.13 L4401–4407: one ball at a time; the round ends at a red ball no shield
    # takes, or at the top level. The presenter stops releasing once the table has its outcome.
    sub = await _run_draws(
        tmp_path, mosquitto, "CC-E2E", (), draws=3, game="cash_or_crash", balls=28, draw=21
    )
    for outcome in sub.payloads("it/CC-E2E/outcome"):
        result = outcome["result"]
        assert outcome["status"] == "settled"
        assert len(result["balls"]) == len(set(result["balls"]))
        colours = result["ball_colors"]
        assert result["crashed"] is (colours[-1] == "red")
        assert result["crashed"] or result["level"] == 20
        reds = colours.count("red")
        assert reds == len(result["shielded"]) + int(result["crashed"])
    events = {p["seq"]: p for p in sub.payloads("it/CC-E2E/events")}
    assert sorted(events) == list(range(1, max(events) + 1))
