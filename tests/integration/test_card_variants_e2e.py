"""The shoe games' seed-001 variants end to end: simulated shoe (and shuffler, and studio RNG) →
real drivers → controller → a real Mosquitto.

- ``blackjack_turbo`` (seed-001 L3075): a shuffle before every game, through the shuffler;
- ``golden_wealth_baccarat`` / ``lightning_baccarat`` (L4019–4025, L4117–4123): the RNG's five
  multiplier cards journaled after the close of bets and before the first card, and the
  outcome's multipliers are those of the dealt cards that were drawn;
- war of bets (``dragon_tiger``, ``variant = "war_of_bets"``, L2619–2625): every card its own
  barcode, and the second betting round closed between the player's and the dealer's card.

Each runs a few rounds with no verdict, a gapless ``seq``, and a journal that replays
(``tablectl replay``) to the same outcomes (contracts §4.4).
"""

from __future__ import annotations

import asyncio
import json
from math import prod
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.lab.cards import start_card_rng
from tablectl.controller.lab.dealer import DealerPace
from tablectl.controller.lab.tables import start_scripted_table
from tablectl.controller.service.app import open_table
from tablectl.controller.tools.cli import main
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber

pytestmark = [pytest.mark.broker, pytest.mark.timeout(120)]

ROUNDS = 3


async def _play(
    tmp_path: Path,
    mosquitto: MosquittoProcess,
    capsys: pytest.CaptureFixture[str],
    *,
    game: str,
    rules: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """``ROUNDS`` rounds dealt by the simulated dealer: the table's events as published, after
    checking the common facts (no verdict, gapless, settled, replayable)."""
    table = "CV-" + game.replace("_", "-").upper()[:16]
    journal = tmp_path / "table.sqlite"
    async with (
        Subscriber(mosquitto.host, mosquitto.port, f"it/{table}/#") as sub,
        asyncio.TaskGroup() as group,
    ):
        sim = await start_scripted_table(
            group,
            journal,
            game=game,
            rules=rules,
            table_id=table,
            prefix="it",
            mqtt_url=mosquitto.url,
        )
        async with open_table(
            sim.config, broker=(mosquitto.host, mosquitto.port), driver_kwargs=sim.driver_kwargs
        ) as app:
            tasks = [group.create_task(app.runner.run())]
            start_card_rng(group, app.runner, sim.game, seed=3)
            dealer = sim.dealer(app, rounds=ROUNDS, pace=DealerPace(betting=0, between_rounds=0))
            try:
                async with asyncio.timeout(90):
                    await dealer.run()
                    await sub.wait_for(
                        lambda m: (
                            m.topic.endswith("/events")
                            and m.json()["type"] == "outcome"
                            and m.json()["round"].endswith(f"{ROUNDS:06d}")
                        ),
                        timeout=10,
                    )
            finally:
                for task in (*tasks, *group._tasks):
                    task.cancel()
    events = {p["seq"]: p for p in sub.payloads(f"it/{table}/events")}
    records = [events[seq] for seq in sorted(events)]
    assert sorted(events) == list(range(1, max(events) + 1)), "gapless seq"
    assert [(r["code"], r["message"]) for r in records if r["type"] == "verdict"] == []
    outcomes = [r for r in records if r["type"] == "outcome"]
    assert [o["status"] for o in outcomes] == ["settled"] * ROUNDS, outcomes
    assert {o["game"] for o in outcomes} == {game}
    _replays_to(tmp_path, capsys, journal, table, game, rules or {}, outcomes)
    return records


def _replays_to(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    journal: Path,
    table: str,
    game: str,
    rules: dict[str, Any],
    outcomes: list[dict[str, Any]],
) -> None:
    exported = tmp_path / "events.jsonl"
    config = tmp_path / "replay.toml"
    lines = "".join(f"{key} = {json.dumps(value)}\n" for key, value in rules.items())
    config.write_text(
        f'[table]\nid = "{table}"\ngame = "{game}"\n[rules]\n{lines}'
        f'[mqtt]\nurl = "mqtt://127.0.0.1:1"\n[journal]\npath = "{tmp_path / "r.sqlite"}"\n',
        encoding="utf-8",
    )
    assert main(["export", "--journal", str(journal), "--all", "--out", str(exported)]) == 0
    capsys.readouterr()
    assert main(["replay", "--config", str(config), str(exported)]) == 0
    out, _ = capsys.readouterr()
    replayed = [json.loads(line) for line in out.splitlines()]
    assert [(o["round"], o["status"], o["result"]) for o in replayed] == [
        (o["round"], o["status"], o["result"]) for o in outcomes
    ]


def _rounds(records: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The records of each round, from its ``round_open`` to its outcome (the last)."""
    rounds: list[list[dict[str, Any]]] = []
    for record in records:
        if record["type"] == "round_open":
            rounds.append([])
        if rounds and (not rounds[-1] or rounds[-1][-1]["type"] != "outcome"):
            rounds[-1].append(record)
    return rounds


async def test_l3075_blackjack_turbo_shuffles_before_every_game(
    tmp_path: Path, mosquitto: MosquittoProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    records = await _play(tmp_path, mosquitto, capsys, game="blackjack_turbo")
    kinds = [r["type"] for r in records if r["type"] in ("shuffle_completed", "round_open")]
    assert kinds == ["shuffle_completed", "round_open"] * ROUNDS
    assert {r["cards"] for r in records if r["type"] == "shuffle_completed"} == {312}  # L3073
    for outcome in (r for r in records if r["type"] == "outcome"):
        (box,) = outcome["result"]["boxes"]
        assert box["insurance"] is None  # L3077-3085: no insurance
        assert len(outcome["result"]["dealer"]["cards"]) >= 2  # two to himself (L3075)


@pytest.mark.parametrize(
    ("game", "key", "multipliers"),
    [
        ("golden_wealth_baccarat", "gold", {2, 3, 5, 8}),  # L4021
        ("lightning_baccarat", "lightning", {2, 3, 4, 5, 8}),  # L4119
    ],
)
async def test_l4025_the_rng_draws_before_the_first_card_and_the_dealt_cards_multiply(
    game: str,
    key: str,
    multipliers: set[int],
    tmp_path: Path,
    mosquitto: MosquittoProcess,
    capsys: pytest.CaptureFixture[str],
) -> None:
    records = await _play(tmp_path, mosquitto, capsys, game=game)
    for rnd in _rounds(records):
        kinds = [r["type"] for r in rnd if r["type"] in ("bets_closed", "rng_draw", "card")]
        assert kinds[:3] == ["bets_closed", "rng_draw", "card"], kinds
        (draw,) = [r for r in rnd if r["type"] == "rng_draw"]
        picks = {p["value"]: p["multiplier"] for p in draw["numbers"]}
        assert len(picks) == 5
        assert set(picks.values()) <= multipliers
        result = rnd[-1]["result"]
        assert {p["card"]: p["multiplier"] for p in result[key]} == picks
        for hand in ("player", "banker"):
            lit = [c for c in result[hand]["cards"] if c in picks]
            assert result[f"{key}_cards"][hand] == lit
            assert result["multipliers"][hand] == prod(picks[c] for c in lit)
        assert result["multiplier"] == result["multipliers"][result["winner"]]


async def test_l2625_war_of_bets_closes_a_second_betting_round_before_the_dealer_card(
    tmp_path: Path, mosquitto: MosquittoProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    records = await _play(
        tmp_path, mosquitto, capsys, game="dragon_tiger", rules={"variant": "war_of_bets"}
    )
    for rnd in _rounds(records):
        kinds = [r["type"] for r in rnd if r["type"] in ("card", "confirm")]
        assert kinds == ["card", "confirm", "card"]  # player, second bets closed, dealer
        cards = [r["card"] for r in rnd if r["type"] == "card"]
        assert [rnd[-1]["result"]["player"], rnd[-1]["result"]["dealer"]] == cards
    barcodes = [r["barcode"] for r in records if r["type"] == "card"]
    assert len(set(barcodes)) == len(barcodes)  # L2619: each card its own barcode


async def test_l2871_rock_paper_scissors_deals_symbol_cards_through_the_barcode_shoe(
    tmp_path: Path, mosquitto: MosquittoProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    records = await _play(tmp_path, mosquitto, capsys, game="rock_paper_scissors")
    beats = {"RK": "SC", "PA": "RK", "SC": "PA"}  # L2879-2903, written out again
    for rnd in _rounds(records):
        cards = [r["card"] for r in rnd if r["type"] == "card"]
        assert len(cards) == 2
        assert set(cards) <= set(beats)
        result = rnd[-1]["result"]
        assert [result["silver"]["card"], result["gold"]["card"]] == cards
        for zone in ("silver", "gold"):
            card = result[zone]["card"]
            winning = next(pick for pick, beaten in beats.items() if beaten == card)
            assert result[zone]["wins"] == {"RK": "rock", "PA": "paper", "SC": "scissors"}[winning]
    shuffles = [r["cards"] for r in records if r["type"] == "shuffle_completed"]
    assert shuffles
    assert set(shuffles) == {54}
