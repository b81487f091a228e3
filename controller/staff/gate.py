"""Who is at the station: a badge or an id with its PIN, checked against the roster, with
lockouts after repeated wrong PINs per person and per station (R13: access is logged).

A lockout lives in the station's memory: a restart of the station clears it, which a person
cannot cause from the screen; every failure and every lockout is logged with person and station
and counted (``tablectl_station_pin_failures_total``, ``…_lockouts_total``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Final

import structlog

from tablectl.controller.staff.credentials import BADGE_PATTERN, PIN_PATTERN
from tablectl.controller.staff.roster import (
    NOT_IN_ROLE,
    PERSON_ID,
    UNKNOWN_PERSON,
    Person,
    Roster,
)

log = structlog.get_logger("tablectl.staff")

UNKNOWN_BADGE: Final = "unknown_badge"
WRONG_PIN: Final = "wrong_pin"
LOCKED_OUT: Final = "locked_out"
PIN_REQUIRED: Final = "pin_required"
BAD_INPUT: Final = "bad_input"


@dataclass(frozen=True, slots=True)
class Identity:
    """A person who proved who they are, for one role, and how (journaled as ``how``)."""

    person: Person
    role: str
    how: str


@dataclass(frozen=True, slots=True)
class Refused:
    code: str
    message: str


@dataclass(slots=True)
class LockoutPolicy:
    """``[station]`` ``max_pin_failures`` within ``failure_window`` seconds lock a person for
    ``lockout_seconds``; twice as many failures, whoever they name, lock the station."""

    max_failures: int = 5
    window: float = 300.0
    lock_seconds: float = 900.0


@dataclass(slots=True)
class Lockouts:
    """Wrong PINs per person and per station (a station also guesses for unknown ids)."""

    policy: LockoutPolicy = field(default_factory=LockoutPolicy)
    failures: dict[str, deque[float]] = field(default_factory=dict)
    locked_until: dict[str, float] = field(default_factory=dict)
    failures_total: int = 0
    lockouts_total: int = 0

    def locked(self, key: str, now: float) -> float | None:
        """Seconds ``key`` stays locked, or ``None``."""
        until = self.locked_until.get(key)
        if until is None or until <= now:
            self.locked_until.pop(key, None)
            return None
        return until - now

    def fail(self, key: str, now: float, *, scale: int = 1) -> bool:
        """Count a wrong PIN against ``key``; ``True`` when this one locks it."""
        window = self.failures.setdefault(key, deque())
        window.append(now)
        while window and window[0] <= now - self.policy.window:
            window.popleft()
        if len(window) < self.policy.max_failures * scale:
            return False
        window.clear()
        self.locked_until[key] = now + self.policy.lock_seconds
        self.lockouts_total += 1
        return True

    def succeed(self, key: str) -> None:
        self.failures.pop(key, None)


@dataclass(slots=True)
class Gate:
    """Checks credentials typed or swiped at one station."""

    roster: Roster
    station: str
    lockouts: Lockouts = field(default_factory=Lockouts)

    def authenticate(
        self,
        *,
        role: str,
        now: float,
        badge: str | None = None,
        person_id: str | None = None,
        pin: str | None = None,
        need_pin: bool = False,
    ) -> Identity | Refused:
        """Badge alone, id + PIN, or badge + PIN (``need_pin``: a supervisor's sign-off)."""
        station_key = f"station:{self.station}"
        wait = self.lockouts.locked(station_key, now)
        if wait is not None:
            return Refused(LOCKED_OUT, f"this station is locked for {_minutes(wait)}")
        person = self._find(badge, person_id)
        if isinstance(person, Refused):
            if person.code != BAD_INPUT and self.lockouts.fail(station_key, now, scale=2):
                minutes = _minutes(self.lockouts.policy.lock_seconds)
                return Refused(
                    LOCKED_OUT, f"{person.message}: this station is locked for {minutes}"
                )
            return person
        wait = self.lockouts.locked(f"person:{person.id}", now)
        if wait is not None:
            return Refused(LOCKED_OUT, f"{person.name} is locked out for {_minutes(wait)}")
        if role not in person.roles:
            return Refused(NOT_IN_ROLE, f"{person.name} is not a {role} on the roster")
        if pin is None:
            if need_pin or badge is None:
                return Refused(PIN_REQUIRED, "enter the PIN")
            return Identity(person, role, "badge")
        if not PIN_PATTERN.fullmatch(pin) or not person.pin_matches(pin):
            return self._wrong_pin(person, station_key, now)
        self.lockouts.succeed(f"person:{person.id}")
        self.lockouts.succeed(station_key)
        return Identity(person, role, "badge+pin" if badge is not None else "pin")

    def _find(self, badge: str | None, person_id: str | None) -> Person | Refused:
        if badge is not None:
            if not BADGE_PATTERN.fullmatch(badge):
                return Refused(BAD_INPUT, "that badge read is not a badge")
            person = self.roster.by_badge(badge)
            if person is None:
                log.warning("staff_unknown_badge", station=self.station)
                return Refused(UNKNOWN_BADGE, "badge not on the roster")
            return person
        if person_id is None or not PERSON_ID.fullmatch(person_id):
            return Refused(BAD_INPUT, "swipe a badge or enter your staff id")
        person = self.roster.person(person_id)
        if person is None:
            return Refused(UNKNOWN_PERSON, f"staff id {person_id} is not on the roster")
        return person

    def _wrong_pin(self, person: Person, station_key: str, now: float) -> Refused:
        self.lockouts.failures_total += 1
        person_locked = self.lockouts.fail(f"person:{person.id}", now)
        station_locked = self.lockouts.fail(station_key, now, scale=2)
        log.warning(
            "staff_wrong_pin",
            person=person.id,
            station=self.station,
            person_locked=person_locked,
            station_locked=station_locked,
        )
        if person_locked or station_locked:
            minutes = _minutes(self.lockouts.policy.lock_seconds)
            who = "this station" if station_locked and not person_locked else person.name
            return Refused(LOCKED_OUT, f"wrong PIN: {who} is locked for {minutes}")
        return Refused(WRONG_PIN, "wrong PIN")


def _minutes(seconds: float) -> str:
    minutes = max(1, round(seconds / 60))
    return f"{minutes} minute" + ("" if minutes == 1 else "s")
