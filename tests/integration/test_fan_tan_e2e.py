"""A Fan Tan table end to end: the dealer screen keys in the round and the bead count with
``cmd/event`` through a real Mosquitto → the command authority → the bead engine → the journal →
the outcome back on the broker; the journal, exported, replays to the same outcomes.

No device: Fan Tan's count is the dealer's (seed-001 L3985–3989); a bead counter with its own
protocol would send the same ``beads`` event (docs/games/fan_tan.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from tablectl.controller.config import parse_config
from tablectl.controller.service.app import open_table
from tablectl.controller.tools.cli import main
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber

pytestmark = [pytest.mark.broker, pytest.mark.timeout(60)]

TABLE = "FT-E2E"
PREFIX = f"it/{TABLE}"


async def _command(client: aiomqtt.Client, sub: Subscriber, n: int, event: dict[str, Any]) -> Any:
    """Send ``cmd/event`` and wait for its reply (correlated by ``id``)."""
    await client.publish(f"{PREFIX}/cmd/event", json.dumps({"id": n, "event": event}), qos=1)
    reply = await sub.wait_for(
        lambda m: m.topic == f"{PREFIX}/cmd/event/reply" and m.json().get("id") == n, timeout=10
    )
    return reply.json()


async def _commands_taken(client: aiomqtt.Client, sub: Subscriber) -> None:
    """Wait until the table answers commands: ``cmd/status`` (it changes nothing) until a reply
    comes, since the table subscribes to ``cmd/+`` only once it is connected."""
    await client.subscribe(f"{PREFIX}/cmd/status/reply", qos=1)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while not any(m.topic == f"{PREFIX}/cmd/status/reply" for m in sub.messages):
        assert loop.time() < deadline, "the table never answered cmd/status"
        await client.publish(f"{PREFIX}/cmd/status", json.dumps({"id": 0}), qos=1)
        with contextlib.suppress(AssertionError):
            await sub.wait_for(lambda m: m.topic.endswith("/cmd/status/reply"), timeout=0.5)


async def test_the_dealer_keys_in_rounds_and_counts_over_mqtt(
    tmp_path: Path, mosquitto: MosquittoProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "ft.sqlite"
    raw = {
        "table": {"id": TABLE, "game": "fan_tan"},
        "rules": {"max_beads": 300},
        "betting": {"mode": "external"},
        "mqtt": {"url": mosquitto.url, "topic_prefix": "it"},
        "journal": {"path": str(journal)},
        # A lab: the dealer screen's commands are unsigned (a floor table signs them).
        "security": {"insecure_commands": True},
    }
    config = parse_config(raw, "<fan-tan>")
    script: list[dict[str, Any]] = [
        {"type": "round_open"},
        {"type": "bets_closed"},
        {"type": "beads", "count": 0},  # an empty cup: a verdict, the round waits
        {"type": "beads", "count": 27},  # 27 = 6 lines of four + 3
        {"type": "round_open"},
        {"type": "beads", "count": 9},  # the cup lifted while betting: void (L3987)
        {"type": "round_open"},
        {"type": "bets_closed"},
        {"type": "beads", "count": 4},
    ]
    async with (
        Subscriber(mosquitto.host, mosquitto.port, f"{PREFIX}/#") as sub,
        asyncio.TaskGroup() as group,
        open_table(config, broker=(mosquitto.host, mosquitto.port)) as app,
        aiomqtt.Client(mosquitto.host, mosquitto.port) as client,
    ):
        runner = group.create_task(app.runner.run())
        try:
            await client.subscribe(f"{PREFIX}/cmd/event/reply", qos=1)
            await _commands_taken(client, sub)
            replies = [await _command(client, sub, n, e) for n, e in enumerate(script, 1)]
            await sub.wait_until(
                lambda ms: sum(m.topic == f"{PREFIX}/outcome" for m in ms) >= 3, timeout=10
            )
        finally:
            runner.cancel()
    assert all(r.get("ok") for r in replies), replies
    events = {p["seq"]: p for p in sub.payloads(f"{PREFIX}/events")}
    records = [events[seq] for seq in sorted(events)]
    assert sorted(events) == list(range(1, max(events) + 1)), "gapless seq"
    outcomes = [r for r in records if r["type"] == "outcome"]
    assert [(o["status"], o["reason"]) for o in outcomes] == [
        ("settled", None),
        ("void", "result_before_bets_closed"),
        ("settled", None),
    ]
    assert [o["result"]["beads"] for o in outcomes if o["status"] == "settled"] == [3, 4]
    assert outcomes[0]["result"] == {
        "count": 27, "beads": 3, "big": True, "odd": True, "recounts": 1,
    }  # fmt: skip
    assert [r["code"] for r in records if r["type"] == "verdict"] == ["no_beads"]
    counts = [r for r in records if r["type"] == "beads"]
    assert all(r["manual"] for r in counts)  # keyed in: marked manual in the journal

    # The journal, exported as normalized events, replays to the same outcomes (contracts §4.4).
    exported = tmp_path / "events.jsonl"
    assert main(["export", "--journal", str(journal), "--all", "--out", str(exported)]) == 0
    replay_config = tmp_path / "replay.toml"
    replay_config.write_text(
        f'[table]\nid = "{TABLE}"\ngame = "fan_tan"\n[rules]\nmax_beads = 300\n'
        f'[mqtt]\nurl = "mqtt://127.0.0.1:1"\n[journal]\npath = "{tmp_path / "r.sqlite"}"\n',
        encoding="utf-8",
    )
    capsys.readouterr()
    assert main(["replay", "--config", str(replay_config), str(exported)]) == 0
    replayed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(o["round"], o["status"], o["result"]) for o in replayed] == [
        (o["round"], o["status"], o["result"]) for o in outcomes
    ]
