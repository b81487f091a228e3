"""Diagnostics for the card shuffler (``driver = "tablectl-shuffler"``, reference protocol).

Spoken through the driver's own codec (:mod:`tablectl.drivers.shuffler.protocol`, or a vendor codec
set on the driver class) and its interpreter, so ``diag probe`` shows what the service would make of
the same bytes. Commands used (``docs/protocols/shuffler.md``): ``VERS`` (model, firmware, serial
number: R9, "identical to the approved prototype") and ``STAT`` (state, door, card count, active
faults, last shuffle) to identify; ``DCHK`` (count and check the loaded cards: R6) as the self-test.
``SHUF`` and ``CLRF`` are sent only when a technician asks (``diag sniff --send``).

Self-test codes: the shuffler's own fault codes (1–99, ``FALT``, with their reference meanings)
that are active when the test starts, then the deck check as diag's own codes, which no device
sends: 0 the deck is complete, 100 the count is wrong, 101 cards are missing, 102 extra cards,
103 the shuffler reads no faces (count only; passes when the count is right).
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import Callable

from tablectl.controller.config import DeviceConfig
from tablectl.controller.tools.diag.devices.generic import StreamDriverDiagnostics, describe_event
from tablectl.controller.tools.diag.devices.plugins import (
    Decoded,
    Identity,
    LiveDecoder,
    Progress,
    SelfTestCode,
    SelfTestOptions,
    SelfTestReport,
)
from tablectl.controller.tools.diag.errors import DiagError
from tablectl.controller.tools.diag.link import Link
from tablectl.drivers.base import DriverSettings
from tablectl.drivers.shuffler.driver import ShufflerDriver, ShufflerSettings
from tablectl.drivers.shuffler.interpreter import ShufflerInterpreter
from tablectl.drivers.shuffler.protocol import (
    FAULT_MEANINGS,
    NAK_REASONS,
    Ack,
    Codec,
    Command,
    CommandDecoder,
    DeckReport,
    DecodeError,
    Door,
    Fault,
    FaultClear,
    Message,
    MessageDecoder,
    Nak,
    QueryStatus,
    QueryVersion,
    RequestDeckCheck,
    ShuffleDone,
    ShuffleStart,
    Status,
    Version,
    frame,
)

__all__ = [
    "DECK_COMPLETE",
    "DECK_EXTRA",
    "DECK_MISSING",
    "DECK_NOT_CHECKED",
    "DECK_WRONG_COUNT",
    "ShufflerDiagnostics",
    "ShufflerLiveDecoder",
    "describe",
]

DECK_COMPLETE = 0
DECK_WRONG_COUNT = 100
DECK_MISSING = 101
DECK_EXTRA = 102
DECK_NOT_CHECKED = 103

_REPLY_TIMEOUT = 2.0
"""Seconds to wait for ``VERS``/``STAT`` replies."""


def fault_meaning(code: int) -> str:
    """The reference meaning of a ``FALT`` code (vendor codes 10–99 may have none)."""
    return FAULT_MEANINGS.get(code, "vendor fault code (not in the reference list)")


def _cards(cards: tuple[str, ...]) -> str:
    return ",".join(cards) or "none"


def _status_text(status: Status) -> str:
    faults = ", ".join(f"{c} ({fault_meaning(c)})" for c in status.faults) or "none"
    door = "open" if status.door_open else "closed"
    return (
        f"{status.state}, door {door}, {status.cards} cards, faults {faults}, "
        f"last shuffle #{status.shuffle}"
    )


def describe(message: Message) -> Decoded:
    """A decoded shuffler message as a technician reads it, with its JSON form."""
    data = {"type": type(message).__name__, **dataclasses.asdict(message)}
    match message:
        case Status():
            text = f"status: {_status_text(message)}"
        case ShuffleStart(shuffle, decks):
            text = f"shuffle #{shuffle} started ({decks} decks)"
        case ShuffleDone(shuffle, cards, missing, extra, checked):
            check = (
                f"missing {_cards(missing)}, extra {_cards(extra)}" if checked else "not checked"
            )
            text = f"shuffle #{shuffle} done: {cards} cards, {check}"
        case DeckReport(cards, missing, extra, checked):
            check = (
                f"missing {_cards(missing)}, extra {_cards(extra)}" if checked else "not checked"
            )
            text = f"deck check: {cards} cards, {check}"
        case Door(is_open):
            text = "door opened" if is_open else "door closed"
        case Fault(code, detail):
            text = f"fault {code}: {fault_meaning(code)}" + (f" ({detail})" if detail else "")
        case FaultClear(code):
            text = f"fault {code} cleared"
        case Version(model, firmware, serial):
            text = f"version: model {model}, firmware {firmware}, serial {serial}"
        case Ack(verb):
            text = f"ACK {verb}"
        case Nak(verb, reason):
            text = f"NAK {verb} {reason}: {NAK_REASONS.get(reason, 'vendor reason')}"
        case DecodeError(reason, raw):
            return Decoded(
                "error",
                f"undecodable: {reason}: {raw!r}",
                {"type": "decode_error", "reason": reason, "raw": raw.hex()},
            )
        case _:  # pragma: no cover - exhaustive
            raise TypeError(f"not a shuffler message: {message!r}")
    return Decoded("message", text, data)


class ShufflerLiveDecoder:
    """Bytes → decoded messages and the events the driver would report.

    No timers: the service polls ``STAT`` and calls the shuffler silent when polls go
    unanswered, but diag sends no polls, so that verdict would be wrong here.
    """

    def __init__(self, device_id: str, settings: ShufflerSettings, codec: Codec) -> None:
        self._decoder = codec.new_decoder()
        self._interpreter = ShufflerInterpreter(
            device_id,
            status_interval=settings.status_interval,
            missed_polls=settings.missed_polls,
        )
        self._started = False

    def feed(self, data: bytes, now: float) -> list[Decoded]:
        if not self._started:
            self._interpreter.connected(now)
            self._started = True
        out: list[Decoded] = []
        for message in self._decoder.feed(data):
            out.append(describe(message))
            if not isinstance(message, DecodeError):
                out += [describe_event(e) for e in self._interpreter.feed(message, now)]
        self._interpreter.take_commands()  # polls the service would send; diag does not
        return out

    def tick(self, now: float) -> list[Decoded]:
        del now
        return []


class _Conversation:
    """Send a command, read decoded messages until one matches or time runs out."""

    def __init__(self, link: Link, decoder: MessageDecoder, codec: Codec) -> None:
        self.link = link
        self._decoder = decoder
        self._codec = codec
        self._pending: deque[Message] = deque()
        self.seen: list[Message] = []

    async def send(self, command: Command) -> None:
        await self.link.send(self._codec.encode_command(command))

    async def wait(
        self, want: Callable[[Message], bool], within: float, step: float | None = None
    ) -> Message | None:
        """The first message ``want`` accepts within ``within`` seconds (``None`` if none);
        returns ``None`` early after ``step`` seconds, when given, so a caller can show
        progress and call again."""
        deadline = time.monotonic() + (within if step is None else min(within, step))
        while True:
            while self._pending:
                message = self._pending.popleft()
                self.seen.append(message)
                if want(message):
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._pending.extend(self._decoder.feed(await self.link.read(left)))

    async def ask(self, command: Command, want: Callable[[Message], bool]) -> Message | None:
        await self.send(command)
        return await self.wait(want, _REPLY_TIMEOUT)


def _is(kind: type[Message]) -> Callable[[Message], bool]:
    return lambda m: isinstance(m, kind)


def _reply_or_nak(kind: type[Message], verb: str) -> Callable[[Message], bool]:
    return lambda m: isinstance(m, kind) or (isinstance(m, Nak) and m.verb in (verb, "?"))


class ShufflerDiagnostics(StreamDriverDiagnostics):
    """``VERS``/``STAT`` identify, ``DCHK`` deck check as the self-test, live decoding."""

    def __init__(self, device: DeviceConfig, settings: DriverSettings) -> None:
        super().__init__(device, settings)
        assert issubclass(self._cls, ShufflerDriver)  # registered for this driver family
        self.codec: Codec = self._cls.codec
        self.family = f"card shuffler ({self.codec.name} protocol)"

    @property
    def shuffler_settings(self) -> ShufflerSettings:
        assert isinstance(self.settings, ShufflerSettings)  # validated with the driver's model
        return self.settings

    def decoder(self) -> LiveDecoder:
        return ShufflerLiveDecoder(self.device.id, self.shuffler_settings, self.codec)

    def encode_send(self, text: str) -> bytes:
        payload = text.strip().upper()
        try:
            items = CommandDecoder().feed(frame(payload.encode("ascii")))
        except (UnicodeEncodeError, ValueError):
            items = []
        if len(items) != 1 or isinstance(items[0], DecodeError):
            raise DiagError(
                f"not a shuffler command: {text!r} (e.g. 'STAT', 'VERS', 'DCHK', 'SHUF;8', "
                "'CLRF' or 'CLRF;1')"
            )
        return self.codec.encode_command(items[0])

    async def identify(self, link: Link) -> Identity:
        talk = _Conversation(link, self.codec.new_decoder(), self.codec)
        version = await talk.ask(QueryVersion(), _is(Version))
        status = await talk.ask(QueryStatus(), _is(Status))
        warnings: list[str] = []
        facts = {"device": self.family, "port": self.port}
        if isinstance(version, Version):
            facts |= {
                "model": version.model,
                "firmware": version.firmware,
                "serial": version.serial,
            }
        else:
            facts["version"] = f"no reply to VERS within {_REPLY_TIMEOUT:g} s"
        if isinstance(status, Status):
            facts["status"] = _status_text(status)
            warnings += [f"fault {c} active: {fault_meaning(c)}" for c in status.faults]
            if status.door_open:
                warnings.append("the door is open")
        else:
            facts["status"] = f"no reply to STAT within {_REPLY_TIMEOUT:g} s"
        naks = [m for m in talk.seen if isinstance(m, Nak)]
        warnings += [f"the shuffler answered NAK {m.verb} {m.reason}" for m in naks]
        return Identity(isinstance(version, Version), facts, tuple(warnings))

    async def selftest(
        self, link: Link, options: SelfTestOptions, progress: Progress
    ) -> SelfTestReport:
        talk = _Conversation(link, self.codec.new_decoder(), self.codec)
        notes: list[str] = []
        if options.prepare:
            notes.append("--power-down is for the SS2 wheel; the shuffler needs no preparation")
        status = await talk.ask(QueryStatus(), _is(Status))
        if not isinstance(status, Status):
            raise DiagError(f"{self.port}: no reply to STAT within {_REPLY_TIMEOUT:g} s")
        if status.state == "shuffling":
            raise DiagError(
                "the shuffler is shuffling; run the deck check when it is READY or IDLE"
            )
        codes = [SelfTestCode(c, fault_meaning(c), ok=False) for c in status.faults]
        if status.faults:
            notes.append(
                "active faults refuse the deck check (NAK FAULT): clear them first "
                "(diag sniff --send CLRF)"
            )
            return SelfTestReport(tuple(codes), 0.0, notes=tuple(notes))
        start = time.monotonic()
        await talk.send(RequestDeckCheck())
        reply: Message | None = None
        while reply is None:
            elapsed = time.monotonic() - start
            if elapsed >= options.timeout:
                return SelfTestReport(tuple(codes), elapsed, timed_out=True, notes=tuple(notes))
            reply = await talk.wait(
                _reply_or_nak(DeckReport, "DCHK"), options.timeout - elapsed, step=1.0
            )
            if reply is None:
                progress(time.monotonic() - start)
        if isinstance(reply, Nak):
            meaning = NAK_REASONS.get(reply.reason, "vendor reason")
            raise DiagError(f"the shuffler refused the deck check: NAK {reply.reason} ({meaning})")
        assert isinstance(reply, DeckReport)
        codes += self._deck_codes(reply)
        return SelfTestReport(tuple(codes), time.monotonic() - start, notes=tuple(notes))

    def _deck_codes(self, report: DeckReport) -> list[SelfTestCode]:
        expected = self.shuffler_settings.decks * 52
        codes: list[SelfTestCode] = []
        if report.cards != expected:
            codes.append(
                SelfTestCode(
                    DECK_WRONG_COUNT,
                    f"counted {report.cards} cards, expected {expected} "
                    f"({self.shuffler_settings.decks} decks): R6, remove the deck",
                    ok=False,
                )
            )
        if report.missing:
            codes.append(SelfTestCode(DECK_MISSING, f"missing: {_cards(report.missing)}", ok=False))
        if report.extra:
            codes.append(SelfTestCode(DECK_EXTRA, f"extra: {_cards(report.extra)}", ok=False))
        if not report.checked:
            codes.append(
                SelfTestCode(
                    DECK_NOT_CHECKED,
                    f"the shuffler reads no card faces: counted {report.cards} only",
                    ok=report.cards == expected,
                )
            )
        elif not codes:
            codes.append(
                SelfTestCode(
                    DECK_COMPLETE,
                    f"deck complete: {report.cards} cards, none missing, none extra",
                    ok=True,
                )
            )
        return codes
