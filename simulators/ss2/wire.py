"""The simulated SS2's serial port: :class:`HostPort`, the half of
:class:`~tablectl.simulators.ss2.model.SimSS2` that talks, through the production decoder and
encoder, with a game's wire faults (garbage, split) applied.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from tablectl.drivers.ss2.protocol import (
    ChiSquare,
    Command,
    CommandDecoder,
    DecodeError,
    Message,
    Number,
    Reply,
    Status,
    encode_message,
)
from tablectl.simulators.chunks import Chunk, noise_burst
from tablectl.simulators.ss2.phases import (
    IDLE_TICKS,
    MODE_HOST_START,
    SELF_TEST_SECONDS,
    STALE_LIMIT,
    GamePlan,
    HandlerReply,
    Phase,
    chi2_cdf,
)
from tablectl.simulators.timeline import SerialModel


class HostPort(SerialModel[int, Number]):
    """The wheel's serial port 1: what :class:`~tablectl.simulators.ss2.model.SimSS2` hears and
    says. A mixin: the state below is the model's, set in its ``__init__``."""

    _rng: random.Random
    _mode: int
    _pockets: int
    _awaiting_host: bool
    _decoder: CommandDecoder
    _phase: Phase
    _length: int | None
    _game: GamePlan | None
    _angle: float
    _sensor_stream: bool
    _status_on: bool
    _fault_code: int | None
    _launches: int
    _misfires: int
    _silent_until: float
    _clock_offset: timedelta
    _params: dict[str, str]
    _handlers: dict[str, Callable[[str, float], HandlerReply]]

    if TYPE_CHECKING:  # the model's own, which the handlers call

        def _enter(self, phase: Phase, length: int | None) -> None: ...
        def _abort(self) -> None: ...
        def _start_game(self, t: float) -> None: ...
        def _status(self) -> Status: ...

    # --- host bytes in -------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> bytes:
        """Handle host bytes at ``now``; return the immediate replies.

        Output due by ``now`` waits for :meth:`advance`; call it first when wire order matters.
        """
        self._run_until(now)
        if now < self._silent_until or self.link_down(now):
            return b""  # a hung controller or a pulled cable: the bytes are lost
        replies = bytearray()
        for item in self._decoder.feed(data):
            if isinstance(item, DecodeError):
                self._ignored += 1
                continue
            self._host_spoke()
            reply = self._command(item, now)
            if reply is None:
                self._ignored += 1
            else:
                replies += reply
        return bytes(replies)

    # --- output --------------------------------------------------------------------------------

    def _emit(self, at: float, message: Message) -> None:
        """Queue one line, applying this game's wire faults (disconnect, garbage, split)."""
        if self.link_down(at) or self._outbox.size > STALE_LIMIT:
            return
        data = encode_message(message)
        game = self._game
        rng = self._rng
        # Garbage only before a `*` line: the decoder resynchronises on it, so the garbage costs
        # exactly two decode errors and never eats a bare number or sensor line.
        if (
            game is not None
            and game.has("garbage")
            and data.startswith(b"*")
            and (not game.garbage_sent or rng.random() < 0.25)
        ):
            game.garbage_sent = True
            # No digits: no piece of noise can pass for a bare number.
            noise = noise_burst(rng, b"*", avoid=b"0123456789")
            self._outbox.append(Chunk(at, noise, partial=game.has("split")))
        if game is not None and game.has("split"):
            self._outbox.append_split(at, data, rng)
            return
        self._outbox.append(Chunk(at, data))

    # --- commands ------------------------------------------------------------------------------

    def _command(self, command: Command, now: float) -> bytes | None:
        """Act on one host command; the reply bytes, or ``None`` if the wheel ignores it."""
        handler = self._handlers.get(command.letter)
        if handler is None:
            return None  # *s and *C, which the simulator does not model
        result = handler(command.argument.strip(), now)
        if result is None or isinstance(result, bytes):
            return result
        return b"".join(encode_message(m) for m in result)

    def _cmd_power(self, arg: str, now: float) -> HandlerReply:
        if arg == "0":
            self._abort()
            self._enter(Phase.CLOSED, None)
        elif arg == "1":
            if self._phase.state == 6:
                self._fault_code = None
                self._enter(Phase.IDLE, IDLE_TICKS)
        else:
            return None
        return [Reply("P", "OK")]

    def _cmd_restart(self, arg: str, now: float) -> HandlerReply:
        self._fault_code = None
        self._abort()
        self._enter(Phase.IDLE, IDLE_TICKS)
        return [Reply("R", "OK")]

    def _cmd_short_version(self, arg: str, now: float) -> HandlerReply:
        return [Reply("S", "1.22")]

    def _cmd_version(self, arg: str, now: float) -> HandlerReply:
        return [Reply("V", "SS2 controller V1.22 (tablectl simulator)")]

    def _cmd_identify(self, arg: str, now: float) -> HandlerReply:
        return [Reply("K", "OK" if self._host_start(now) else "CAM")]

    def _cmd_start(self, arg: str, now: float) -> HandlerReply:
        if arg not in ("0", "1"):
            return None
        if arg == "1":
            self._host_start(now)
        return [Reply("u", "OK")]

    def _cmd_poll(self, arg: str, now: float) -> HandlerReply:
        return [self._status()]

    def _cmd_sensor_stream(self, arg: str, now: float) -> HandlerReply:
        if arg not in ("0", "4"):
            return None
        self._sensor_stream = arg == "4"
        return [Reply("I", "OK")]

    def _cmd_mode(self, arg: str, now: float) -> HandlerReply:
        if not arg.isdigit() or int(arg) > 0xFFFF:
            return None
        self._mode = int(arg)
        if (
            not self._mode & MODE_HOST_START
            and self._length is None
            and self._phase
            in (
                Phase.IDLE,
                Phase.RESULT,
            )
        ):
            self._length = 0  # was holding for a host start: carry on at the next tick
        return [Reply("o", str(self._mode))]

    def _cmd_status_protocol(self, arg: str, now: float) -> HandlerReply:
        if arg not in ("0", "1"):
            return None
        self._status_on = arg == "1"
        return [Reply("q", "OK")]

    def _statistics_ready(self) -> bool:
        """``*w``, ``*W``, ``*M`` answer only between games (states 5 and 6)."""
        return self._phase in (Phase.RESULT, Phase.CLOSED)

    def _cmd_chi_square(self, arg: str, now: float) -> HandlerReply:
        return [self._chi_square() if self._statistics_ready() else Reply("w", "BUSY")]

    def _cmd_number_table(self, arg: str, now: float) -> HandlerReply:
        if not self._statistics_ready():
            return [Reply("W", "BUSY")]
        return [Reply("W", f"{n} {c}") for n, c in self._number_counts()]

    def _cmd_misfire_table(self, arg: str, now: float) -> HandlerReply:
        if not self._statistics_ready():
            return [Reply("M", "BUSY")]
        return [Reply("M", f"{self._misfires} {self._launches}")]

    def _cmd_self_test(self, arg: str, now: float) -> HandlerReply:
        if self._phase is not Phase.CLOSED:
            return [Reply("F", "BUSY")]
        self._cancel("self_test")
        self._schedule(now + SELF_TEST_SECONDS / self._speed, "self_test")
        return b""  # the results come later, as *F lines

    def _cmd_encoder(self, arg: str, now: float) -> HandlerReply:
        return [Reply("A", str(int(self._angle * 4096) % 4096))]

    def _host_spoke(self) -> None:
        """End a ``wait_for_host`` hold: the first game starts at the next tick."""
        if not self._awaiting_host:
            return
        self._awaiting_host = False
        held = self._length is None and self._phase in (Phase.IDLE, Phase.RESULT)
        if held and not self._mode & MODE_HOST_START:
            self._length = 0

    def _host_start(self, now: float) -> bool:
        """``*K`` / ``*u 1`` in host-start mode while idle (state 1 or 5): start a game."""
        if not self._mode & MODE_HOST_START or self._phase not in (Phase.IDLE, Phase.RESULT):
            return False
        self._start_game(now)
        return True

    def _cmd_setup(self, arg: str, now: float) -> HandlerReply:
        """``*T``: lower-case letter + value sets, upper-case letter queries, ``f`` persists."""
        parts = arg.split()
        if not parts:
            return None
        key = parts[0]
        if key == "f" and len(parts) == 1:
            return encode_message(Reply("T", "OK"))
        if key.isupper() and key.lower() in self._params and len(parts) == 1:
            return encode_message(Reply("T", f"{key.lower()} {self._params[key.lower()]}"))
        if key in self._params and len(parts) == 2:
            try:
                float(parts[1])
            except ValueError:
                return None
            self._params[key] = parts[1]
            return encode_message(Reply("T", "OK"))
        return None

    def _clock(self, now: float) -> datetime:
        origin = self._origin if self._origin is not None else now
        elapsed = timedelta(seconds=(now - origin) * self._speed)
        return (
            datetime(2024, 1, 1) + self._clock_offset + elapsed
        )  # the wheel's RTC is naive local time

    def _cmd_clock(self, arg: str, now: float) -> HandlerReply:
        """``*d g`` reads the wheel's clock (wheel time runs ``speed`` times faster); ``*d s``."""
        parts = arg.split()
        current = self._clock(now)
        if parts == ["g"]:
            return encode_message(Reply("d", current.strftime("%H:%M:%S %d/%m/%y")))
        fields = "YMDhms"  # the order of datetime's constructor arguments
        if len(parts) == 3 and parts[0] == "s" and parts[1] in fields and parts[2].isdigit():
            value = int(parts[2])
            if parts[1] == "Y" and value < 100:
                value += 2000
            values = list(current.timetuple()[:6])
            values[fields.index(parts[1])] = value
            try:
                # The wheel's RTC is naive local time.
                wanted = datetime(values[0], values[1], values[2], values[3], values[4], values[5])
            except ValueError:
                return None
            self._clock_offset += wanted - current
            return encode_message(Reply("d", "OK"))
        return None

    def _number_counts(self) -> list[tuple[Number, int]]:
        pockets: list[Number] = list(range(37))
        if self._pockets == 38:
            pockets.append("00")
        return [(n, self._results.count(n)) for n in pockets]

    def _chi_square(self) -> ChiSquare:
        """Pearson chi-square of the stored results against a fair wheel, and its percentile."""
        total = len(self._results)
        if total == 0:
            return ChiSquare(0.0, 0.0)
        expected = total / self._pockets
        chi = sum((c - expected) ** 2 / expected for _, c in self._number_counts())
        return ChiSquare(round(chi, 2), round(100 * chi2_cdf(chi, self._pockets - 1), 1))

    def _self_test_codes(self) -> list[int]:
        codes = [self._fault_code] if self._fault_code is not None else []
        if self._game is not None and self._game.has("sensor_fault"):
            codes.append(int(self._game.value("sensor_fault")))
        return codes or [0]
