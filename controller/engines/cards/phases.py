"""The card table's phases: the strict machine every card table runs, and the codes of the card
engine's verdicts and voids (docs/verdicts.md, "Card games").

Phases (the machine's states)::

shuffle_completed (ok)                      round_open shuffling ───────────────────────────────▶
[burn] ──▶ idle ───────────▶ open ▲   shuffle_completed (count wrong) ─▶ shoe_end      ▲
│ bets_closed │                                        │  ▲        │ settle / void  ▼
└──────────── shuffle_started ───────────┘  └────────┴──────────── dealing ◀─┐ settle_last /
void_last   │ hold │ confirm (cut card's last coup,    ▼      │ (resume) shoe empty)
pending_decision

One event with several outcomes fires internal names; :func:`accepted` names them as they come.
Rule anchors: ``misdeal`` (seed-002-004 BAC 2.1.6 / BJ 2.1.3, R10; burned, R7); ``extra_card``
(seed-000 BAC-I1, BAC-I2; BJ-I1; seed-001 §3.0 (2)); ``deal_without_bets`` (BAC-I3);
``wrong_card_count`` (PKH-21); ``hand_cancelled`` (PKH-22)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from tablectl.controller.core.statemachine import MachineDefinition, Transition
from tablectl.controller.engines.base import IDLE, OPEN

__all__ = [
    "BURNING",
    "BURN_INCOMPLETE",
    "COUP_ABANDONED",
    "CUT_CARD_REPEATED",
    "DEALING",
    "DEAL_ERROR_NOTED",
    "DEAL_WITHOUT_BETS",
    "DECISION_PENDING",
    "EXTRA_CARD",
    "HAND_CANCELLED",
    "IDLE",
    "MACHINE",
    "NO_ACTION_COUP",
    "NO_OPEN",
    "OPEN",
    "PENDING_DECISION",
    "READ_ERROR",
    "SHOE_END",
    "SHOE_EXHAUSTED",
    "SHOE_REMOVED",
    "SHUFFLE_REQUIRED",
    "SHUFFLING",
    "VOID_DEVICE_FAULT",
    "VOID_MISDEAL",
    "VOID_SHOE_EXHAUSTED",
    "accepted",
]

DEALING: Final = "dealing"
PENDING_DECISION: Final = "pending_decision"
BURNING: Final = "burn"
SHUFFLING: Final = "shuffling"
SHOE_END: Final = "shoe_end"

# Void reasons produced by the engine.
VOID_MISDEAL: Final = "misdeal"
VOID_DEVICE_FAULT: Final = "device_fault"
VOID_SHOE_EXHAUSTED: Final = "shoe_exhausted"
HAND_CANCELLED: Final = "hand_cancelled"

# Verdict codes.
EXTRA_CARD: Final = "extra_card"
DEAL_WITHOUT_BETS: Final = "deal_without_bets"
NO_ACTION_COUP: Final = "no_action_coup"
COUP_ABANDONED: Final = "coup_abandoned"
READ_ERROR: Final = "read_error"
DECISION_PENDING: Final = "decision_pending"
BURN_INCOMPLETE: Final = "burn_incomplete"
SHUFFLE_REQUIRED: Final = "shuffle_required"
CUT_CARD_REPEATED: Final = "cut_card_repeated"
SHOE_EXHAUSTED: Final = "shoe_exhausted"
SHOE_REMOVED: Final = "shoe_removed"
DEAL_ERROR_NOTED: Final = "deal_error_noted"
"""A reported deal error the game's rules let the round survive (a card exposed that lies face
up anyway): journaled as a verdict, the round goes on."""

# What the phases refuse a round_open for, before the latches are looked at.
NO_OPEN: Final = {
    PENDING_DECISION: (DECISION_PENDING, "a round waits for a supervisor", "GEN-11"),
    BURNING: (BURN_INCOMPLETE, "the burn of the new shoe is not complete", "BAC-E6"),
    SHUFFLING: (SHUFFLE_REQUIRED, "the shoe is being shuffled", "seed-004 BAC 3.5.4"),
    SHOE_END: (SHUFFLE_REQUIRED, "no round before the shoe is shuffled", "seed-004 BAC 3.5.4"),
}


def _definition(name: str) -> MachineDefinition:
    """The card table's machine (same for every card game; games differ in their deal)."""
    t: list[Transition] = []

    def add(source: str, event: str, target: str) -> None:
        t.append(Transition(source, event, target))

    shoe_loaded = (
        ("shuffle_started", SHUFFLING),
        ("shoe_ok", IDLE),
        ("shoe_burn", BURNING),
        ("shoe_rejected", SHOE_END),
    )
    latches = ("fault", "fault_cleared", "shoe_removed", "read_error")
    # idle: between coups.
    for event, target in (
        ("round_open", OPEN),
        ("card", IDLE),
        ("idle_last", SHOE_END),
        ("cut_card", IDLE),
        ("shoe_empty", SHOE_END),
        *shoe_loaded,
    ):
        add(IDLE, event, target)
    # In a round: the ends, and what keeps it where it is.
    ends = (("settle", IDLE), ("settle_last", SHOE_END), ("void", IDLE), ("void_last", SHOE_END))
    for phase in (OPEN, DEALING, PENDING_DECISION):
        for event, target in ends:
            if phase == OPEN and event.startswith("settle"):
                continue
            add(phase, event, target)
        for event in ("cut_card", "fault_cleared", "read_error", "card"):
            if phase != OPEN or event != "card":
                add(phase, event, phase)
        if phase != OPEN:
            add(phase, "hold", PENDING_DECISION)
    add(OPEN, "bets_closed", DEALING)
    add(OPEN, "fault", OPEN)
    add(OPEN, "shoe_removed", OPEN)
    add(OPEN, "round_open", OPEN)
    add(OPEN, "misdeal", IDLE)
    add(OPEN, "misdeal_last", SHOE_END)
    add(DEALING, "round_open", OPEN)
    add(DEALING, "decision", DEALING)
    add(DEALING, "confirm", DEALING)
    # A studio RNG's draw before the first card (only games with one: their own handler fires
    # this internal name, so a card game without an RNG still refuses an ``rng_draw``).
    for phase in (DEALING, PENDING_DECISION):
        add(phase, "rng_committed", phase)
    add(PENDING_DECISION, "decision", PENDING_DECISION)
    add(PENDING_DECISION, "resume", DEALING)
    # burn: the procedure of a new shoe; a supervisor may accept it as done (confirm).
    for event, target in (
        ("card", BURNING),
        ("burn_done", IDLE),
        ("confirm", IDLE),
        ("cut_card", BURNING),
        ("shoe_empty", SHOE_END),
        *shoe_loaded,
    ):
        add(BURNING, event, target)
    for event, target in shoe_loaded:
        add(SHUFFLING, event, target)
    for event, target in (("card", SHOE_END), ("shoe_empty", SHOE_END), *shoe_loaded):
        add(SHOE_END, event, target)
    for phase in (IDLE, BURNING, SHUFFLING, SHOE_END):
        for event in latches:
            add(phase, event, phase)
    return MachineDefinition(
        name,
        states=(IDLE, OPEN, DEALING, PENDING_DECISION, BURNING, SHUFFLING, SHOE_END),
        initial=IDLE,
        transitions=t,
    )


MACHINE: Final = _definition("card_table")
"""Built (and so validated) at import."""

_ALIASES: Final = {
    "shuffle_completed": "shoe_ok",
    "confirm": "resume",
    "void": "void_last",
    "rng_draw": "rng_committed",
}


def accepted(phase: str, events: Iterable[str]) -> str:
    """Which of ``events`` (event types, as they come) ``phase`` takes: for verdict messages."""
    moves = MACHINE.allowed(phase)
    names = {t for t in events if t in moves or _ALIASES.get(t) in moves}
    return ", ".join(sorted(names)) or "none"
