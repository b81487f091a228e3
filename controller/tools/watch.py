"""``tablectl watch`` and the demo's live view: subscribe to a table's topics and print them.

A consumer tool (like a results display), not part of the service: the service's only MQTT client is
:mod:`tablectl.controller.mqtt.publisher`.

Every line starts with the local time and the table: ``10:00:01 ROU-01 #000123 17 black (6
turns)``. Outcomes are one line each (:mod:`tablectl.controller.tools.summary`); a retained
message the broker hands out again (on (re)subscribe, or a republish after a reconnect) is shown
once, and an event once per ``(table, seq)`` (the outbox may deliver one twice, docs/mqtt.md).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal

import aiomqtt

from tablectl.controller.tools.summary import clock_summary, facts, summarize

__all__ = ["Kind", "Line", "MessageFilter", "format_message", "watch"]

Kind = Literal["outcome", "event", "alarm", "status", "other"]

_RED: Final = "\x1b[31m"
_BOLD: Final = "\x1b[1m"
_RESET: Final = "\x1b[0m"
_RETAINED_LEAVES: Final = frozenset({"status", "state", "outcome", "anchor"})
_EVENT_NOISE: Final = ("schema", "table", "seq", "ts", "type", "hash", "prev_hash", "device")


@dataclass(frozen=True, slots=True)
class Line:
    """One line of the view, before its time stamp."""

    kind: Kind
    table: str
    text: str

    def render(self, clock: datetime | None = None, *, colour: bool = False) -> str:
        stamp = (clock or datetime.now()).strftime("%H:%M:%S")
        text = self.text
        if colour and self.kind == "outcome":
            text = text.replace(" VOID ", f" {_RED}VOID{_RESET} ")
            text = f"{_BOLD}{text}{_RESET}"
        elif colour and self.kind == "alarm" and " raised " in text:
            text = f"{_RED}{text}{_RESET}"
        return f"{stamp} {text}"


def _table_of(topic: str, table_level: int) -> str:
    levels = topic.split("/")
    return levels[table_level] if len(levels) > table_level else topic


def format_message(topic: str, payload: bytes, *, table_level: int = 1) -> Line | None:
    """One line for a message, or ``None`` for noise (retained state churn, the events-topic copy
    of an outcome). ``table_level`` is the table's index among the topic's levels."""
    table = _table_of(topic, table_level)
    try:
        body: Any = json.loads(payload)
    except ValueError:
        return Line("other", table, f"{table} {topic}: <{len(payload)} bytes, not JSON>")
    if not isinstance(body, dict):
        return Line("other", table, f"{table} {topic}: not an object")
    leaf = topic.rsplit("/", 1)[-1]
    if leaf == "outcome":
        return Line("outcome", table, summarize({"table": table, **body}))
    if leaf == "alarms" and body.get("type") in ("clock_step", "clock_confirmed"):
        return Line("alarm", table, f"{table} ALARM {clock_summary(body)}")
    if leaf == "alarms":
        verb = "raised" if body.get("type") == "fault" else "cleared"
        detail = f": {body['detail']}" if body.get("detail") else ""
        text = f"{table} ALARM {verb} {body.get('code')} on {body.get('device')}{detail}"
        return Line("alarm", table, text)
    if leaf == "status":
        return Line("status", table, f"{table} status {body.get('state')}")
    if leaf == "events":
        if body.get("type") == "outcome":  # the outcome topic carries it once
            return None
        details = {k: v for k, v in body.items() if k not in _EVENT_NOISE}
        if details.get("withheld"):
            details = {k: v for k, v in details.items() if k not in ("card", "withheld")}
            details["card"] = "withheld"
        text = f"{table} event #{body.get('seq')} {body.get('type')} {facts(details, empty='')}"
        return Line("event", table, text.rstrip())
    return None


class MessageFilter:
    """Remembers what was shown: a retained topic's payload (the last one per topic), an event's
    ``(table, seq)`` (the most recent ``capacity``)."""

    def __init__(self, *, table_level: int = 1, capacity: int = 4096) -> None:
        self._table_level = table_level
        self._capacity = capacity
        self._retained: dict[str, bytes] = {}
        self._events: OrderedDict[Hashable, None] = OrderedDict()

    def is_new(self, topic: str, payload: bytes, *, retained: bool = False) -> bool:
        leaf = topic.rsplit("/", 1)[-1]
        if retained or leaf in _RETAINED_LEAVES or "/devices/" in topic:
            if self._retained.get(topic) == payload:
                return False
            self._retained[topic] = payload
            return True
        if leaf != "events":
            return True
        try:
            seq = json.loads(payload).get("seq")
        except (ValueError, AttributeError):
            return True
        if seq is None:
            return True
        key = (_table_of(topic, self._table_level), seq)
        if key in self._events:
            return False
        self._events[key] = None
        if len(self._events) > self._capacity:
            self._events.popitem(last=False)
        return True


async def watch(
    host: str,
    port: int,
    topic_filter: str,
    *,
    emit: Callable[[str], None] = print,
    colour: bool = False,
    raw: bool = False,
    as_json: bool = False,
    kinds: Collection[Kind] | None = None,
    on_line: Callable[[Line], None] | None = None,
    on_message: Callable[[str, bytes, bool], object] | None = None,
    clock: Callable[[], datetime] = datetime.now,
    identifier: str | None = None,
) -> None:
    """Print every message on ``topic_filter`` until cancelled.

    Args:
        raw: ``topic payload`` as received (no summary).
        as_json: one JSON object per line, ``{"topic", "retained", "payload"}`` (the payload as
            published), for machines.
        kinds: which lines to show (default: all); ``on_line`` sees every line shown.
        on_message: gets every new message as ``(topic, payload, retained)`` instead of it being
            printed (the panels draw it); ``emit`` then only gets the "connected" line.
        clock: the local time stamped on each line.

    Raises:
        ConnectionError: the broker cannot be reached, or the connection is lost (one line).
    """
    levels = topic_filter.split("/")
    table_level = max(len(levels) - 2, 0)
    seen = MessageFilter(table_level=table_level)
    connected = False
    try:
        async with aiomqtt.Client(host, port, identifier=identifier) as client:
            await client.subscribe(topic_filter, qos=1)
            connected = True
            if not (raw or as_json) or on_message is not None:
                stamp = clock().strftime("%H:%M:%S")
                emit(f"{stamp} connected to mqtt://{host}:{port}, waiting for {topic_filter}")
            async for message in client.messages:
                payload = message.payload if isinstance(message.payload, bytes) else b""
                topic = str(message.topic)
                if not seen.is_new(topic, payload, retained=message.retain):
                    continue
                if on_message is not None:
                    on_message(topic, payload, message.retain)
                    continue
                if as_json:
                    emit(_json_line(topic, payload, retained=message.retain))
                    continue
                if raw:
                    emit(f"{topic} {payload.decode('utf-8', 'replace')}")
                    continue
                line = format_message(topic, payload, table_level=table_level)
                if line is None or (kinds is not None and line.kind not in kinds):
                    continue
                emit(line.render(clock(), colour=colour))
                if on_line is not None:
                    on_line(line)
    except aiomqtt.MqttError as exc:
        what = "lost connection to" if connected else "cannot reach"
        raise ConnectionError(f"{what} mqtt://{host}:{port}: {exc}") from None


def _json_line(topic: str, payload: bytes, *, retained: bool) -> str:
    try:
        body: Any = json.loads(payload)
    except ValueError:
        body = payload.decode("utf-8", "replace")
    return json.dumps(
        {"topic": topic, "retained": retained, "payload": body},
        separators=(",", ":"),
        ensure_ascii=False,
    )
