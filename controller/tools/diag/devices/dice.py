"""Diagnostics for the dice shaker and result reader (``driver = "tablectl-dice"``, reference
protocol, ``docs/protocols/dice.md``).

Spoken through the driver's own codec (:mod:`tablectl.drivers.dice.protocol`) and interpreter, so
``diag probe`` shows what the service would make of the same bytes. Commands used: ``IDNT``
(model, firmware, serial, number of dice, colours: R9) and ``STAT`` to identify; ``TEST`` (a test
shake and read between games) as the self-test. ``CLOS``, ``ROLL``, ``CLRF`` and ``LAST`` are sent
only when a technician asks (``diag sniff --send``).

Self-test codes: the unit's own fault codes (``FALT``: 1 shaker motion, 2 lid open, 3 reader,
10–99 vendor) that are active when the test starts or that the test found, or 0 when it passed.
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
from tablectl.drivers.dice.driver import DiceSettings
from tablectl.drivers.dice.interpreter import DiceInterpreter
from tablectl.drivers.dice.protocol import (
    FAULT_MEANINGS,
    NAK_REASONS,
    Ack,
    Command,
    CommandDecoder,
    DecodeError,
    Decoder,
    Identify,
    Message,
    Nak,
    QueryStatus,
    SelfTest,
    Status,
    TestReport,
    encode_command,
    frame,
)
from tablectl.drivers.dice.protocol import Identity as UnitIdentity

__all__ = ["DiceDiagnostics", "DiceLiveDecoder", "describe"]

_REPLY_TIMEOUT = 2.0
"""Seconds to wait for ``IDNT``/``STAT``/``ACK`` replies."""


def fault_meaning(code: int) -> str:
    """The reference meaning of a ``FALT`` code (vendor codes 10–99 have none)."""
    return FAULT_MEANINGS.get(code, "vendor fault code (not in the reference list)")


def _status_text(status: Status) -> str:
    faults = ", ".join(f"{c} ({fault_meaning(c)})" for c in status.faults) or "none"
    return f"{status.state}, game #{status.game}, last roll #{status.roll}, faults {faults}"


def describe(message: Message) -> Decoded:
    """A decoded dice message as a technician reads it, with its JSON form."""
    if isinstance(message, DecodeError):
        return Decoded(
            "error",
            f"undecodable: {message.reason}: {message.raw!r}",
            {"type": "decode_error", "reason": message.reason, "raw": message.raw.hex()},
        )
    data = {"type": type(message).__name__, **dataclasses.asdict(message)}
    fields = ", ".join(f"{k} {v}" for k, v in dataclasses.asdict(message).items() if v != ())
    text = f"{type(message).__name__}: {fields}"
    if isinstance(message, Status):
        text = f"status: {_status_text(message)}"
    elif isinstance(message, Nak):
        text = f"NAK {message.verb} {message.reason}: {NAK_REASONS.get(message.reason, 'vendor')}"
    return Decoded("message", text, data)


class DiceLiveDecoder:
    """Bytes → decoded messages and the events the driver would report.

    No timers: the service polls ``STAT`` and calls the unit silent when no frame comes, but
    diag sends no polls, so that verdict would be wrong here.
    """

    def __init__(self, device_id: str, settings: DiceSettings) -> None:
        self._decoder = Decoder()
        self._interpreter = DiceInterpreter(
            device_id,
            dice=settings.dice,
            colors=settings.colors,
            poll_interval=settings.poll_interval,
            silence_timeout=settings.silence_timeout,
        )

    def feed(self, data: bytes, now: float) -> list[Decoded]:
        out: list[Decoded] = []
        for message in self._decoder.feed(data):
            out.append(describe(message))
            out += [describe_event(e) for e in self._interpreter.feed(message, now)]
        self._interpreter.take_commands()  # LAST the service would send; diag does not
        return out

    def tick(self, now: float) -> list[Decoded]:
        del now
        return []


class _Conversation:
    """Send a command, read decoded messages until one matches or time runs out."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self._decoder = Decoder()
        self._pending: deque[Message] = deque()
        self.seen: list[Message] = []

    async def send(self, command: Command) -> None:
        await self.link.send(encode_command(command))

    async def wait(
        self, want: Callable[[Message], bool], within: float, step: float | None = None
    ) -> Message | None:
        """The first message ``want`` accepts within ``within`` seconds (``None`` if none);
        returns ``None`` early after ``step`` seconds, when given, so a caller can show progress
        and call again."""
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


def _is(kind: type) -> Callable[[Message], bool]:
    return lambda m: isinstance(m, kind)


def _reply(verb: str) -> Callable[[Message], bool]:
    return lambda m: isinstance(m, Ack | Nak) and m.verb in (verb, "?")


class DiceDiagnostics(StreamDriverDiagnostics):
    """``IDNT``/``STAT`` identify, ``TEST`` as the self-test, live decoding."""

    family = "dice shaker and result reader (tablectl reference protocol)"

    def __init__(self, device: DeviceConfig, settings: DriverSettings) -> None:
        super().__init__(device, settings)
        self.family = DiceDiagnostics.family

    @property
    def dice_settings(self) -> DiceSettings:
        assert isinstance(self.settings, DiceSettings)  # validated with the driver's model
        return self.settings

    def decoder(self) -> LiveDecoder:
        return DiceLiveDecoder(self.device.id, self.dice_settings)

    def encode_send(self, text: str) -> bytes:
        try:
            items = CommandDecoder().feed(frame(text.strip().upper().encode("ascii")))
        except (UnicodeEncodeError, ValueError):
            items = []
        if len(items) != 1 or isinstance(items[0], DecodeError):
            raise DiagError(
                f"not a dice command: {text!r} (e.g. 'STAT', 'IDNT', 'TEST', 'CLOS', 'ROLL', "
                "'LAST', 'CLRF' or 'CLRF;1')"
            )
        return encode_command(items[0])

    async def identify(self, link: Link) -> Identity:
        talk = _Conversation(link)
        unit = await talk.ask(Identify(), _is(UnitIdentity))
        status = await talk.ask(QueryStatus(), _is(Status))
        facts = {"device": self.family, "port": self.port}
        warnings: list[str] = []
        if isinstance(unit, UnitIdentity):
            colors = ",".join(unit.colors) or "not told apart"
            facts |= {
                "model": unit.model,
                "firmware": unit.firmware,
                "serial": unit.serial,
                "dice": f"{unit.dice} ({colors})",
            }
            configured = self.dice_settings
            if unit.dice != configured.dice:
                warnings.append(f"the table is configured for {configured.dice} dice")
            if configured.colors is not None and sorted(unit.colors) != sorted(configured.colors):
                warnings.append(f"the table's colours are {','.join(configured.colors)}")
        else:
            facts["identity"] = f"no reply to IDNT within {_REPLY_TIMEOUT:g} s"
        if isinstance(status, Status):
            facts["status"] = _status_text(status)
            warnings += [f"fault {c} active: {fault_meaning(c)}" for c in status.faults]
        else:
            facts["status"] = f"no reply to STAT within {_REPLY_TIMEOUT:g} s"
        naks = [m for m in talk.seen if isinstance(m, Nak)]
        warnings += [f"the unit answered NAK {m.verb} {m.reason}" for m in naks]
        return Identity(isinstance(unit, UnitIdentity), facts, tuple(warnings))

    async def selftest(
        self, link: Link, options: SelfTestOptions, progress: Progress
    ) -> SelfTestReport:
        talk = _Conversation(link)
        notes: list[str] = []
        if options.prepare:
            notes.append("--power-down is for the SS2 wheel; the dice unit needs no preparation")
        status = await talk.ask(QueryStatus(), _is(Status))
        if not isinstance(status, Status):
            raise DiagError(f"{self.port}: no reply to STAT within {_REPLY_TIMEOUT:g} s")
        if status.faults:
            notes.append("active faults refuse the self-test: clear them first (--send CLRF)")
            codes = tuple(SelfTestCode(c, fault_meaning(c), ok=False) for c in status.faults)
            return SelfTestReport(codes, 0.0, notes=tuple(notes))
        start = time.monotonic()
        reply = await talk.ask(SelfTest(), _reply("TEST"))
        if isinstance(reply, Nak):
            meaning = NAK_REASONS.get(reply.reason, "vendor reason")
            raise DiagError(f"the unit refused the self-test: NAK {reply.reason} ({meaning})")
        if reply is None:
            raise DiagError(f"{self.port}: no reply to TEST within {_REPLY_TIMEOUT:g} s")
        report: Message | None = None
        while report is None:
            elapsed = time.monotonic() - start
            if elapsed >= options.timeout:
                return SelfTestReport((), elapsed, timed_out=True, notes=tuple(notes))
            report = await talk.wait(_is(TestReport), options.timeout - elapsed, step=1.0)
            if report is None:
                progress(time.monotonic() - start)
        assert isinstance(report, TestReport)
        codes = tuple(SelfTestCode(c, fault_meaning(c), ok=False) for c in report.failed)
        if not codes:
            codes = (SelfTestCode(0, f"passed: {report.detail or 'no detail'}", ok=True),)
        elif report.detail:
            notes.append(report.detail)
        return SelfTestReport(codes, time.monotonic() - start, notes=tuple(notes))
