"""The station's desk: who is at it, who signs what, and the command sent on their behalf.

A dealer signs on once (badge, or id + PIN) and the station then signs the dealer's actions with
the ``dealer`` role key naming that person; an action the table's ``[security] require`` gives to
a supervisor or a technician needs one to authenticate for that one action (badge or id, and the
PIN always: ``need_pin``), and is signed with their role key. Every request carries ``person``
(the roster id) and ``by`` inside its signed fields (docs/station.md). Wrong PINs lock the person
and the station (:class:`~tablectl.controller.staff.gate.Gate`): logged and counted here.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import structlog

from tablectl.controller.config import SecurityConfig
from tablectl.controller.mqtt.security import sign_command
from tablectl.controller.staff.gate import Gate, Identity, Refused
from tablectl.controller.staff.roster import STAFF_ROLES
from tablectl.controller.station.actions import ActionError, Command, Said, build, signers, words
from tablectl.drivers.clock import SYSTEM_CLOCK, Clock

log = structlog.get_logger("tablectl.station")

Send = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Publishes a request on ``cmd/{verb}`` and returns the reply (``None``: none in time)."""

NEED_SIGNER: Final = "need_signer"
"""The screen's code for "a supervisor (or technician) must authenticate for this"."""


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a person typed or swiped for one action: a badge or an id, and a PIN."""

    role: str
    badge: str | None = None
    person: str | None = None
    pin: str | None = None

    @classmethod
    def of(cls, fields: Mapping[str, Any] | None, default_role: str) -> Credentials | None:
        if not isinstance(fields, Mapping):
            return None
        found = {k: fields.get(k) for k in ("badge", "person", "pin", "role")}
        text = {k: v.strip() for k, v in found.items() if isinstance(v, str) and v.strip()}
        role = text.get("role", default_role)
        return cls(role, text.get("badge"), text.get("person"), text.get("pin"))


@dataclass
class Desk:
    """One station's sessions and its command path (see the module docstring).

    Args:
        table_id: the table the commands are for (signed into each).
        gate: checks credentials against the roster, with lockouts.
        security: the table's ``[security]`` (``None`` or no roles: a lab table, unsigned).
        keys: the role keys by role (``[security] roles``, read at start).
        send: the command path (:func:`tablectl.controller.tools.commander.send_command`).
        state: the table's latest ``state`` (for the round a void names).
    """

    table_id: str
    gate: Gate
    security: SecurityConfig | None
    keys: Mapping[str, bytes]
    send: Send
    state: Callable[[], Mapping[str, Any] | None] = lambda: None
    clock: Clock = SYSTEM_CLOCK
    """Lockouts count in monotonic seconds: a step of the wall clock neither ends nor extends
    one."""
    on_duty: Identity | None = None
    """The dealer signed on at this station."""
    supervisor_called: float | None = None
    actions: int = 0
    refused: int = 0
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def lab(self) -> bool:
        return not self.keys

    async def authenticate(self, creds: Credentials, *, need_pin: bool) -> Identity | Refused:
        """The gate's answer, off the event loop (a PIN's scrypt takes tens of ms) and one at a
        time (the lockout counters are the gate's, and guessing gets no parallelism)."""
        if creds.role not in STAFF_ROLES:
            return Refused("bad_input", f"no such role: {creds.role}")
        async with self._lock:
            found = await asyncio.to_thread(
                self.gate.authenticate,
                role=creds.role,
                now=self.clock.monotonic(),
                badge=creds.badge,
                person_id=None if creds.badge else creds.person,
                pin=creds.pin,
                need_pin=need_pin,
            )
        if isinstance(found, Refused):
            log.warning(
                "station_refused_credentials",
                station=self.gate.station,
                role=creds.role,
                code=found.code,
                person=creds.person,
            )
        return found

    async def sign_on(self, creds: Credentials, supervisor: Credentials | None = None) -> Said:
        """Sign a person on; a dealer replaces the dealer at this station. With ``supervisor``
        the supervisor signs it (a dealer change during a round)."""
        who = await self.authenticate(creds, need_pin=creds.badge is None)
        if isinstance(who, Refused):
            return _refused(who)
        event: dict[str, Any] = {
            "type": "staff_on",
            "person": who.person.id,
            "role": who.role,
            "how": who.how,
            "name": who.person.name,
        }
        signer = who
        if supervisor is not None:
            boss = await self.authenticate(supervisor, need_pin=True)
            if isinstance(boss, Refused):
                return _refused(boss)
            event["supervisor"] = boss.person.id
            signer = boss
        done = f"{who.person.name} is on duty as {who.role}"
        said = await self._send(Command("event", {"event": event}, done), signer)
        if said.ok and who.role == "dealer":
            self.on_duty = who
        return said

    async def sign_off(self, creds: Credentials | None, reason: str = "break") -> Said:
        """Sign off the dealer at this station, or the person whose credentials these are."""
        if creds is None:
            if self.on_duty is None:
                return Said(False, "Nobody is signed on at this station")
            who: Identity | Refused = self.on_duty
        else:
            who = await self.authenticate(creds, need_pin=creds.badge is None)
        if isinstance(who, Refused):
            return _refused(who)
        event = {
            "type": "staff_off",
            "person": who.person.id,
            "role": who.role,
            "how": who.how,
            "reason": reason,
        }
        said = await self._send(
            Command("event", {"event": event}, f"{who.person.name} is off duty"), who
        )
        if said.ok and self.on_duty is not None and self.on_duty.person.id == who.person.id:
            self.on_duty = None
        return said

    async def act(
        self, action: str, fields: Mapping[str, Any], creds: Credentials | None = None
    ) -> Said:
        """One of the screen's actions: signed by the dealer on duty when the table lets a dealer
        sign it, else by the person who authenticated for it (``creds``), else refused with
        :data:`NEED_SIGNER` and the roles that may (the screen then asks for them)."""
        try:
            command = build(action, fields, self.state())
        except ActionError as exc:
            return Said(False, str(exc), code="bad_input")
        if command.action is None:  # a read (cmd/status): nobody signs it
            said = words(command, await self.send(command.verb, _request(command)))
            return said
        allowed = signers(command, self.security)
        if creds is not None:
            if creds.role not in allowed:
                return Said(False, f"A {creds.role} may not do this here", code="not_in_role")
            who = await self.authenticate(creds, need_pin=True)
            if isinstance(who, Refused):
                return _refused(who)
            return await self._send(command, who)
        if self.on_duty is not None and self.on_duty.role in allowed:
            return await self._send(command, self.on_duty)
        roles = sorted(allowed - {"dealer"}) or sorted(allowed)
        if self.on_duty is None and "dealer" in allowed:
            return Said(False, "Sign on first", code=NEED_SIGNER, detail=",".join(roles))
        names = " or ".join(roles) or "nobody"
        return Said(False, f"A {names} must sign this", code=NEED_SIGNER, detail=",".join(roles))

    def call_supervisor(self, *, cancel: bool = False) -> Said:
        """Ask for a supervisor: shown on the screen (the pit sees the station's log line)."""
        self.supervisor_called = None if cancel else self.clock.monotonic()
        who = self.on_duty.person.id if self.on_duty is not None else None
        log.warning("station_supervisor_called", table=self.table_id, person=who, cancel=cancel)
        return Said(True, "Call cancelled" if cancel else "A supervisor is called")

    async def _send(self, command: Command, who: Identity) -> Said:
        request = {**_request(command), "person": who.person.id}
        if self.keys:
            key = self.keys.get(who.role)
            if key is None:
                return Said(False, f"This table has no {who.role} key: call a technician")
            request = sign_command(
                request,
                verb=command.verb,
                table=self.table_id,
                role=who.role,
                key=key,
                by=who.person.id,
            )
        else:
            request["by"] = who.person.id  # a lab table: unsigned, and the screen says LAB
        self.actions += 1
        reply = await self.send(command.verb, request)
        said = words(command, reply)
        if not said.ok:
            self.refused += 1
        log.info(
            "station_command",
            verb=command.verb,
            person=who.person.id,
            role=who.role,
            ok=said.ok,
            code=said.code,
        )
        return said


def _request(command: Command) -> dict[str, Any]:
    return {**command.payload, "id": f"station-{uuid.uuid4().hex[:12]}"}


def _refused(refused: Refused) -> Said:
    return Said(False, refused.message[:1].upper() + refused.message[1:], code=refused.code)
