"""``tablectl watch`` and the demo's live view: subscribe to a table's topics and pretty-print.

A consumer tool (like a results display), not part of the service: the service's only MQTT client is
:mod:`tablectl.controller.mqtt.publisher`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import aiomqtt

__all__ = ["format_message", "watch"]

_COLOURS = {"red": "\x1b[31m", "black": "\x1b[37m", "green": "\x1b[32m"}
_RESET = "\x1b[0m"


def format_message(topic: str, payload: bytes, *, colour: bool = False) -> str | None:
    """One human line for a message, or ``None`` for noise (retained state churn)."""
    try:
        body: Any = json.loads(payload)
    except ValueError:
        return f"{topic}  <{len(payload)} bytes, not JSON>"
    if not isinstance(body, dict):
        return f"{topic}  {body!r}"
    leaf = topic.rsplit("/", 1)[-1]
    if leaf == "outcome":
        return _format_outcome(body, colour=colour)
    if leaf == "alarms":
        verb = "RAISED " if body.get("type") == "fault" else "CLEARED"
        return (
            f"ALARM   {verb} {body.get('code')} on {body.get('device')}  {body.get('detail') or ''}"
        )
    if leaf == "status":
        return f"STATUS  {body.get('table')} {body.get('state')}"
    if leaf == "events":
        if body.get("type") in ("outcome",):
            return None
        details = {
            k: v
            for k, v in body.items()
            if k not in ("schema", "table", "seq", "ts", "type", "hash", "prev_hash")
        }
        return f"event   #{body.get('seq'):<5} {body.get('type'):<15} {_compact(details)}"
    return None


def _format_outcome(body: dict[str, Any], *, colour: bool) -> str:
    head = f"OUTCOME #{body.get('seq')} {body.get('round')}"
    if body.get("status") == "void":
        return f"{head}  VOID ({body.get('reason')})"
    result = body.get("result") or {}
    if "number" in result and "segment" not in result:
        text = f"{result['number']} {result.get('color', '')}"
        if colour and result.get("color") in _COLOURS:
            text = f"{_COLOURS[result['color']]}{text}{_RESET}"
        revs = result.get("revolutions")
        extra = f"  revolutions {revs}" if revs is not None else ""
        if "lightning" in result:  # lightning_roulette: the round's draw and the number's
            picks = " ".join(f"{p['value']}x{p['multiplier']}" for p in result["lightning"])
            multiplier = result.get("multiplier")
            extra += f"  lightning {picks or '-'}" + (f"  x{multiplier}" if multiplier else "")
        return f"{head}  {text}{extra}"
    if "per_ball" in result:  # double_ball_roulette
        numbers = " ".join(str(n) for n in result.get("numbers", []))
        same = "  (same number)" if result.get("same_number") else ""
        return f"{head}  balls on {numbers}{same}"
    if "balls" in result:
        balls = " ".join(str(b) for b in result["balls"])
        return f"{head}  balls {balls}  (sum {result.get('sum')})"
    if "segment" in result:
        multiplier = result.get("multiplier")
        extra = f"  x{multiplier}" if multiplier not in (None, 1) else ""
        return f"{head}  segment {result['segment']}{extra}"
    if "player" in result and "banker" in result:
        return f"{head}  {_format_baccarat(result)}"
    if "dragon" in result and "tiger" in result:
        return (
            f"{head}  {str(result.get('winner', '')).upper()}  dragon {result['dragon']}"
            f" v tiger {result['tiger']}"
        )
    return f"{head}  {_compact(result)}"


def _format_baccarat(result: dict[str, Any]) -> str:
    def hand(name: str) -> str:
        side = result.get(name) or {}
        return f"{name} {side.get('total')} ({' '.join(side.get('cards', []))})"

    extras = [flag for flag in ("natural", "player_pair", "banker_pair") if result.get(flag)]
    tail = f"  [{', '.join(extras)}]" if extras else ""
    return f"{str(result.get('winner', '')).upper():<6}  {hand('player')} v {hand('banker')}{tail}"


def _compact(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


async def watch(
    host: str,
    port: int,
    topic_filter: str,
    *,
    emit: Callable[[str], None] = print,
    colour: bool = False,
    raw: bool = False,
    identifier: str | None = None,
) -> None:
    """Print every message on ``topic_filter`` until cancelled."""
    async with aiomqtt.Client(host, port, identifier=identifier) as client:
        await client.subscribe(topic_filter, qos=1)
        async for message in client.messages:
            payload = message.payload if isinstance(message.payload, bytes) else b""
            if raw:
                emit(f"{message.topic} {payload.decode('utf-8', 'replace')}")
                continue
            line = format_message(str(message.topic), payload, colour=colour)
            if line is not None:
                emit(line)
