"""Who is on duty at a table: one dealer at a time, supervisors and technicians beside them.

Pure state the engine template keeps (docs/station.md "Staff on duty"), so a replay of the
journal knows the dealer of every round exactly as the live table did. A dealer change happens
between rounds; in a round only with a supervisor's signature (``supervisor`` on the event).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from tablectl.controller.core.events import StaffOff, StaffOn

DEALER_CHANGE_MID_ROUND: Final = "dealer_change_mid_round"
NOT_ON_DUTY: Final = "not_on_duty"
NO_DEALER: Final = "no_dealer"


@dataclass(frozen=True, slots=True)
class OnDuty:
    person: str
    role: str
    name: str | None
    since: str | None

    def view(self) -> dict[str, Any]:
        shown = {"person": self.person, "name": self.name, "since": self.since}
        return {k: v for k, v in shown.items() if v is not None}


@dataclass(frozen=True, slots=True)
class Refusal:
    code: str
    message: str


class Crew:
    """The people on duty, and the dealer who dealt last."""

    def __init__(self) -> None:
        self.people: dict[str, OnDuty] = {}
        self.last_dealer: str | None = None
        """The dealer who dealt last (stays after they sign off: the next one is a change)."""

    @property
    def dealer(self) -> OnDuty | None:
        return next((p for p in self.people.values() if p.role == "dealer"), None)

    def sign_on(self, event: StaffOn, *, in_round: bool) -> Refusal | None:
        dealer = self.dealer
        if event.role == "dealer" and dealer is not None and dealer.person != event.person:
            if in_round and event.supervisor is None:
                return Refusal(
                    DEALER_CHANGE_MID_ROUND,
                    f"dealer change to {event.person} refused: {dealer.person} is dealing a "
                    "round (between rounds, or with a supervisor's signature)",
                )
            del self.people[dealer.person]
        self.people[event.person] = OnDuty(event.person, event.role, event.name, event.ts)
        if event.role == "dealer":
            self.last_dealer = event.person
        return None

    def sign_off(self, event: StaffOff, *, in_round: bool) -> Refusal | None:
        on = self.people.get(event.person)
        if on is None or on.role != event.role:
            return Refusal(NOT_ON_DUTY, f"{event.person} is not on duty as {event.role}")
        if on.role == "dealer" and in_round and event.supervisor is None:
            return Refusal(
                DEALER_CHANGE_MID_ROUND,
                f"{event.person} cannot sign off in a round (after it, or with a supervisor)",
            )
        del self.people[event.person]
        return None

    def view(self) -> dict[str, Any]:
        """The retained ``staff`` topic's body (and the ``state`` snapshot's ``staff``)."""
        dealer = self.dealer
        by_role = sorted(self.people.values(), key=lambda p: (p.role, p.person))
        return {
            "dealer": None if dealer is None else dealer.view(),
            "supervisors": [p.view() for p in by_role if p.role == "supervisor"],
            "technicians": [p.view() for p in by_role if p.role == "technician"],
        }
