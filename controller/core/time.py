"""Time, written down once: the one ISO 8601 form tablectl writes, and how it reads times back.

Every timestamp the controller writes (journal records, MQTT payloads, signed commands) is UTC
with a ``Z``: ``2026-11-30T10:00:00.123456Z`` (:func:`format_ts`), or whole seconds where a
person reads it (:func:`format_moment` with ``timespec="seconds"``).

One rule for naive times, those without a zone: **refused at the edges.** A naive time says
nothing about which zone it was written in (the signer's? the dealer PC's? UTC?), and a wrong
guess moves a round by hours in a dispute. So wherever a time comes in from outside — a signed
command's ``ts``, ``tablectl export --since``, a record read back from a file — a naive one reads
as no time at all (:func:`parse_ts` gives ``None``; :func:`parse_moment` raises, naming what it
was reading). No module parses ISO times any other way.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final, Literal

from tablectl.controller.core.errors import TimeFormatError

_MAX_ISO: Final = 40
"""Longer than any ISO 8601 time: refused unread (a signed command's field is attacker-sized)."""


def format_ts(at: float) -> str:
    """Seconds since the epoch → ``2026-11-30T10:00:00.123456Z``.

    ``isoformat`` rather than ``strftime``: the same text, a third cheaper, and the runner
    stamps a time on every event.
    """
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def not_before(ts: str, floor: str | None) -> str:
    """``ts``, or ``floor`` when ``ts`` is earlier: journal times never go backwards (a device's
    time taken before a command's, a clock stepped back less than the bound) unless a
    ``clock_step`` record says why (tablectl.controller.service.clock). A time that does not
    parse is left as it is.
    """
    return floor if floor is not None and earlier(ts, floor) else ts


def earlier(ts: str, than: str) -> bool | None:
    """Whether ``ts`` is before ``than``; ``None`` when either is no time (:func:`parse_ts`).

    Both in :func:`format_ts`'s form (:func:`is_canonical`) compare as text, exactly: the
    common case, no parse.
    """
    if is_canonical(ts) and is_canonical(than):
        return ts < than
    given, bound = parse_ts(ts), parse_ts(than)
    return None if given is None or bound is None else given < bound


def is_canonical(ts: str) -> bool:
    """Whether ``ts`` has :func:`format_ts`'s form, in which times order as text."""
    return len(ts) == _CANONICAL and ts[-1] == "Z"


_CANONICAL: Final = len("2026-11-30T10:00:00.123456Z")


def format_moment(
    moment: datetime, timespec: Literal["seconds", "microseconds"] = "microseconds"
) -> str:
    """An aware datetime in UTC with ``Z``; ``timespec="seconds"`` drops the fraction."""
    return moment.astimezone(UTC).isoformat(timespec=timespec).replace("+00:00", "Z")


def parse_ts(text: object) -> datetime | None:
    """An ISO 8601 time with a zone as an aware UTC datetime; ``None`` for anything else.

    ``None`` for: not a string, too long, not ISO 8601, naive (no zone), or out of range.
    """
    if not isinstance(text, str) or len(text) > _MAX_ISO:
        return None
    try:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            return None  # the rule of this module: a naive time is no time
        return moment.astimezone(UTC)
    except (ValueError, OverflowError):  # not ISO 8601, or year 1 with an offset
        return None


def seconds_between(start: object, end: object) -> float | None:
    """Seconds from ``start`` to ``end`` (two event times, :func:`parse_ts`), exact to the
    microsecond; ``None`` when either is no time. The one way a duration is read from ``ts``.
    """
    begun, ended = parse_ts(start), parse_ts(end)
    return None if begun is None or ended is None else (ended - begun).total_seconds()


def parse_ts_seconds(text: object) -> float | None:
    """:func:`parse_ts` as seconds since the epoch."""
    moment = parse_ts(text)
    return None if moment is None else moment.timestamp()


def parse_moment(text: str, what: str) -> datetime:
    """:func:`parse_ts` for a value a person gave (a CLI flag): a one-line error naming ``what``.

    Raises:
        TimeFormatError: not an ISO 8601 time, or one without a zone (naming ``what``).
    """
    moment = parse_ts(text)
    if moment is not None:
        return moment
    try:
        naive = datetime.fromisoformat(text).tzinfo is None
    except ValueError:
        naive = False
    if naive:
        raise TimeFormatError(
            f"{what}: {text!r} has no zone; add Z for UTC or an offset such as +01:00"
        )
    raise TimeFormatError(f"{what}: not an ISO date/time: {text!r}")
