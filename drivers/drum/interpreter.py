"""Ball drum: decoded messages + time in, device events out. Pure (STYLE practice 1).

The drum reports levels (state every second, heartbeats every 200 ms) and edges that may arrive
twice (a reader resends a frame it did not see acknowledged); the engine wants each fact once.
Rules (``docs/protocols/drum.md`` §6–7):

* a frame with the same reader and sequence counter as its previous read is that frame again;
* within one draw the same number at the same (or an unknown) position is a re-read
  (``rereads``); at a different position it is reported, since two balls cannot share a number
  and the engine must decide;
* a ball out of range is reported all the same (``out_of_range``): dropping it would hide a
  foreign ball in the tube;
* a rebooted reader (uptime went backwards) forgets its last sequence number;
* :class:`TubeFull` once per fill, re-armed when the receiver empties;
* faults latch from fault frames (edges) and the state frame's bits (the level, which tells a
  reconnecting host what cleared); a reader that stops heartbeating latches
  ``drum_reader_silent_<r>`` while the drum stays available;
* a drum unavailable for ``relink_after`` makes :meth:`DrumInterpreter.tick` raise
  :class:`TransportClosedError`: how an unplugged socketcan adapter is noticed.

Frames from other nodes, acknowledgements and commands produce no events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from tablectl.drivers.drum.protocol import (
    Ack,
    BallReport,
    Command,
    DrumMessage,
    DrumState,
    FaultKind,
    FaultReport,
    Heartbeat,
    NodeState,
    Opcode,
    TubeFullReport,
)
from tablectl.drivers.errors import TransportClosedError
from tablectl.drivers.events import (
    BallRead,
    DeviceAvailable,
    DeviceEvent,
    FaultLatch,
    MixingChanged,
    TubeFull,
    silent,
)

FAULT_BLOWER = "drum_blower_fault"
FAULT_GATE = "drum_gate_fault"
FAULT_SENSOR = "drum_sensor_fault"
FAULT_NOT_OPERATIONAL = "drum_not_operational"

_KIND_CODES = {
    FaultKind.BLOWER: FAULT_BLOWER,
    FaultKind.GATE: FAULT_GATE,
    FaultKind.SENSOR: FAULT_SENSOR,
}


def fault_code(kind: FaultKind, reader: int = 0) -> str:
    """The stable code of a drum fault (``drum_blower_fault``, ``drum_reader_fault_2``)."""
    if kind is FaultKind.READER:
        return f"drum_reader_fault_{reader}"
    return _KIND_CODES[kind]


def reader_silent_code(reader: int) -> str:
    """``drum_reader_silent_<r>``: reader ``r`` stopped heartbeating."""
    return f"drum_reader_silent_{reader}"


class InterpreterSettings(Protocol):
    """What the interpreter reads from :class:`tablectl.drivers.drum.driver.DrumSettings` (a
    protocol, so this module does not import the driver module and with it asyncio)."""

    @property
    def node_id(self) -> int: ...

    @property
    def readers(self) -> int: ...

    @property
    def heartbeat_timeout(self) -> float: ...

    @property
    def balls(self) -> int: ...

    @property
    def first_ball(self) -> int: ...

    @property
    def relink_after(self) -> float: ...


@dataclass
class _Reader:
    last_heartbeat: float | None = None
    uptime: int | None = None
    last_seq: int | None = None


class DrumInterpreter:
    """Turns decoded drum messages into events; see the module docstring.

    ``count`` is called with a diagnostic counter's name.
    """

    def __init__(
        self,
        device_id: str,
        settings: InterpreterSettings,
        *,
        count: Callable[[str], None] | None = None,
    ) -> None:
        self.device_id = device_id
        self.settings = settings
        self._count = count or (lambda _name: None)
        self.available = False
        self.state: DrumState | None = None
        """The last state frame (technician tools; kept across silence and reconnects)."""
        self.faults = FaultLatch(self.device_id)
        """Latched fault codes → detail."""
        self._last_controller: float | None = None
        self._controller_uptime: int | None = None
        self._readers = {r: _Reader() for r in range(1, settings.readers + 1)}
        self._readers_ref: float | None = None
        self._mixing: bool | None = None
        self._tube_full_reported = False
        self._draw: list[tuple[int, int]] = []  # (ball, position) of this draw's reads
        self.last_ack: Ack | None = None
        """The drum's last acknowledgement (technician tools)."""
        self._commands: list[Command] = []
        self._connected = False
        self._quiet_since: float | None = None

    # --- entry points --------------------------------------------------------------------------

    def connected(self, now: float) -> None:
        """A (re)connect: ask for the state at once instead of waiting up to a second for the
        periodic one (its answer also settles faults that cleared while the link was down)."""
        self._connected = True
        self._quiet_since = now
        # Token 0: the driver's commands use 1-255, so this answer is never taken for theirs.
        self._commands.append(Command(self.settings.node_id, Opcode.QUERY_STATUS))

    def take_commands(self) -> list[Command]:
        """Commands the host must send now, oldest first; empties the queue."""
        commands, self._commands = self._commands, []
        return commands

    def feed(self, message: DrumMessage, now: float) -> list[DeviceEvent]:
        """Events caused by ``message`` arriving at ``now``."""
        base = self.settings.node_id
        offset = message.node - base
        if not 0 <= offset <= self.settings.readers:
            self._count("foreign_frames")
            return []
        events: list[DeviceEvent] = []
        if offset == 0 and not isinstance(message, Command):
            self._last_controller = now
            if not self.available:
                self.available = True
                self._readers_ref = now
                events.append(DeviceAvailable(device=self.device_id, at=now))
        match message:
            case Heartbeat():
                events += self._heartbeat(message, offset, now)
            case DrumState():
                if offset == 0:
                    events += self._state(message, now)
            case BallReport():
                events += self._ball(message, offset, now)
            case TubeFullReport():
                if offset == 0:
                    events += self._tube_full(now)
            case FaultReport():
                code = fault_code(message.kind, message.reader)
                if message.active:
                    events += self.faults.latch(code, detail=f"detail {message.detail}", now=now)
                else:
                    events += self.faults.clear(code, now=now)
            case Ack():
                if offset == 0:
                    self.last_ack = message
            case Command():
                pass
        return events

    def tick(self, now: float) -> list[DeviceEvent]:
        """Timers: controller silence, reader silence, and a silent bus (raises to relink)."""
        events = self._silence(now)
        if not self._connected:
            return events
        if self.available:
            self._quiet_since = None
        elif self._quiet_since is None:
            self._quiet_since = now
        elif now - self._quiet_since > self.settings.relink_after:
            # Unavailable, so there was nothing more to say (events is empty).
            self._count("relinks")
            self._quiet_since = None
            raise TransportClosedError(
                f"no frame from the drum for {self.settings.relink_after:g} s: reopening"
            )
        return events

    def _silence(self, now: float) -> list[DeviceEvent]:
        timeout = self.settings.heartbeat_timeout
        if not self.available:
            return []
        if self._last_controller is not None and now - self._last_controller > timeout:
            self.available = False
            return silent(
                self.device_id, now, f"no frame from node {self.settings.node_id} for {timeout:g} s"
            )
        events: list[DeviceEvent] = []
        for number, reader in self._readers.items():
            ref = reader.last_heartbeat
            if ref is None or (self._readers_ref is not None and ref < self._readers_ref):
                ref = self._readers_ref
            if ref is not None and now - ref > timeout:
                events += self.faults.latch(
                    reader_silent_code(number), detail=f"no heartbeat for {timeout:g} s", now=now
                )
        return events

    def connection_lost(self, now: float) -> list[DeviceEvent]:
        """The link dropped: forget liveness only.

        Faults, mixing and the draw's reads are kept: the drum did not forget them, and the first
        state frame after reconnecting settles what changed.
        """
        del now
        self.available = False
        self._last_controller = None
        self._connected = False
        return []

    # --- handlers ------------------------------------------------------------------------------

    def _heartbeat(self, hb: Heartbeat, offset: int, now: float) -> list[DeviceEvent]:
        if offset == 0:
            if self._controller_uptime is not None and hb.uptime < self._controller_uptime:
                self._count("reboots")
            self._controller_uptime = hb.uptime
            if hb.state is NodeState.OPERATIONAL:
                return self.faults.clear(FAULT_NOT_OPERATIONAL, now=now)
            return self.faults.latch(
                FAULT_NOT_OPERATIONAL, detail=f"node state {hb.state.name}", now=now
            )
        reader = self._readers[offset]
        if reader.uptime is not None and hb.uptime < reader.uptime:
            self._count("reboots")
            reader.last_seq = None  # a rebooted reader counts its reads from scratch
        reader.uptime = hb.uptime
        reader.last_heartbeat = now
        return self.faults.clear(reader_silent_code(offset), now=now)

    def _state(self, state: DrumState, now: float) -> list[DeviceEvent]:
        events: list[DeviceEvent] = []
        self.state = state
        if state.mixing != self._mixing:
            self._mixing = state.mixing
            events.append(MixingChanged(device=self.device_id, at=now, on=state.mixing))
        if state.tube_count == 0:
            self._draw.clear()
        if state.tube_full:
            events += self._tube_full(now)
        else:
            self._tube_full_reported = False
        # The fault bits are levels: they raise what we missed and clear what went away.
        for kind, code in _KIND_CODES.items():
            if kind in state.faults:
                events += self.faults.latch(code, detail="reported in drum state", now=now)
            else:
                events += self.faults.clear(code, now=now)
        for number in range(1, self.settings.readers + 1):
            code = fault_code(FaultKind.READER, number)
            if number in state.reader_faults:
                events += self.faults.latch(code, detail="reported in drum state", now=now)
            else:
                events += self.faults.clear(code, now=now)
        return events

    def _ball(self, report: BallReport, offset: int, now: float) -> list[DeviceEvent]:
        if offset != report.reader:
            # A reader's frame must come from its own node; anything else is a misconfigured
            # node id, and trusting either number could credit the read to the wrong reader.
            self._count("reader_mismatch")
            return []
        reader = self._readers[offset]
        if reader.last_seq == report.seq:
            self._count("repeated_frames")
            return []
        reader.last_seq = report.seq
        position = report.position or None
        for ball, seen_at in self._draw:
            if ball == report.ball and (position is None or seen_at in (0, report.position)):
                self._count("rereads")
                return []
        self._draw.append((report.ball, report.position))
        low = self.settings.first_ball
        if not low <= report.ball < low + self.settings.balls:
            self._count("out_of_range")
        return [
            BallRead(
                device=self.device_id,
                at=now,
                ball=report.ball,
                reader=report.reader,
                position=position,
                quality=report.quality,
            )
        ]

    def _tube_full(self, now: float) -> list[DeviceEvent]:
        if self._tube_full_reported:
            return []
        self._tube_full_reported = True
        return [TubeFull(device=self.device_id, at=now)]
