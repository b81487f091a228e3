"""``tablectl watch`` and the demo's live view: subscribe to a table's topics and print them.

A retained message handed out again is shown once, an event once per ``(table, seq, hash)`` (a
forged record at a real one's ``seq`` does not hide it). Nothing from the broker is trusted
(contracts §7): bounded reads, checked fields, and a failure is one line, never the end of the view;
the dashboard reads with the same functions.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal

import aiomqtt
import structlog

from tablectl.controller.core.bounded_json import read_object
from tablectl.controller.core.errors import MalformedError
from tablectl.controller.mqtt.security import ClientSecurity
from tablectl.controller.tools.summary import clock_summary, facts, printable, summarize

log = structlog.get_logger("tablectl.watch")

Kind = Literal["outcome", "event", "alarm", "status", "other"]

_RED: Final = "\x1b[31m"
_BOLD: Final = "\x1b[1m"
_RESET: Final = "\x1b[0m"
_RETAINED_LEAVES: Final = frozenset({"status", "state", "outcome", "anchor"})
_EVENT_NOISE: Final = (
    "schema",
    "table",
    "seq",
    "ts",
    "type",
    "hash",
    "prev_hash",
    "device",
    "auth",
)
MAX_SEQ: Final = 2**63 - 1
"""The largest ``seq`` a journal can hold (SQLite's integer)."""
_MAX_HASH: Final = 128
"""Characters of a ``hash`` or ``prev_hash`` (a sha256 is 64 hex digits)."""


def _check_fields(body: Mapping[str, Any]) -> None:
    """The types of a record's fields every reader uses, where present (``seq`` in 1..2⁶³−1)."""
    seq = body.get("seq")
    if seq is not None and (
        not isinstance(seq, int) or isinstance(seq, bool) or not 1 <= seq <= MAX_SEQ
    ):
        raise MalformedError("bad_field", "seq")
    for name in ("type", "hash", "prev_hash", "ts", "round", "status", "reason", "game"):
        value = body.get(name)
        if value is not None and not isinstance(value, str):
            raise MalformedError("bad_field", name)
    for name in ("hash", "prev_hash"):
        if len(body.get(name) or "") > _MAX_HASH:
            raise MalformedError("bad_field", name)


def check_record(body: Mapping[str, Any], *, hashed: bool = True) -> int:
    """A journal record as published: its ``seq``, after checking the fields every reader uses;
    with ``hashed`` ``hash`` and ``prev_hash`` are required too."""
    _check_fields(body)
    seq = body.get("seq")
    if not isinstance(seq, int):
        raise MalformedError("bad_field", "seq")
    for name in ("hash", "prev_hash") if hashed else ():
        if not body.get(name):
            raise MalformedError("bad_field", name)
    return seq


@dataclass(frozen=True, slots=True)
class Line:
    """One line of the view, before its time stamp."""

    kind: Kind
    table: str
    text: str

    def render(self, clock: datetime | None = None, *, colour: bool = False) -> str:
        stamp = (clock or datetime.now()).strftime("%H:%M:%S")
        text = printable(self.text)
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
    leaf = topic.rsplit("/", 1)[-1]
    if not payload and (leaf in _RETAINED_LEAVES or "/devices/" in topic):
        return Line("other", table, f"{table} {topic}: cleared")
    try:
        body = read_object(payload)
        if leaf in ("events", "outcome"):
            _check_fields(body)
    except MalformedError as exc:
        return Line("other", table, f"{table} {topic}: {_malformed(exc, payload)}")
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
        self._retained: OrderedDict[str, bytes] = OrderedDict()
        self._events: OrderedDict[Hashable, None] = OrderedDict()

    def is_new(self, topic: str, payload: bytes, *, retained: bool = False) -> bool:
        """Whether to show this message (never raises: a payload it cannot read is new, and
        the reader says what is wrong with it). An empty retained payload clears the topic:
        new, and the topic's next payload is new whatever it is."""
        leaf = topic.rsplit("/", 1)[-1]
        if retained or leaf in _RETAINED_LEAVES or "/devices/" in topic:
            if not payload:
                self._retained.pop(topic, None)
                return True
            digest = hashlib.blake2b(payload, digest_size=16).digest()
            if self._retained.get(topic) == digest:
                self._retained.move_to_end(topic)
                return False
            self._retained[topic] = digest
            self._retained.move_to_end(topic)
            if len(self._retained) > self._capacity:
                self._retained.popitem(last=False)
            return True
        if leaf != "events":
            return True
        try:
            body = read_object(payload)
            seq = check_record(body, hashed=False)
        except MalformedError:
            return True  # no seq to know it by: shown (and said what is wrong with it)
        record_hash = body.get("hash")
        key = (
            _table_of(topic, self._table_level),
            seq,
            record_hash[:_MAX_HASH] if isinstance(record_hash, str) else None,
        )
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
    security: ClientSecurity | None = None,
) -> None:
    """Print every message on ``topic_filter`` until cancelled; ``on_message`` gets them instead
    (the panels draw them) and ``emit`` then only the "connected" line."""
    levels = topic_filter.split("/")
    table_level = max(len(levels) - 2, 0)
    seen = MessageFilter(table_level=table_level)
    connected = False
    try:
        login = security or ClientSecurity()
        async with aiomqtt.Client(
            host,
            port,
            identifier=identifier,
            username=login.username,
            password=login.password,
            tls_context=login.tls_context,
        ) as client:
            await client.subscribe(topic_filter, qos=1)
            connected = True
            if not (raw or as_json) or on_message is not None:
                stamp = clock().strftime("%H:%M:%S")
                emit(f"{stamp} connected to mqtt://{host}:{port}, waiting for {topic_filter}")
            async for message in client.messages:
                payload = message.payload if isinstance(message.payload, bytes) else b""
                topic = str(message.topic)
                try:
                    if not seen.is_new(topic, payload, retained=message.retain):
                        continue
                    if on_message is not None:
                        if _bounded(topic, payload, table_level):
                            on_message(topic, payload, message.retain)
                        continue
                    if as_json or raw:
                        emit(_raw_line(topic, payload, retained=message.retain, as_json=as_json))
                        continue
                    line = format_message(topic, payload, table_level=table_level)
                    if line is None or (kinds is not None and line.kind not in kinds):
                        continue
                    emit(line.render(clock(), colour=colour))
                    if on_line is not None:
                        on_line(line)
                except Exception as exc:  # one message never ends the view
                    what = f"{type(exc).__name__}: {exc}"
                    note = _note(topic, table_level, f"not shown ({printable(what, 120)})")
                    if on_message is None:
                        emit(note.render(clock()))
                    else:
                        log.warning("watch_message_failed", topic=printable(topic, 200), error=what)
    except aiomqtt.MqttError as exc:
        what = "lost connection to" if connected else "cannot reach"
        raise ConnectionError(f"{what} mqtt://{host}:{port}: {exc}") from None


def _malformed(exc: MalformedError, payload: bytes) -> str:
    """The note for a payload :func:`read_object` or :func:`check_record` refused."""
    if exc.reason == "not_json":
        return f"<{len(payload)} bytes, not JSON>"
    if exc.reason == "not_object":
        return "not an object"
    return f"malformed ({exc}), skipped"


def _note(topic: str, table_level: int, text: str) -> Line:
    table = _table_of(topic, table_level)
    return Line("other", table, f"{table} {topic}: {text}")


def _bounded(topic: str, payload: bytes, table_level: int) -> bool:
    """Whether a message may go to a consumer of whole payloads (the panels): not too large,
    not too deep; a payload that is not JSON is theirs to judge. Else a warning, once a
    message."""
    if not payload:
        return True
    try:
        read_object(payload)
    except MalformedError as exc:
        if exc.reason in ("too_large", "too_deep"):
            table = _table_of(topic, table_level)
            log.warning("watch_malformed", table=printable(table, 64), reason=str(exc))
            return False
    return True


def _raw_line(topic: str, payload: bytes, *, retained: bool, as_json: bool) -> str:
    """``--raw``'s ``topic payload`` or ``--json``'s object; a payload too large or too deep
    to print is a note in its place."""
    text = payload.decode("utf-8", "replace")
    body: Any = text
    try:
        body = read_object(payload)
    except MalformedError as exc:
        if exc.reason in ("too_large", "too_deep"):
            text, body = f"<malformed: {exc}>", {"malformed": str(exc)}
        elif exc.reason == "not_object":
            body = json.loads(payload)  # JSON, UTF-8, bounded: only not an object
    if not as_json:
        return f"{printable(topic)} {printable(text)}"
    return json.dumps(
        {"topic": topic, "retained": retained, "payload": body},
        separators=(",", ":"),
        ensure_ascii=False,
    )
