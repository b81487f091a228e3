"""The lab's people at the table (docs/station.md): a roster with real scrypt hashes, a dealer
signed on at each table before its first round, and one dealer change between rounds.

They come on duty the way a station brings them: a ``cmd/event`` ``staff_on`` naming its
``person``, over the broker. The PINs and badges are the documented examples of
config/roster.example (never to be used on a floor).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from tablectl.controller.config import StaffConfig, TableConfig
from tablectl.controller.games.catalog import CATALOG
from tablectl.controller.lab.roulette import Send
from tablectl.controller.secrets import write_secret
from tablectl.controller.staff.credentials import hash_secret, new_salt
from tablectl.controller.staff.roster import Person, Roster


@dataclass(frozen=True, slots=True)
class Member:
    """One of the lab's crew, with the credentials a station would be given."""

    id: str
    name: str
    roles: tuple[str, ...]
    pin: str
    """In clear here only because it is a documented example (config/roster.example)."""
    badge: str | None = None

    def person(self, badge_salt: bytes) -> Person:
        """The roster's entry: the PIN and badge only as scrypt hashes."""
        badge = None if self.badge is None else hash_secret(self.badge, salt=badge_salt)
        return Person(self.id, self.name, frozenset(self.roles), hash_secret(self.pin), badge)


DEALERS: Final = (
    Member("D-0142", "Ana Ruiz", ("dealer",), "4821", "BADGE-0142"),
    Member("D-0177", "Ben Okafor", ("dealer",), "7730", "BADGE-0177"),
    Member("D-0203", "Chen Wei", ("dealer",), "5092", "BADGE-0203"),
    Member("D-0218", "Dara Novak", ("dealer",), "6604", "BADGE-0218"),
    Member("D-0251", "Eli Haddad", ("dealer",), "1879", "BADGE-0251"),
)
"""One dealer a table, in the order the tables start (a larger floor shares them round)."""
RELIEF: Final = Member("D-0260", "Femi Adeyemi", ("dealer",), "2468", "BADGE-0260")
"""Takes over one table after a few rounds: the demo's dealer change."""
SUPERVISOR: Final = Member("S-0007", "Carla Maas", ("supervisor", "dealer"), "9051", "BADGE-0007")
TECHNICIAN: Final = Member("T-0300", "Dev Patel", ("technician",), "3141")
CREW: Final = (*DEALERS, RELIEF, SUPERVISOR, TECHNICIAN)
CHANGE_AFTER: Final = 3
"""Rounds the first dealer deals before the relief takes over."""
BURN_AFTER_CHANGE: Final = 1
"""``[rules] burn_after_dealer_change`` of the table whose dealer changes, when it is a card
table (R7): the relief's first card is a burn."""


def write_roster(path: Path, members: tuple[Member, ...] = CREW) -> Path:
    """The roster of ``members`` at ``path``, owner-only from its first byte (Roster.dump)."""
    salt = new_salt()
    write_secret(path, Roster(salt, {m.id: m.person(salt) for m in members}).dump())
    return path


def staff_on(member: Member, seq: int) -> dict[str, Any]:
    """The ``cmd/event`` request a station sends when ``member`` swipes their badge."""
    event = {"type": "staff_on", "person": member.id, "role": "dealer", "how": "badge"}
    return {"id": f"staff-{seq}", "person": member.id, "event": event}


@dataclass
class LabCrew:
    """Who works the lab's tables: a dealer each, and a relief for the first card table."""

    roster: Path
    dealers: dict[str, Member] = field(default_factory=dict)
    """Table id → the dealer on duty."""
    replies: list[dict[str, Any] | None] = field(default_factory=list)
    """The tables' replies to every sign-on sent."""
    changed: str | None = None
    """The table whose dealer changes (``None`` until one is picked)."""

    def __post_init__(self) -> None:
        self._next = itertools.cycle(DEALERS)
        self._ids = itertools.count(1)

    def staff(self, config: TableConfig, *, change: bool) -> TableConfig:
        """``config`` with ``[staff]`` (and, on a card table whose dealer changes, the burn R7
        owes after it: ``burn_after_dealer_change``)."""
        update: dict[str, Any] = {"staff": StaffConfig(roster=self.roster)}
        entry = CATALOG.get(config.table.game)
        if change and entry is not None and entry.family == "cards":
            update["rules"] = {**config.rules, "burn_after_dealer_change": BURN_AFTER_CHANGE}
        return config.model_copy(update=update)

    async def sign_on(self, table: str, send: Send, member: Member | None = None) -> None:
        """Sign the table's dealer on (the next of :data:`DEALERS`, or ``member``) and wait for
        the table's answer: the first round opens only with a dealer on duty. A table that has
        not subscribed to its commands yet is asked again."""
        member = member or next(self._next)
        for _ in range(20):
            reply = await send(staff_on(member, next(self._ids)))
            self.replies.append(reply)
            if reply is not None and reply.get("ok"):
                self.dealers[table] = member
                return
            await asyncio.sleep(0.1)
        raise RuntimeError(f"{table}: {member.id} could not sign on: {reply}")

    def relief(self, table: str, send: Send) -> Callable[[int], Awaitable[None]]:
        """What the table's dealer does between rounds: after :data:`CHANGE_AFTER` rounds the
        relief signs on (a dealer change, between rounds)."""
        self.changed = table

        async def between(rounds: int) -> None:
            if rounds == CHANGE_AFTER and self.dealers.get(table) is not RELIEF:
                await self.sign_on(table, send, RELIEF)

        return between
