"""``tablectl staff``: make and read the roster (docs/station.md "The roster").

``init`` writes an empty roster with a fresh badge salt; ``add`` asks for the PIN twice and the
badge (a HID reader types it, Enter for none) — or reads them from stdin lines when it is not a
terminal, for provisioning scripts — and rewrites the file owner-only and atomically; ``list``
shows who is on it, never a hash.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.secrets import write_secret
from tablectl.controller.staff.credentials import BADGE_PATTERN, PIN_PATTERN, hash_secret, new_salt
from tablectl.controller.staff.roster import NAME, PERSON_ID, STAFF_ROLES, Person, Roster


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    staff = sub.add_parser(
        "staff",
        help="the staff roster: init, add, list (docs/station.md)",
        description="Make and read the staff roster: badge ids and PINs are kept only as "
        "scrypt hashes, in an owner-only file.",
    )
    actions = staff.add_subparsers(dest="staff_command", required=True, metavar="ACTION")
    for name, text in (
        ("init", "write an empty roster with a new badge salt (mode 0600)"),
        ("add", "add or replace a person (asks for the PIN twice and the badge)"),
        ("list", "show the people on the roster and their roles"),
    ):
        action = actions.add_parser(name, help=text, description=text)
        action.add_argument("--roster", type=Path, required=True, help="the roster file")
        if name == "add":
            action.add_argument("--id", required=True, help="staff id, e.g. D-0142")
            action.add_argument("--name", required=True, help="display name")
            action.add_argument(
                "--role",
                action="append",
                choices=STAFF_ROLES,
                required=True,
                help="a role (repeat for several)",
            )


def run(args: argparse.Namespace) -> int:
    """Raises ConfigError with a one-line reason (the CLI prints it)."""
    path: Path = args.roster
    if args.staff_command == "init":
        if path.exists():
            raise ConfigError(f"staff.roster {path}: exists already (add people with: staff add)")
        write_secret(path, Roster(new_salt(), {}).dump())
        print(f"{path}: empty roster written (mode 0600)")
        return 0
    roster = Roster.load(path)
    if args.staff_command == "list":
        _show(roster)
        return 0
    if not PERSON_ID.fullmatch(args.id):
        raise ConfigError(f"--id {args.id!r} must match {PERSON_ID.pattern}")
    if not NAME.fullmatch(args.name):
        raise ConfigError("--name must be 1 to 64 printable characters")
    pin = _ask("PIN (4-8 digits): ", twice=True)
    if not PIN_PATTERN.fullmatch(pin):
        raise ConfigError("the PIN must be 4 to 8 digits")
    badge = _ask("badge (swipe, or Enter for none): ", twice=False)
    if badge and not BADGE_PATTERN.fullmatch(badge):
        raise ConfigError("a badge read is 4 to 64 printable ASCII characters")
    person = Person(
        args.id,
        args.name,
        frozenset(args.role),
        hash_secret(pin),
        hash_secret(badge, salt=roster.badge_salt) if badge else None,
    )
    updated = roster.with_person(person)
    Roster.parse(_reparse(updated), source=str(path))  # the name, a badge twice: refused here
    write_secret(path, updated.dump())
    print(f"{path}: {person.id} ({person.name}) {', '.join(sorted(person.roles))}")
    return 0


def _reparse(roster: Roster) -> dict[str, object]:
    import tomllib  # noqa: PLC0415

    return tomllib.loads(roster.dump())


def _ask(prompt: str, *, twice: bool) -> str:
    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass(prompt)
    if twice and getpass.getpass("again: ") != first:
        raise ConfigError("the two entries differ")
    return first


def _show(roster: Roster) -> None:
    table = Table(title=f"{roster.source}: {len(roster.people)} people")
    for column in ("id", "name", "roles", "badge"):
        table.add_column(column)
    for person in sorted(roster.people.values(), key=lambda p: p.id):
        roles = ", ".join(sorted(person.roles))
        table.add_row(person.id, person.name, roles, "yes" if person.badge else "PIN only")
    Console().print(table)
