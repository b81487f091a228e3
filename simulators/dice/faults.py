"""The simulated dice unit's fault table: the kinds a scenario or ``--fault kind@game[=value]`` may
script (see the package docstring), and :class:`FaultSpec`, one scripted fault."""

from __future__ import annotations

from typing import Final

from tablectl.drivers.dice.protocol import (
    MAX_DICE,
)
from tablectl.drivers.events import RollInvalidCode
from tablectl.simulators.faults import FaultKinds, ValueRule
from tablectl.simulators.faults import FaultSpec as BaseFaultSpec


def _die(note: str) -> ValueRule:
    return ValueRule.whole("die", low=1, high=MAX_DICE, default=1, metavar="DIE", note=note)


FAULTS: Final = FaultKinds(
    "game",
    {
        "cocked": _die("a die leans on the wall: NRES COCKED, then a re-roll"),
        "off_table": _die("a die leaves the table: NRES OFFTABLE"),
        "unreadable": _die("the reader cannot read a die: NRES UNREAD"),
        "not_at_rest": ValueRule.nothing(note="NRES MOVING"),
        "no_wall": ValueRule.nothing(note="NRES NOWALL"),
        "duplicate_result": ValueRule.nothing(note="the RSLT frame is sent twice"),
        "silence": ValueRule.seconds(5.0, note="the unit hangs from the roll on"),
        "motion_fault": ValueRule.seconds(2.0, note="FALT 1 mid-shake, re-homes after s"),
        "lid_open": ValueRule.seconds(2.0, note="FALT 2 while betting, for s"),
        "reader_fault": ValueRule.seconds(2.0, note="FALT 3 at the read, recovers after s"),
        "garbage": ValueRule.nothing(note="line noise and a broken frame before ROLL"),
        "split": ValueRule.nothing(note="the game's frames in 1-4 byte pieces"),
        "bad_checksum": ValueRule.nothing(note="the RSLT frame's checksum is wrong"),
        "disconnect": ValueRule.seconds(3.0, note="the link drops at the roll for s"),
    },
    examples=("cocked@2", "cocked@2=3", "motion_fault@1=5", "silence@3=4"),
    counts="games since start, from 1; a roll fault strikes the game's first roll",
)
"""The dice unit's fault kinds (see the package docstring): a die number (1-6) for the
no-result kinds that name a die; seconds for ``silence``/``motion_fault``/``lid_open``/
``reader_fault``/``disconnect``; nothing for the rest."""
FAULT_KINDS: Final = FAULTS.names

NO_RESULT_KINDS: Final[dict[str, RollInvalidCode]] = {
    "cocked": "die_cocked",
    "off_table": "die_off_table",
    "unreadable": "dice_unreadable",
    "not_at_rest": "dice_not_at_rest",
    "no_wall": "no_wall_hit",
}
"""Fault kinds that make the unit report no result (``NRES``), with the code it reports."""


class FaultSpec(BaseFaultSpec):
    """A scripted dice-unit fault (:data:`FAULTS`) for game number ``at`` (1-based)."""

    KINDS = FAULTS
