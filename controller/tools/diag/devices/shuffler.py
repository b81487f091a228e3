"""Diagnostics for the card shuffler (``driver = "tablectl-shuffler"``,
``docs/protocols/shuffler.md``), through the driver's own codec and interpreter.

``VERS`` (R9) and ``STAT`` identify; ``DCHK`` (R6) is the self-test. Its codes: the shuffler's own
``FALT`` codes, then diag's deck-check codes that no device sends (``DECK_*``: 0 complete, 100
wrong count, 101 missing, 102 extra, 103 no faces read).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from tablectl.controller.config import DeviceConfig
from tablectl.controller.tools.diag.devices.generic import StreamDriverDiagnostics
from tablectl.controller.tools.diag.devices.plugins import (
    Decoded,
    Identity,
    LiveDecoder,
    Progress,
    SelfTestCode,
    SelfTestOptions,
    SelfTestReport,
)
from tablectl.controller.tools.diag.devices.talk import (
    REPLY_TIMEOUT,
    Conversation,
    InterpretedDecoder,
    framed_command,
    is_a,
    undecodable,
)
from tablectl.controller.tools.diag.errors import DiagError
from tablectl.controller.tools.diag.link import Link
from tablectl.drivers.base import DriverSettings
from tablectl.drivers.events import DeviceEvent
from tablectl.drivers.shuffler.driver import ShufflerDriver, ShufflerSettings
from tablectl.drivers.shuffler.interpreter import ShufflerInterpreter
from tablectl.drivers.shuffler.protocol import (
    FAULT_MEANINGS,
    NAK_REASONS,
    Ack,
    Codec,
    CommandDecoder,
    DeckReport,
    DecodeError,
    Door,
    Fault,
    FaultClear,
    Message,
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

DECK_COMPLETE = 0
DECK_WRONG_COUNT = 100
DECK_MISSING = 101
DECK_EXTRA = 102
DECK_NOT_CHECKED = 103


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
        case DecodeError():
            return undecodable(message)
        case _:  # pragma: no cover - exhaustive
            raise TypeError(f"not a shuffler message: {message!r}")
    return Decoded("message", text, data)


class ShufflerLiveDecoder(InterpretedDecoder[Message]):
    """Bytes → decoded messages and the events the driver would report (no timers; the polls
    the service would send are not sent). Connected at the first bytes."""

    def __init__(self, device_id: str, settings: ShufflerSettings, codec: Codec) -> None:
        interpreter = ShufflerInterpreter(
            device_id,
            status_interval=settings.status_interval,
            missed_polls=settings.missed_polls,
        )
        super().__init__(codec.new_decoder(), interpreter, describe)
        self._started = False

    def feed(self, data: bytes, now: float) -> list[Decoded]:
        if not self._started:
            self._interpreter.connected(now)
            self._started = True
        return super().feed(data, now)

    def _interpret(self, message: Message, now: float) -> list[DeviceEvent]:
        return [] if isinstance(message, DecodeError) else super()._interpret(message, now)


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
        command = framed_command(text, CommandDecoder(), frame)
        if command is None:
            raise DiagError(
                f"not a shuffler command: {text!r} (e.g. 'STAT', 'VERS', 'DCHK', 'SHUF;8', "
                "'CLRF' or 'CLRF;1')"
            )
        return self.codec.encode_command(command)

    def _talk(self, link: Link) -> Conversation[Message]:
        return Conversation(link, self.codec.new_decoder(), self.codec.encode_command)

    async def identify(self, link: Link) -> Identity:
        talk = self._talk(link)
        version = await talk.ask(QueryVersion(), is_a(Version))
        status = await talk.ask(QueryStatus(), is_a(Status))
        warnings: list[str] = []
        facts = {"device": self.family, "port": self.port}
        if isinstance(version, Version):
            facts |= {
                "model": version.model,
                "firmware": version.firmware,
                "serial": version.serial,
            }
        else:
            facts["version"] = f"no reply to VERS within {REPLY_TIMEOUT:g} s"
        if isinstance(status, Status):
            facts["status"] = _status_text(status)
            warnings += [f"fault {c} active: {fault_meaning(c)}" for c in status.faults]
            if status.door_open:
                warnings.append("the door is open")
        else:
            facts["status"] = f"no reply to STAT within {REPLY_TIMEOUT:g} s"
        naks = [m for m in talk.seen if isinstance(m, Nak)]
        warnings += [f"the shuffler answered NAK {m.verb} {m.reason}" for m in naks]
        return Identity(isinstance(version, Version), facts, tuple(warnings))

    async def selftest(
        self, link: Link, options: SelfTestOptions, progress: Progress
    ) -> SelfTestReport:
        talk = self._talk(link)
        notes: list[str] = []
        if options.prepare:
            notes.append("--power-down is for the SS2 wheel; the shuffler needs no preparation")
        status = await talk.ask(QueryStatus(), is_a(Status))
        if not isinstance(status, Status):
            raise DiagError(f"{self.port}: no reply to STAT within {REPLY_TIMEOUT:g} s")
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
        want = _reply_or_nak(DeckReport, "DCHK")
        reply = await talk.wait_long(want, start, options.timeout, progress)
        if reply is None:
            elapsed = time.monotonic() - start
            return SelfTestReport(tuple(codes), elapsed, timed_out=True, notes=tuple(notes))
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
