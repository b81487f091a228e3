"""The operator's staff roster: who may work a table, in which roles, and how they prove it.

A TOML file, owner-only like every secret file (:mod:`tablectl.controller.secrets`)::

    badge_salt = "…"                 # base64; one per venue (credentials.py says why)

    [[person]]
    id = "D-0142"
    name = "Ana Ruiz"
    roles = ["dealer"]
    badge = "scrypt$16384$8$1$…"     # optional: signs on by PIN only
    pin = "scrypt$16384$8$1$…"

``tablectl staff add`` writes entries; nothing here ever holds a badge id or a PIN in clear.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tablectl.controller.config import TableConfig
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.secrets import read_secret
from tablectl.controller.staff.credentials import CredentialError, SlowHash, hash_secret

STAFF_ROLES: Final = ("dealer", "supervisor", "technician")
"""The roles a person can hold on the floor; the same names as ``[security] roles`` keys."""
PERSON_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
NAME: Final = re.compile(r"[^\x00-\x1f\x7f]{1,64}")
MAX_PERSONS: Final = 10_000
UNKNOWN_PERSON: Final = "unknown_person"
NOT_IN_ROLE: Final = "not_in_role"
"""Refusal codes of a person the roster does not hold (in that role): the station's and the
table's alike."""


@dataclass(frozen=True, slots=True)
class Person:
    id: str
    name: str
    roles: frozenset[str]
    pin: SlowHash
    badge: SlowHash | None = None

    def pin_matches(self, pin: str) -> bool:
        return self.pin.matches(pin)

    def as_toml(self) -> str:
        roles = ", ".join(f'"{r}"' for r in sorted(self.roles))
        lines = ["[[person]]", f'id = "{self.id}"', f"name = {_toml_string(self.name)}"]
        lines.append(f"roles = [{roles}]")
        if self.badge is not None:
            lines.append(f'badge = "{self.badge}"')
        lines.append(f'pin = "{self.pin}"')
        return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class Roster:
    badge_salt: bytes
    people: Mapping[str, Person]
    source: str = "<memory>"

    @classmethod
    def load(cls, path: Path) -> Roster:
        """Read and check a roster file.

        Raises:
            ConfigError: one line naming the file, the person and the field at fault.
        """
        what = "staff.roster"
        data = read_secret(path, what)
        try:
            raw = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{what} {path}: not a TOML file: {exc}") from None
        return cls.parse(raw, source=str(path))

    @classmethod
    def parse(cls, raw: Mapping[str, Any], *, source: str = "<memory>") -> Roster:
        where = f"staff.roster {source}"
        unknown = sorted(set(raw) - {"badge_salt", "person"})
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
        salt = _salt(raw.get("badge_salt"), where)
        entries = raw.get("person", [])
        if not isinstance(entries, list) or len(entries) > MAX_PERSONS:
            raise ConfigError(f"{where}: person must be a list of at most {MAX_PERSONS} tables")
        people: dict[str, Person] = {}
        badges: dict[bytes, str] = {}
        for index, entry in enumerate(entries, start=1):
            person = _person(entry, f"{where}: person {index}", salt)
            if person.id in people:
                raise ConfigError(f"{where}: person {index}: id {person.id!r} appears twice")
            if person.badge is not None:
                other = badges.setdefault(person.badge.digest, person.id)
                if other != person.id:
                    raise ConfigError(
                        f"{where}: person {index} ({person.id}) has the badge of {other}"
                    )
            people[person.id] = person
        return cls(salt, people, source)

    def person(self, person_id: str) -> Person | None:
        return self.people.get(person_id)

    def by_badge(self, badge: str) -> Person | None:
        """The person whose badge this is: one slow hash per cost in use, then a lookup."""
        badges = [(p.badge, p) for p in self.people.values() if p.badge is not None]
        digests = {
            cost: hash_secret(badge, salt=self.badge_salt, cost=cost).digest
            for cost in {b.cost for b, _ in badges}
        }
        for hashed, person in badges:
            if hmac.compare_digest(hashed.digest, digests[hashed.cost]):
                return person
        return None

    def holding(self, role: str) -> list[Person]:
        return sorted((p for p in self.people.values() if role in p.roles), key=lambda p: p.id)

    def dump(self) -> str:
        head = "# tablectl staff roster (docs/station.md). Owner-only: chmod 600.\n"
        salt = base64.b64encode(self.badge_salt).decode("ascii")
        body = "\n".join(p.as_toml() for p in self.people.values())
        return f'{head}badge_salt = "{salt}"\n\n{body}'

    def with_person(self, person: Person) -> Roster:
        return Roster(self.badge_salt, {**self.people, person.id: person}, self.source)


def _salt(value: object, where: str) -> bytes:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: badge_salt: a base64 string is required")
    try:
        salt = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError(f"{where}: badge_salt: not base64") from None
    if len(salt) < 16:
        raise ConfigError(f"{where}: badge_salt: {len(salt)} bytes, need at least 16")
    return salt


def _person(entry: object, where: str, salt: bytes) -> Person:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: not a table")
    unknown = sorted(set(entry) - {"id", "name", "roles", "badge", "pin"})
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
    person_id = entry.get("id")
    if not isinstance(person_id, str) or not PERSON_ID.fullmatch(person_id):
        raise ConfigError(f"{where}: id must match {PERSON_ID.pattern}")
    where = f"{where} ({person_id})"
    name = entry.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ConfigError(f"{where}: name must be 1 to 64 printable characters")
    roles = entry.get("roles")
    if not isinstance(roles, list) or not roles or any(r not in STAFF_ROLES for r in roles):
        raise ConfigError(f"{where}: roles must be a non-empty list of {', '.join(STAFF_ROLES)}")
    pin = _hash(entry.get("pin"), f"{where}: pin")
    if pin is None:
        raise ConfigError(f"{where}: pin: a hash is required (tablectl staff add makes one)")
    badge = _hash(entry.get("badge"), f"{where}: badge")
    if badge is not None and badge.salt != salt:
        raise ConfigError(f"{where}: badge: not hashed with this roster's badge_salt")
    return Person(person_id, name, frozenset(roles), pin, badge)


def _hash(value: object, where: str) -> SlowHash | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{where}: a hash string is required")
    try:
        return SlowHash.parse(value)
    except CredentialError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _toml_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def roster_for(config: TableConfig) -> Roster | None:
    """The table's staff roster (``[staff] roster``), read now; ``None`` without ``[staff]``.

    Raises:
        ConfigError: the file is missing, open to group/others, or names a person badly.
    """
    return None if config.staff is None else Roster.load(config.staff.roster)


def describe_staff(config: TableConfig) -> list[str]:
    """``check-config``'s line about the staff roster (read and checked now)."""
    roster = roster_for(config)
    if roster is None:
        return []
    counts = ", ".join(f"{len(roster.holding(r))} {r}s" for r in STAFF_ROLES)
    required = config.staff is not None and config.staff.dealer_required
    dealer = "a round opens only with a dealer on duty" if required else "dealer optional"
    return [f"staff: roster {roster.source}: {len(roster.people)} people ({counts}); {dealer}"]
