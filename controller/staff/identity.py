"""Who sent a command, as far as the table can tell (docs/station.md "Commands name the person").

The station signs each command with the role key of the person who authenticated on it and names
them in the signed ``person``; with a roster the table checks that the person holds that role, and
a staff event may sign on or off only its sender, unless a supervisor signs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from tablectl.controller.core.errors import ControllerError
from tablectl.controller.core.events import StaffOff, StaffOn, TableEvent
from tablectl.controller.staff.roster import NOT_IN_ROLE, PERSON_ID, UNKNOWN_PERSON, Roster

NOT_YOURS: Final = "unauthorised"


class IdentityError(ControllerError, ValueError):
    """A command whose person does not hold up: ``code`` is the refusal's."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Sender:
    """The command record's view of its sender: ``person`` (checked) or an unverified ``by``."""

    person: str | None
    by_unverified: bool

    def fields(self) -> dict[str, Any]:
        if self.person is not None:
            return {"person": self.person}
        return {"by_unverified": True} if self.by_unverified else {}


NOBODY: Final = Sender(None, by_unverified=False)


def sender(roster: Roster | None, request: Mapping[str, Any], role: str | None) -> Sender:
    """Check the request's ``person`` against the roster for the role that signed it.

    Without a roster nothing changes (a table without staff stays byte-identical).

    Raises:
        IdentityError: the person is unknown or does not hold the signing role.
    """
    if roster is None:
        return NOBODY
    person_id = request.get("person")
    if person_id is None:
        return Sender(None, by_unverified=True)
    if not isinstance(person_id, str) or not PERSON_ID.fullmatch(person_id):
        raise IdentityError("bad_request", "'person' must be a roster id")
    person = roster.person(person_id)
    if person is None:
        raise IdentityError(UNKNOWN_PERSON, f"person {person_id} is not on the staff roster")
    if role is not None and role not in person.roles:
        raise IdentityError(NOT_IN_ROLE, f"{person_id} does not hold the role {role!r}")
    return Sender(person_id, by_unverified=False)


def staff_event(
    roster: Roster | None, event: TableEvent, who: Sender, role: str | None
) -> TableEvent:
    """A ``staff_on``/``staff_off`` as the table journals it: its person checked against the
    roster (their name taken from it), and signed off by a supervisor only if one signed.

    Raises:
        IdentityError: naming what does not hold up.
    """
    if not isinstance(event, StaffOn | StaffOff):
        return event
    if roster is not None:
        person = roster.person(event.person)
        if person is None:
            raise IdentityError(UNKNOWN_PERSON, f"person {event.person} is not on the roster")
        if event.role not in person.roles:
            raise IdentityError(NOT_IN_ROLE, f"{event.person} is not a {event.role} on the roster")
        if isinstance(event, StaffOn):
            event = replace(event, name=person.name)
    if who.person is None:
        return event
    if role == "supervisor" and (event.person != who.person or event.supervisor is not None):
        # A supervisor signs someone on or off (or a change mid-round): their own id, not a claim.
        return replace(event, supervisor=who.person, how="supervisor")
    if event.person != who.person:
        raise IdentityError(NOT_YOURS, f"{who.person} may sign on or off only themself")
    if event.supervisor is not None:
        raise IdentityError(NOT_YOURS, "only a supervisor's signature signs off for a supervisor")
    return event
