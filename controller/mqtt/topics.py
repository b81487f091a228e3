"""The MQTT topic scheme (contracts §4.3), written down in exactly one place.

Pure. The publisher asks :meth:`Topics.routes` where a record goes, so a new topic is a change here
and in its test only.

    {prefix}/{table}/status             retained  online/offline (birth + Last Will)
    {prefix}/{table}/state              retained  table phase, round, counters
    {prefix}/{table}/events                       every journal record, in seq order
    {prefix}/{table}/outcome            retained  the last round's outcome
    {prefix}/{table}/alarms                       fault / fault_cleared / clock_step /
                                                  clock_confirmed records
    {prefix}/{table}/anchor             retained  the newest keyed anchor
    {prefix}/{table}/devices/{id}       retained  one device's availability and faults
    {prefix}/{table}/cmd/{verb}                   commands in
    {prefix}/{table}/cmd/{verb}/reply             replies out
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tablectl.controller.journal.anchors import ANCHOR

ALARM_TYPES = frozenset({"fault", "fault_cleared", "clock_step", "clock_confirmed"})
"""Record types that also go to ``alarms``."""

_FORBIDDEN = frozenset("+#/\0")


def _check_level(what: str, value: str) -> str:
    # One topic level each: a '/' would shift every level after it, and a wildcard would make a
    # publish topic invalid or a subscription match more than intended.
    if not value or _FORBIDDEN.intersection(value):
        raise ValueError(f"{what} {value!r} is not a single MQTT topic level")
    return value


@dataclass(frozen=True)
class Topics:
    """All topics of one table under ``{prefix}/{table_id}/``.

    ``prefix`` may span several levels (``site/studio1``) but holds no wildcards.
    """

    prefix: str
    table_id: str

    def __post_init__(self) -> None:
        if not self.prefix or "+" in self.prefix or "#" in self.prefix or "\0" in self.prefix:
            raise ValueError(f"topic prefix {self.prefix!r} must be non-empty without wildcards")
        if self.prefix.startswith("/") or self.prefix.endswith("/"):
            raise ValueError(f"topic prefix {self.prefix!r} must not start or end with '/'")
        _check_level("table id", self.table_id)

    @property
    def base(self) -> str:
        """``{prefix}/{table}``, the root of this table's topics."""
        return f"{self.prefix}/{self.table_id}"

    @property
    def status(self) -> str:
        return f"{self.base}/status"

    @property
    def state(self) -> str:
        return f"{self.base}/state"

    @property
    def staff(self) -> str:
        """Who is on duty (retained; docs/station.md)."""
        return f"{self.base}/staff"

    @property
    def events(self) -> str:
        return f"{self.base}/events"

    @property
    def outcome(self) -> str:
        return f"{self.base}/outcome"

    @property
    def alarms(self) -> str:
        return f"{self.base}/alarms"

    @property
    def anchor(self) -> str:
        """The newest keyed anchor, retained: a copy of the journal's keyed head off the machine
        (R13, R15), which whoever can edit the journal cannot reach."""
        return f"{self.base}/anchor"

    def device(self, device_id: str) -> str:
        return f"{self.base}/devices/{_check_level('device id', device_id)}"

    def command(self, verb: str) -> str:
        return f"{self.base}/cmd/{_check_level('command verb', verb)}"

    def reply(self, verb: str) -> str:
        return f"{self.command(verb)}/reply"

    @property
    def command_filter(self) -> str:
        """Subscription for all commands; ``+`` is one level, so replies never loop back."""
        return f"{self.base}/cmd/+"

    def command_verb(self, topic: str) -> str | None:
        """The verb of a command topic of this table, or ``None`` for any other topic."""
        head = f"{self.base}/cmd/"
        if not topic.startswith(head):
            return None
        verb = topic[len(head) :]
        if not verb or _FORBIDDEN.intersection(verb):
            return None
        return verb

    def retained_records(self) -> dict[str, str]:
        """Record type -> the retained topic that holds the newest record of that type.

        The publisher re-publishes these from the journal on every (re)connect: a broker
        restarted without persistence has lost them, and only the journal still knows them.
        """
        return {"outcome": self.outcome, ANCHOR: self.anchor}

    def routes(self, record: Mapping[str, Any]) -> list[tuple[str, bool]]:
        """Where a journal record is published: ``(topic, retain)`` pairs, ``events`` first.

        Every record goes to ``events`` (not retained: a late subscriber wants the current
        outcome, not an arbitrary last event); outcomes also to the retained ``outcome``;
        faults and their clearing also to ``alarms``; keyed anchors also to the retained
        ``anchor``.
        """
        out = [(self.events, False)]
        kind = record.get("type")
        if kind == "outcome":
            out.append((self.outcome, True))
        elif kind in ALARM_TYPES:
            out.append((self.alarms, False))
        elif kind == ANCHOR:
            out.append((self.anchor, True))
        return out
