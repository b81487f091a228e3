"""Rosters for tests: real scrypt hashes (at the smallest cost a roster accepts) in real files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tablectl.controller.staff.credentials import hash_secret, new_salt
from tablectl.controller.staff.roster import Person, Roster


@dataclass(frozen=True)
class Member:
    id: str
    name: str
    roles: tuple[str, ...]
    pin: str
    badge: str | None = None


CREW = (
    Member("D-0142", "Ana Ruiz", ("dealer",), "4821", "BADGE-0142"),
    Member("D-0177", "Ben Okafor", ("dealer",), "7730", "BADGE-0177"),
    Member("S-0007", "Carla Maas", ("supervisor", "dealer"), "9051", "BADGE-0007"),
    Member("T-0300", "Dev Patel", ("technician",), "3141", None),
)


def make_roster(members: tuple[Member, ...] = CREW) -> Roster:
    salt = new_salt()
    people = {
        m.id: Person(
            m.id,
            m.name,
            frozenset(m.roles),
            hash_secret(m.pin),
            None if m.badge is None else hash_secret(m.badge, salt=salt),
        )
        for m in members
    }
    return Roster(salt, people)


def write_roster(path: Path, members: tuple[Member, ...] = CREW) -> Path:
    path.write_text(make_roster(members).dump(), encoding="utf-8")
    path.chmod(0o600)
    return path
