"""Diagnostics for the dice shaker and result reader (``driver = "tablectl-dice"``,
``docs/protocols/dice.md``), through the driver's own codec and interpreter.

``IDNT`` (R9) and ``STAT`` identify; ``TEST`` is the self-test, its codes the unit's ``FALT`` codes
or 0 when it passed. Other commands only on request (``diag sniff --send``).
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
from tablectl.drivers.dice.driver import DiceSettings
from tablectl.drivers.dice.interpreter import DiceInterpreter
from tablectl.drivers.dice.protocol import (
    FAULT_MEANINGS,
    NAK_REASONS,
    Ack,
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


def fault_meaning(code: int) -> str:
    """The reference meaning of a ``FALT`` code (vendor codes 10–99 have none)."""
    return FAULT_MEANINGS.get(code, "vendor fault code (not in the reference list)")


def _status_text(status: Status) -> str:
    faults = ", ".join(f"{c} ({fault_meaning(c)})" for c in status.faults) or "none"
    return f"{status.state}, game #{status.game}, last roll #{status.roll}, faults {faults}"


def describe(message: Message) -> Decoded:
    """A decoded dice message as a technician reads it, with its JSON form."""
    if isinstance(message, DecodeError):
        return undecodable(message)
    data = {"type": type(message).__name__, **dataclasses.asdict(message)}
    fields = ", ".join(f"{k} {v}" for k, v in dataclasses.asdict(message).items() if v != ())
    text = f"{type(message).__name__}: {fields}"
    if isinstance(message, Status):
        text = f"status: {_status_text(message)}"
    elif isinstance(message, Nak):
        text = f"NAK {message.verb} {message.reason}: {NAK_REASONS.get(message.reason, 'vendor')}"
    return Decoded("message", text, data)


class DiceLiveDecoder(InterpretedDecoder[Message]):
    """Bytes → decoded messages and the events the driver would report (no timers; the ``LAST``
    the service would send is not sent)."""

    def __init__(self, device_id: str, settings: DiceSettings) -> None:
        interpreter = DiceInterpreter(
            device_id,
            dice=settings.dice,
            colors=settings.colors,
            poll_interval=settings.poll_interval,
            silence_timeout=settings.silence_timeout,
        )
        super().__init__(Decoder(), interpreter, describe)


def _talk(link: Link) -> Conversation[Message]:
    return Conversation(link, Decoder(), encode_command)


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
        command = framed_command(text, CommandDecoder(), frame)
        if command is None:
            raise DiagError(
                f"not a dice command: {text!r} (e.g. 'STAT', 'IDNT', 'TEST', 'CLOS', 'ROLL', "
                "'LAST', 'CLRF' or 'CLRF;1')"
            )
        return encode_command(command)

    async def identify(self, link: Link) -> Identity:
        talk = _talk(link)
        unit = await talk.ask(Identify(), is_a(UnitIdentity))
        status = await talk.ask(QueryStatus(), is_a(Status))
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
            facts["identity"] = f"no reply to IDNT within {REPLY_TIMEOUT:g} s"
        if isinstance(status, Status):
            facts["status"] = _status_text(status)
            warnings += [f"fault {c} active: {fault_meaning(c)}" for c in status.faults]
        else:
            facts["status"] = f"no reply to STAT within {REPLY_TIMEOUT:g} s"
        naks = [m for m in talk.seen if isinstance(m, Nak)]
        warnings += [f"the unit answered NAK {m.verb} {m.reason}" for m in naks]
        return Identity(isinstance(unit, UnitIdentity), facts, tuple(warnings))

    async def selftest(
        self, link: Link, options: SelfTestOptions, progress: Progress
    ) -> SelfTestReport:
        talk = _talk(link)
        notes: list[str] = []
        if options.prepare:
            notes.append("--power-down is for the SS2 wheel; the dice unit needs no preparation")
        status = await talk.ask(QueryStatus(), is_a(Status))
        if not isinstance(status, Status):
            raise DiagError(f"{self.port}: no reply to STAT within {REPLY_TIMEOUT:g} s")
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
            raise DiagError(f"{self.port}: no reply to TEST within {REPLY_TIMEOUT:g} s")
        report = await talk.wait_long(is_a(TestReport), start, options.timeout, progress)
        if report is None:
            elapsed = time.monotonic() - start
            return SelfTestReport((), elapsed, timed_out=True, notes=tuple(notes))
        assert isinstance(report, TestReport)
        codes = tuple(SelfTestCode(c, fault_meaning(c), ok=False) for c in report.failed)
        if not codes:
            codes = (SelfTestCode(0, f"passed: {report.detail or 'no detail'}", ok=True),)
        elif report.detail:
            notes.append(report.detail)
        return SelfTestReport(codes, time.monotonic() - start, notes=tuple(notes))
