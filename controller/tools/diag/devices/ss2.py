"""Diagnostics for the Cammegh Slingshot 2 wheel (``driver = "cammegh-ss2"``).

Spoken through the production codec and interpreter, so ``diag probe`` shows what the service
would make of the same bytes; where the service would answer (``*R`` after a misspin) it notes it
instead. ``*K`` in host-start mode *starts a game* (reported as a warning); ``*F`` self-test only in
state 6, up to five minutes (vendor guide V2.07).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from tablectl.controller.tools.diag.devices.generic import describe_event
from tablectl.controller.tools.diag.devices.plugins import (
    Decoded,
    DeviceDiagnostics,
    DeviceStatistics,
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
    is_a,
    undecodable,
)
from tablectl.controller.tools.diag.errors import DiagError
from tablectl.controller.tools.diag.link import Link
from tablectl.drivers.ss2.driver import SS2Settings
from tablectl.drivers.ss2.interpreter import SS2Interpreter
from tablectl.drivers.ss2.protocol import (
    FAULT_MEANINGS,
    BallInPocket,
    BareNumber,
    ChiSquare,
    Command,
    CommandDecoder,
    DecodeError,
    Decoder,
    FaultReport,
    Message,
    Reply,
    SensorPassed,
    Status,
    WarningBit,
    encode_command,
    parse_number,
)
from tablectl.drivers.transports.base import ByteStream

STATE_NAMES: dict[int, str] = {
    1: "before game",
    2: "place bets",
    3: "ball in rim",
    4: "no more bets",
    5: "winning number",
    6: "closed",
}

_WARNINGS = (
    (WarningBit.BALL_NOT_SENSED, "ball not sensed"),
    (WarningBit.SAME_DIRECTION, "ball same direction as rotor"),
    (WarningBit.SENSOR_FAULT, "sensor/motor/encoder fault"),
    (WarningBit.LAUNCH_FAILED, "launch failed, retrying"),
)

_TABLE_IDLE = 1.0
"""``*W``: the table is complete when this long passes without another line."""


def fault_meaning(code: int) -> str:
    """The vendor's meaning of a ``*F`` code (unknown codes are said to be unknown)."""
    return FAULT_MEANINGS.get(code, "unknown code (not in the vendor's guide)")


def _warnings_text(bits: int) -> str:
    names = [name for bit, name in _WARNINGS if bits & bit]
    return ", ".join(names) if names else "none"


def _status_text(status: Status) -> str:
    last = "--" if status.last_number is None else str(status.last_number)
    rotor = "cw" if status.rotor_direction == 0 else "ccw"
    name = STATE_NAMES.get(status.state, "?")
    return (
        f"state {status.state} ({name}), spin {status.spin:03d}, last {last}, "
        f"warnings {_warnings_text(status.warnings)}, rotor {status.rotor_rpm_x10 / 10:.1f} rpm "
        f"{rotor}"
    )


def describe(message: Message) -> Decoded:
    """A decoded SS2 message as a technician reads it, with its JSON form."""
    match message:
        case Status():
            return Decoded(
                "message",
                f"status: {_status_text(message)}",
                {"type": "status", **dataclasses.asdict(message)},
            )
        case BareNumber(number):
            return Decoded(
                "message", f"winning number {number}", {"type": "bare", "number": number}
            )
        case Reply(letter, text):
            return Decoded(
                "message",
                f"reply *{letter} {text}".rstrip(),
                {"type": "reply", "letter": letter, "text": text},
            )
        case FaultReport(code):
            meaning = fault_meaning(code)
            return Decoded(
                "message",
                f"*F {code}: {meaning}",
                {"type": "fault", "code": code, "meaning": meaning},
            )
        case ChiSquare(value, percent):
            return Decoded(
                "message",
                f"chi-square {value:.2f} ({percent:.1f} %)",
                {"type": "chi_square", "value": value, "percent": percent},
            )
        case SensorPassed(sensor):
            return Decoded(
                "message", f"ball passed sensor {sensor}", {"type": "sensor", "sensor": sensor}
            )
        case BallInPocket(number):
            return Decoded(
                "message", f"ball in pocket {number}", {"type": "pocket", "number": number}
            )
        case DecodeError():
            return undecodable(message)
    raise TypeError(f"not an SS2 message: {message!r}")  # pragma: no cover - exhaustive


class SS2LiveDecoder(InterpretedDecoder[Message]):
    """Bytes → decoded messages, events, and the commands the driver would send (shown, not sent).
    A status line (every 500 ms) is shown only when more than the rotor speed changed."""

    def __init__(self, device_id: str, settings: SS2Settings, *, mid_stream: bool = True) -> None:
        super().__init__(Decoder(), SS2Interpreter(device_id, settings), describe)
        self._last_status: tuple[int, int, object, int, int] | None = None
        self._syncing = mid_stream
        """Joining a stream that is already flowing (after ``identify`` read part of it): drop
        everything up to the first terminator rather than report half a line as garbage."""

    def feed(self, data: bytes, now: float) -> list[Decoded]:
        if self._syncing:
            cut = max(data.find(b"\n"), data.find(b"\r"))
            if cut < 0:
                return []
            self._syncing = False
            data = data[cut + 1 :]
        return super().feed(data, now)

    def tick(self, now: float) -> list[Decoded]:
        return [describe_event(e) for e in self._interpreter.tick(now)] + self._commands()

    def _show(self, message: Message) -> Decoded | None:
        if isinstance(message, Status):
            key = (
                message.state,
                message.spin,
                message.last_number,
                message.warnings,
                message.rotor_direction,
            )
            if key == self._last_status:
                return None
            self._last_status = key
        return describe(message)

    def _commands(self) -> list[Decoded]:
        return [
            Decoded(
                "note",
                f"the service would send {encode_command(c).decode().strip()} (diag does not)",
                {"type": "would_send", "command": encode_command(c).decode().strip()},
            )
            for c in self._interpreter.take_commands()
        ]


class _Conversation(Conversation[Message]):
    """The wheel's conversation: a fresh status line, a command's ``*<letter>`` reply."""

    def __init__(self, link: Link) -> None:
        super().__init__(link, Decoder(), encode_command)

    @property
    def last_status(self) -> Status | None:
        return self.last(Status)

    async def status(self, within: float = REPLY_TIMEOUT) -> Status | None:
        """A fresh status line (polled with ``*X``; the automatic ones count too)."""
        found = await self.ask(Command.poll(), is_a(Status), within)
        return found if isinstance(found, Status) else None

    async def reply(self, command: Command, within: float = REPLY_TIMEOUT) -> Reply | None:
        """The ``*<letter> …`` reply to ``command``."""
        found = await self.ask(command, _reply_to(command.letter), within)
        return found if isinstance(found, Reply) else None


def _reply_to(letter: str) -> Callable[[Message], bool]:
    return lambda m: isinstance(m, Reply) and m.letter == letter


class SS2Diagnostics(DeviceDiagnostics):
    """``*K``/``*V`` identify, ``*F`` self-test, ``*w``/``*W`` statistics, live decoding."""

    family = "Cammegh Slingshot 2 roulette wheel"

    @property
    def ss2_settings(self) -> SS2Settings:
        assert isinstance(self.settings, SS2Settings)  # validated with the driver's model
        return self.settings

    def open_stream(self) -> ByteStream:
        from tablectl.drivers.transports.serial import SerialStream  # noqa: PLC0415 - pyserial lazily

        if self.device.port is None:
            raise DiagError(f"device {self.device.id!r} has no port")
        # exclusive=True, as the service does: our open fails while the service holds the port,
        # and the service cannot grab the wheel while a technician is talking to it.
        return SerialStream(self.device.port, baudrate=self.ss2_settings.baudrate, exclusive=True)

    def decoder(self) -> LiveDecoder:
        return SS2LiveDecoder(self.device.id, self.ss2_settings)

    def encode_send(self, text: str) -> bytes:
        items = CommandDecoder().feed(text.strip().encode("ascii", "replace") + b"\r\n")
        if len(items) != 1 or isinstance(items[0], DecodeError):
            raise DiagError(f"not an SS2 command: {text!r} (e.g. '*X', '*P 0', '*o 1159')")
        try:
            return encode_command(items[0])
        except ValueError as exc:
            raise DiagError(str(exc)) from None

    async def identify(self, link: Link) -> Identity:
        talk = _Conversation(link)
        status = await talk.status()
        warnings: list[str] = []
        ident = await talk.reply(Command.identify())
        if ident is not None and ident.text == "OK":
            warnings.append("the wheel answered *K OK: it is in host-start mode and STARTED A GAME")
        version = await talk.reply(Command.version())
        status = talk.last_status or status
        facts = {
            "device": self.family,
            "port": self.port,
            "identify": f"*K {ident.text}" if ident is not None else "no reply to *K",
            "firmware": version.text if version is not None else "no reply to *V",
            "status": _status_text(status) if status is not None else "no status line",
        }
        identified = ident is not None and ident.text in ("CAM", "OK")
        return Identity(identified, facts, tuple(warnings))

    async def selftest(
        self, link: Link, options: SelfTestOptions, progress: Progress
    ) -> SelfTestReport:
        talk = _Conversation(link)
        notes: list[str] = []
        status = await talk.status()
        if status is None:
            raise DiagError(f"{self.port}: no status from the wheel within {REPLY_TIMEOUT:g} s")
        if status.state != 6:
            if not options.prepare:
                raise DiagError(
                    f"the wheel is in state {status.state} ({STATE_NAMES[status.state]}); *F runs "
                    "only in state 6 (closed): rerun with --power-down to send *P 0 first"
                )
            if await talk.reply(Command.power(on=False)) is None:
                raise DiagError(f"{self.port}: no reply to *P 0")
            if not await self._reach_closed(talk):
                raise DiagError(f"{self.port}: the wheel did not reach state 6 after *P 0")
            notes.append("sent *P 0 (power down); send *P 1 to power the wheel up again")
        return await self._run_selftest(talk, options, progress, notes)

    async def _reach_closed(self, talk: _Conversation, polls: int = 10) -> bool:
        """Poll ``*X`` (once a second at most) until the wheel reports state 6."""
        for _ in range(polls):
            closed = await talk.ask(
                Command.poll(), lambda m: isinstance(m, Status) and m.state == 6, 1.0
            )
            if closed is not None:
                return True
        return False

    async def _run_selftest(
        self,
        talk: _Conversation,
        options: SelfTestOptions,
        progress: Progress,
        notes: list[str],
    ) -> SelfTestReport:
        await talk.send(Command.self_test())
        start = time.monotonic()
        codes: list[SelfTestCode] = []
        settle_until: float | None = None
        next_progress = start + 1.0
        while True:
            now = time.monotonic()
            if now >= next_progress:
                progress(now - start)
                next_progress += 1.0
            if settle_until is not None and now >= settle_until:
                break
            if now - start >= options.timeout:
                return SelfTestReport(tuple(codes), now - start, timed_out=True, notes=tuple(notes))
            wait = min(next_progress, settle_until or next_progress, start + options.timeout)
            for message in await talk.next_messages(max(0.01, wait - now)):
                if isinstance(message, Reply) and message.letter == "F":
                    raise DiagError(
                        f"the wheel refused the self-test: *F {message.text} (it answers "
                        "only when closed, state 6, and not while still powering up)"
                    )
                if isinstance(message, FaultReport):
                    codes.append(
                        SelfTestCode(message.code, fault_meaning(message.code), message.code == 0)
                    )
                    # *F 0 is the whole answer; fault codes may come one after another.
                    settle_until = (
                        time.monotonic() if message.code == 0 else time.monotonic() + options.settle
                    )
        return SelfTestReport(tuple(codes), time.monotonic() - start, notes=tuple(notes))

    async def statistics(self, link: Link) -> DeviceStatistics:
        talk = _Conversation(link)
        notes: list[str] = []
        chi = await talk.ask(
            Command("w"),
            lambda m: isinstance(m, ChiSquare) or (isinstance(m, Reply) and m.letter == "w"),
        )
        value = percent = None
        if isinstance(chi, ChiSquare):
            value, percent = chi.value, chi.percent
        elif isinstance(chi, Reply):
            notes.append(f"*w answered {chi.text!r} (statistics only in states 5 and 6)")
        else:
            notes.append("no reply to *w")
        counts, table_notes = await self._number_table(talk)
        return DeviceStatistics(value, percent, counts, tuple(notes + table_notes))

    async def _number_table(self, talk: _Conversation) -> tuple[dict[int | str, int], list[str]]:
        counts: dict[int | str, int] = {}
        notes: list[str] = []
        first = await talk.reply(Command("W"))
        if first is None:
            return counts, ["no reply to *W"]
        if first.text == "BUSY":
            return counts, ["*W answered 'BUSY' (statistics only in states 5 and 6)"]
        lines = [first]
        while True:
            more = await talk.ask(None, _reply_to("W"), _TABLE_IDLE)
            if not isinstance(more, Reply):
                break
            lines.append(more)
        for line in lines:
            parts = line.text.split()
            number = parse_number(parts[0].rjust(2).encode()) if len(parts) == 2 else None
            if number is None or not parts[1].isdigit():
                notes.append(f"*W line not understood: {line.text!r}")
                continue
            counts[number] = int(parts[1])
        return counts, notes
