"""The table's wall clock, watched: a step is detected, journaled, alarmed, and trusted by no one.

Retention deletes by age (R19) and signed commands are fresh within ``max_age``; a +100 d step once
deleted four days of journal. ``CLOCK_BOOTTIME`` cannot be stepped, so on one boot ``wall -
boottime`` changes only with a step. A suspect clock keeps every file and judges commands by nonce;
each clock record's ``discount_s`` is subtracted from a file's age (docs/operations.md).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import structlog

from tablectl.controller.core.time import format_ts, parse_ts_seconds
from tablectl.controller.journal import Journal, JournalRecord
from tablectl.drivers.clock import SYSTEM_CLOCK, Clock

log = structlog.get_logger("tablectl.clock")

CLOCK_STEP: Final = "clock_step"
"""The record type (and alarm) of a detected step, or of the clock's return (``suspect: false``)."""
CLOCK_CONFIRMED: Final = "clock_confirmed"
"""The record type of a supervisor's confirmation: the clock is right now; retention resumes."""
CLOCK_SUSPECT: Final = "clock_suspect"
"""The refusal code of a signed command while the clock is suspect (it cannot be judged fresh)."""

CLOCK_RECORD_TYPES: Final = ("power_on", "power_off", CLOCK_STEP, CLOCK_CONFIRMED)
"""Records whose ``clock`` field holds a reading and the running ``discount_s``."""

_BOOT_ID: Final = Path("/proc/sys/kernel/random/boot_id")
_UNKNOWN: Final = "unknown"
"""The boot id where the kernel does not say: never taken for the same boot as another."""


@dataclass(frozen=True, slots=True)
class ClockReading:
    """The wall clock and ``CLOCK_BOOTTIME`` read together, and which boot this is."""

    wall: float
    boot: float
    boot_id: str

    @property
    def offset(self) -> float:
        """``wall - boot``: constant on one boot unless the wall clock is stepped."""
        return self.wall - self.boot


@functools.cache
def _boot_id() -> str:
    """This boot's id (the kernel's; a process never outlives its boot, so read once)."""
    try:
        return _BOOT_ID.read_text(encoding="ascii").strip()
    except OSError:
        return _UNKNOWN


def read_clock(clock: Clock = SYSTEM_CLOCK) -> ClockReading:
    """The machine's clocks now: ``clock``'s wall time and ``CLOCK_BOOTTIME`` (which keeps
    counting through a suspend; no :class:`Clock` has it)."""
    boot = time.clock_gettime(time.CLOCK_BOOTTIME)
    return ClockReading(wall=clock.now(), boot=boot, boot_id=_boot_id())


@dataclass(frozen=True, slots=True)
class _Reference:
    """A trusted reading (from a clock record, or taken now) and the discount at it."""

    wall: float
    boot: float
    boot_id: str


class ClockWatch:
    """Detects the steps of one table's wall clock against ``CLOCK_BOOTTIME``."""

    def __init__(self, *, max_step: float, read: Callable[[], ClockReading] = read_clock) -> None:
        self.max_step = max_step
        self._read = read
        self._reference: _Reference | None = None
        """The trusted course of the clock: where it was at a known ``CLOCK_BOOTTIME``."""
        self.discount_s = 0.0
        """Seconds of wall time not vouched for, summed since the journal began (retention)."""
        self.suspect: dict[str, Any] | None = None
        """The unconfirmed ``clock_step`` record (``None``: the clock is trusted)."""
        self.steps = 0
        """Steps detected since start (metrics)."""

    # --- from the journal ---------------------------------------------------------------------

    def restore(self, journal: Journal) -> float | None:
        """What the journal says: the newest reading, the discount, an unconfirmed step.

        Returns the newest record's time (seconds), which a clock at start must not be behind.
        """
        newest: JournalRecord | None = None
        for kind in CLOCK_RECORD_TYPES:
            record = journal.last_record_of_type(kind)
            if record is not None and (newest is None or record.seq > newest.seq):
                newest = record
        if newest is not None:
            reading = newest.get("clock")
            if isinstance(reading, dict):
                self._reference = _reading(reading, newest)
                discount = reading.get("discount_s")
                if isinstance(discount, int | float) and not isinstance(discount, bool):
                    self.discount_s = float(discount)
        step = journal.last_record_of_type(CLOCK_STEP)
        confirmed = journal.last_record_of_type(CLOCK_CONFIRMED)
        if (
            step is not None
            and step.get("suspect") is True
            and (confirmed is None or confirmed.seq < step.seq)
        ):
            self.suspect = step.as_dict()
        return parse_ts_seconds(journal.newest_ts)

    # --- the checks ---------------------------------------------------------------------------

    def at_start(self, newest_ts: float | None) -> dict[str, Any] | None:
        """The ``clock_step`` record to journal before ``power_on``, or ``None``. Without a reading
        of the same boot the time since is unverified: discounted, and a step only when behind the
        journal."""
        now = self._read()
        ref = self._reference
        if ref is not None and ref.boot_id == now.boot_id != _UNKNOWN:
            expected = ref.wall + (now.boot - ref.boot)
            record = self._step(expected, now, "start")
        else:
            record = None
            if newest_ts is not None and now.wall < newest_ts - self.max_step:
                record = self._step(newest_ts, now, "start")
            elif newest_ts is not None and now.wall > newest_ts:
                # A reboot (or a journal without readings): nobody vouches for the gap.
                self.discount_s += now.wall - newest_ts
        self._reference = _Reference(now.wall, now.boot, now.boot_id)
        if record is None and self.suspect is not None and ref is not None:
            record = self._returned(now)
        return record

    def check(self) -> dict[str, Any] | None:
        """While running: a ``clock_step`` record when the clock stepped or returned, else
        ``None``. Cheap (two clock reads)."""
        now = self._read()
        ref = self._reference
        if ref is None or ref.boot_id != now.boot_id:
            self._reference = _Reference(now.wall, now.boot, now.boot_id)
            return None
        expected = ref.wall + (now.boot - ref.boot)
        record = self._step(expected, now, "running")
        if record is not None:
            self._reference = _Reference(now.wall, now.boot, now.boot_id)
            return record
        return None

    def off_course(self) -> str | None:
        """Why retention must wait: the wall clock is off the course the watch trusts by more
        than the bound, a step no check has journaled yet; ``None`` when on course (or not
        checked yet: the start holds retention itself). No side effect, any thread (the
        journal's guard, :attr:`Journal.retention_guard`)."""
        ref = self._reference
        if ref is None:
            return None
        now = self._read()
        if ref.boot_id != now.boot_id:
            return None
        step = now.wall - (ref.wall + (now.boot - ref.boot))
        if abs(step) <= self.max_step:
            return None
        return f"the wall clock is {step:+.0f} s off its course (a step not journaled yet)"

    def _step(self, expected: float, now: ClockReading, detected: str) -> dict[str, Any] | None:
        step = now.wall - expected
        if abs(step) <= self.max_step:
            return None
        if self.suspect is not None and self._back_on_course(now):
            return self._returned(now, expected)
        self.discount_s += step
        self.steps += 1
        record = {
            "type": CLOCK_STEP,
            "ts": format_ts(now.wall),
            "before": format_ts(expected),
            "after": format_ts(now.wall),
            "step_s": round(step, 3),
            "detected": detected,
            "max_step_s": self.max_step,
            "suspect": True,
            "clock": self.reading(now),
        }
        if self.suspect is None:
            # The course the clock should return to: before the first unconfirmed step.
            record["trusted"] = {"wall": round(expected, 6), "boot": round(now.boot, 6)}
        else:
            record["trusted"] = self.suspect.get("trusted")
        self.suspect = record
        log.warning(
            "clock_step",
            before=record["before"],
            after=record["after"],
            step_s=record["step_s"],
            detected=detected,
            code=CLOCK_STEP,
            hint="retention suspended and signed commands judged by nonce until a supervisor "
            "confirms the clock (cmd/clock_confirm) or it returns",
        )
        return record

    def _back_on_course(self, now: ClockReading) -> bool:
        """Whether the clock is within the bound of the course it had before it became suspect."""
        trusted = self.suspect.get("trusted") if self.suspect is not None else None
        if not isinstance(trusted, dict):
            return False
        wall, boot = trusted.get("wall"), trusted.get("boot")
        if not isinstance(wall, int | float) or not isinstance(boot, int | float):
            return False
        clock = self.suspect.get("clock") if self.suspect is not None else None
        if not isinstance(clock, dict) or clock.get("boot_id") != now.boot_id:
            return False
        return abs(now.wall - (wall + (now.boot - boot))) <= self.max_step

    def _returned(self, now: ClockReading, expected: float | None = None) -> dict[str, Any] | None:
        """The clock is back on its trusted course: the step is over (``suspect: false``).
        ``expected``: where the stepped clock would be now (``before``); without it, where it was
        at the last step."""
        if not self._back_on_course(now):
            return None
        assert self.suspect is not None
        if expected is None:
            expected = parse_ts_seconds(self.suspect.get("after"))
        # What the suspect steps added to the discount is given back: the clock never left.
        self.discount_s -= _steps_since_trusted(self.suspect)
        record = {
            "type": CLOCK_STEP,
            "ts": format_ts(now.wall),
            "before": format_ts(now.wall if expected is None else expected),
            "after": format_ts(now.wall),
            "step_s": round(now.wall - (now.wall if expected is None else expected), 3),
            "detected": "returned",
            "max_step_s": self.max_step,
            "suspect": False,
            "clock": self.reading(now),
        }
        self.suspect = None
        self._reference = _Reference(now.wall, now.boot, now.boot_id)
        log.warning("clock_returned", after=record["after"], code=CLOCK_STEP)
        return record

    def confirm(self, *, by: str | None, role: str | None) -> dict[str, Any]:
        """A supervisor says the clock is right now: the ``clock_confirmed`` record."""
        now = self._read()
        step = self.suspect or {}
        self.suspect = None
        self._reference = _Reference(now.wall, now.boot, now.boot_id)
        log.warning("clock_confirmed", by=by, role=role, step_s=step.get("step_s"))
        return {
            "type": CLOCK_CONFIRMED,
            "ts": format_ts(now.wall),
            "step_seq": step.get("seq"),
            "step_s": step.get("step_s"),
            "by": by,
            "role": role,
            "clock": self.reading(now),
        }

    def reading(self, now: ClockReading | None = None) -> dict[str, Any]:
        """The ``clock`` field of a clock record: this reading and the discount so far."""
        now = now or self._read()
        return {
            "boot_id": now.boot_id,
            "boot_s": round(now.boot, 6),
            "discount_s": round(self.discount_s, 3),
        }

    def describe(self) -> str | None:
        """One line while the clock is suspect (refusals, ``state``), else ``None``."""
        if self.suspect is None:
            return None
        return (
            f"the table's clock stepped {self.suspect.get('step_s')} s at "
            f"{self.suspect.get('after')} (clock_step) and is not confirmed"
        )


def _reading(reading: dict[str, Any], record: JournalRecord) -> _Reference | None:
    boot, boot_id, wall = reading.get("boot_s"), reading.get("boot_id"), parse_ts_seconds(record.ts)
    if not isinstance(boot, int | float) or not isinstance(boot_id, str) or wall is None:
        return None
    return _Reference(wall, float(boot), boot_id)


def _steps_since_trusted(suspect: dict[str, Any]) -> float:
    """What the unconfirmed steps added to the discount (the last record's ``step_s`` and,
    for a chain of steps, the distance from the trusted course)."""
    trusted = suspect.get("trusted")
    after = parse_ts_seconds(suspect.get("after"))
    clock = suspect.get("clock")
    if isinstance(trusted, dict) and after is not None and isinstance(clock, dict):
        wall, boot, at = trusted.get("wall"), trusted.get("boot"), clock.get("boot_s")
        if (
            isinstance(wall, int | float)
            and isinstance(boot, int | float)
            and isinstance(at, int | float)
        ):
            return after - (float(wall) + (float(at) - float(boot)))
    step = suspect.get("step_s")
    return float(step) if isinstance(step, int | float) else 0.0
