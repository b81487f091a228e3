"""Rosters for tests: the lab's crew (controller/lab/crew.py), real scrypt hashes in real files."""

from __future__ import annotations

from pathlib import Path

from tablectl.controller.lab.crew import DEALERS, SUPERVISOR, TECHNICIAN, Member
from tablectl.controller.lab.crew import write_roster as write_lab_roster
from tablectl.controller.staff.credentials import new_salt
from tablectl.controller.staff.roster import Roster

CREW = (DEALERS[0], DEALERS[1], SUPERVISOR, TECHNICIAN)
"""Ana Ruiz (D-0142, PIN 4821), Ben Okafor (D-0177, 7730), Carla Maas (S-0007, supervisor and
dealer, 9051) and Dev Patel (T-0300, technician, 3141, no badge)."""


def make_roster(members: tuple[Member, ...] = CREW) -> Roster:
    salt = new_salt()
    return Roster(salt, {m.id: m.person(salt) for m in members})


def write_roster(path: Path, members: tuple[Member, ...] = CREW) -> Path:
    return write_lab_roster(path, members)
