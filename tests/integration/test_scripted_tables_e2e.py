"""Every scripted card game end to end: simulated shoe → real drivers → controller → Mosquitto.

For each game of :data:`tablectl.controller.games.catalog.GAMES`: a barcode shoe as a USB HID
keyboard behind the simulated pyusb backend, a simulated shuffler on a TCP port (``socket://``) for
standard decks (jokers and 21 Bet's 36-card deck are shuffled by hand, entered by the dealer), the
real engine, journal and publisher, a real Mosquitto, and a simulated dealer who pulls cards, closes
the decision windows and reshuffles as the game's script says.

Checked per game: every round settles with no verdict, ``seq`` is gapless, a face-down card is
published withheld and revealed by its round's outcome, and the journal exported as normalized
events replays (``tablectl replay``) to the same outcomes (contracts §4.4).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.games.catalog import GAMES
from tablectl.controller.lab.dealer import DealerPace
from tablectl.controller.lab.tables import start_scripted_table
from tablectl.controller.service.app import open_table
from tablectl.controller.tools.cli import main
from tests.support.live_journal import read_rows
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber

pytestmark = [pytest.mark.broker, pytest.mark.timeout(120)]

ROUNDS = 3


def _cards_in(value: Any) -> set[str]:
    """Every string inside an outcome's result (card codes among them)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(_cards_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_cards_in(v) for v in value)) if value else set()
    return set()


@pytest.mark.parametrize("game", sorted(GAMES))
async def test_a_simulated_shoe_deals_the_game_end_to_end(
    game: str, tmp_path: Path, mosquitto: MosquittoProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    table = "SG-" + game.replace("_", "-").upper()[:20]
    prefix = "it"
    journal = tmp_path / "table.sqlite"
    async with (
        Subscriber(mosquitto.host, mosquitto.port, f"{prefix}/{table}/#") as sub,
        asyncio.TaskGroup() as group,
    ):
        sim = await start_scripted_table(
            group, journal, game=game, table_id=table, prefix=prefix, mqtt_url=mosquitto.url
        )
        async with open_table(
            sim.config, broker=(mosquitto.host, mosquitto.port), driver_kwargs=sim.driver_kwargs
        ) as app:
            task = group.create_task(app.runner.run())
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
                task.cancel()
                for running in group._tasks:
                    running.cancel()
    events = {p["seq"]: p for p in sub.payloads(f"{prefix}/{table}/events")}
    records = [events[seq] for seq in sorted(events)]
    assert sorted(events) == list(range(1, max(events) + 1)), "gapless seq"
    verdicts = [(r["code"], r["message"]) for r in records if r["type"] == "verdict"]
    assert verdicts == []
    outcomes = [r for r in records if r["type"] == "outcome"]
    assert [o["status"] for o in outcomes] == ["settled"] * ROUNDS, outcomes
    assert all(o["game"] == game for o in outcomes)

    # A face-down card goes out withheld and comes back in its round's outcome (seed-000 L79);
    # a game that keeps them secret (a poker room's hole cards and burns, T 35) never shows them.
    reveals = sim.game.reveals
    by_round: dict[str, list[dict[str, Any]]] = {}
    dealt: list[dict[str, Any]] = []
    for record in records:
        if record["type"] == "round_open":
            dealt = []
        elif record["type"] == "card":
            dealt.append(record)
        elif record["type"] == "outcome":
            by_round[record["round"]] = dealt
    journaled = _journal_cards(journal)
    for outcome in outcomes:
        revealed = _cards_in(outcome["result"])
        for card in by_round.get(outcome["round"], []):
            if card.get("withheld"):
                assert card["card"] is None
                assert (journaled[card["seq"]] in revealed) is reveals, (card, outcome["result"])
            else:
                assert card["card"] == journaled[card["seq"]]

    # The journal, exported as normalized events, replays to the same outcomes.
    exported = tmp_path / "events.jsonl"
    config = _config_file(tmp_path, table, game)
    assert main(["export", "--journal", str(journal), "--all", "--out", str(exported)]) == 0
    capsys.readouterr()
    assert main(["replay", "--config", str(config), str(exported)]) == 0
    out, _ = capsys.readouterr()
    replayed = [json.loads(line) for line in out.splitlines()]
    assert [(o["round"], o["status"], o["result"]) for o in replayed] == [
        (o["round"], o["status"], o["result"]) for o in outcomes
    ]


def _journal_cards(path: Path) -> dict[int, str]:
    rows = read_rows(path, "SELECT seq, body FROM records")
    out: dict[int, str] = {}
    for seq, body in rows:
        record = json.loads(body)
        if record["type"] == "card":
            out[int(seq)] = record["card"]
    return out


def _config_file(tmp_path: Path, table: str, game: str) -> Path:
    path = tmp_path / "replay.toml"
    path.write_text(
        f'[table]\nid = "{table}"\ngame = "{game}"\n'
        f'[mqtt]\nurl = "mqtt://127.0.0.1:1"\n[journal]\npath = "{tmp_path / "r.sqlite"}"\n',
        encoding="utf-8",
    )
    return path
