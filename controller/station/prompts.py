"""What the table expects next, in the words a dealer uses ("Deal Player's second card").

Pure: from the table's retained ``state`` (the engine's snapshot), its ``status`` and the verdict
that asks for something (:mod:`.live`), per game family. The engine stays the authority: a
prompt only reads its snapshot (the dealer-screen games' ``deal``, baccarat's coup through the
game's own ``next_expected``), so a wrong prompt can mislead the dealer, never the table.

Tones: ``go`` (the dealer acts), ``wait`` (a device or the table acts), ``stop`` (a supervisor
is needed). ``key_in`` names what the dealer may key in now (``card``, ``number``, ``dice``,
``beads``, ``segment``, ``ball``), ``None`` when nothing is due.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from tablectl.controller.games.catalog import CATALOG
from tablectl.drivers.cards import parse_card

Tone = Literal["go", "wait", "stop"]

ORDINALS: Final = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


@dataclass(frozen=True, slots=True)
class Prompt:
    text: str
    tone: Tone = "wait"
    key_in: str | None = None
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class Table:
    """What a prompt needs to know of the table besides its state."""

    game: str
    betting: str = "device"
    """``[betting] mode``: ``dealer`` means the dealer opens and closes betting here."""
    dealer_required: bool = False
    """``[staff] dealer_required``: no round opens without a dealer on duty."""

    @property
    def family(self) -> str:
        entry = CATALOG.get(self.game)
        return entry.family if entry is not None else "unknown"

    @property
    def decisions(self) -> bool:
        """Whether the dealer closes decision windows (a dealer-screen card game)."""
        entry = CATALOG.get(self.game)
        return entry is not None and entry.dealer_screen


def expects(
    table: Table,
    state: Mapping[str, Any] | None,
    status: Mapping[str, Any] | None = None,
    asking: Mapping[str, Any] | None = None,
    *,
    dealer: bool = True,
) -> Prompt:
    """The prompt for the table as it stands; faults and a locked table come first, then a
    table that needs a dealer on duty (``dealer``: one is) before its next round."""
    if status is not None and status.get("state") == "offline":
        return Prompt("The table controller is offline", "stop", detail="Call a technician")
    if state is None:
        return Prompt("Waiting for the table")
    found = state.get("faults")
    faults = [str(f) for f in found[:8]] if isinstance(found, list) else []
    if faults:
        return Prompt(
            f"Fault: {', '.join(faults)}",
            "stop",
            detail="Stop the game and call a supervisor",
        )
    if (status or {}).get("locked") or state.get("locked"):
        return Prompt("The table is locked", "stop", detail="Call a supervisor")
    if asking is not None and asking.get("code") == "read_error":
        return Prompt("Key in the card the shoe could not read", "go", key_in="card")
    phase = str(state.get("phase") or "")
    if table.dealer_required and not dealer and phase == "idle":
        return Prompt("Sign on: no dealer on duty", "go")
    if phase in ("held", "pending_decision", "bonus_held"):
        return Prompt("Waiting for a supervisor", "stop", detail="The round is held")
    handler = _FAMILIES.get(table.family, _generic)
    return handler(table, phase, state)


def _opening(table: Table, phase: str, what: str) -> Prompt | None:
    """Betting's prompts shared by every family: open and close it where the dealer does."""
    dealer = table.betting == "dealer"
    if phase == "idle":
        return Prompt("Open betting", "go") if dealer else Prompt(f"Waiting for {what}")
    if phase == "open":
        return Prompt("Close betting", "go") if dealer else Prompt("Betting is open")
    return None


def _roulette(table: Table, phase: str, state: Mapping[str, Any]) -> Prompt:
    found = _opening(table, phase, "the next spin")
    if found is not None:
        return found
    if state.get("ball_in_play"):
        return Prompt("Ball in play: wait for the number", key_in="number")
    return Prompt("Spin", "go", key_in="number")


def _beads(table: Table, phase: str, state: Mapping[str, Any]) -> Prompt:
    found = _opening(table, phase, "the next round")
    return found or Prompt("Key in the bead count", "go", key_in="beads")


def _dice(table: Table, phase: str, state: Mapping[str, Any]) -> Prompt:
    found = _opening(table, phase, "the next roll")
    if found is not None:
        return found
    if phase == "rolling":
        return Prompt("Dice rolling: wait for the result", key_in="dice")
    return Prompt("Roll the dice", "go", key_in="dice")


def _wheel(table: Table, phase: str, state: Mapping[str, Any]) -> Prompt:
    found = _opening(table, phase, "the next spin")
    if found is not None:
        return found
    if phase in ("spinning", "chained"):
        return Prompt("Wheel spinning: wait for the segment", key_in="segment")
    if phase == "bonus":
        return Prompt("Play the bonus round", "go", key_in="segment")
    return Prompt("Spin the wheel", "go", key_in="segment")


def _draw(table: Table, phase: str, state: Mapping[str, Any]) -> Prompt:
    found = _opening(table, phase, "the next draw")
    if found is not None:
        return found
    balls = state.get("balls") or []
    if phase == "drawing" or balls:
        return Prompt(f"Drawing: {len(balls)} balls out", key_in="ball")
    return Prompt("Start the draw", "go", key_in="ball")


def _cards(table: Table, phase: str, state: Mapping[str, Any]) -> Prompt:
    shoe = _mapping(state.get("shoe"))
    if phase == "shuffling" or (
        phase == "idle" and shoe.get("state") in ("unknown", "rejected", "ended")
    ):
        return Prompt("Waiting for the shuffler")
    if phase == "shoe_end":
        return Prompt("Shoe over: waiting for the shuffler")
    if phase == "burn":
        return _burn(shoe.get("burn"))
    owed = state.get("dealer_burn")
    if isinstance(owed, int) and owed > 0 and phase in ("idle", "open"):
        return Prompt(f"Dealer change: burn {owed} card{'s' if owed != 1 else ''} face down", "go")
    found = _opening(table, phase, "the next coup")
    if found is not None:
        return found
    rng = state.get("rng")
    if isinstance(rng, Mapping) and rng.get("awaits"):
        return Prompt("Waiting for the RNG draw before dealing")
    deal = state.get("deal")
    coup = _mapping(state.get("coup"))
    if isinstance(deal, Mapping):
        if deal.get("awaits_confirm"):
            return Prompt("Close the decision window", "go")
        position = deal.get("next")
        if isinstance(position, str):
            return _deal(position, coup)
        return Prompt("Deal complete: waiting for the result")
    hand = _baccarat_next(coup)
    if hand is not None:
        return _deal(hand, coup)
    return Prompt("Deal the next card", "go", key_in="card")


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _burn(burn: object) -> Prompt:
    if not isinstance(burn, Mapping) or burn.get("shown") is None:
        return Prompt("Draw and show the first card", "go", key_in="card")
    expected, burned = burn.get("expected"), burn.get("burned")
    if isinstance(expected, int) and isinstance(burned, int) and expected > burned:
        left = expected - burned
        return Prompt(f"Burn {left} more card{'s' if left != 1 else ''} face down", "go")
    return Prompt("Burn the cards face down", "go")


def _deal(position: str, coup: Mapping[str, Any]) -> Prompt:
    dealt = coup.get(position)
    count = len(dealt) if isinstance(dealt, Sequence) else 0
    ordinal = ORDINALS[count] if count < len(ORDINALS) else f"#{count + 1}"
    return Prompt(f"Deal {position_name(position)}'s {ordinal} card", "go", key_in="card")


def position_name(position: str) -> str:
    """``box3`` → ``Box 3``, ``banker`` → ``Banker``: how a dealer names a position."""
    if position.startswith("box") and position[3:].isdigit():
        return f"Box {position[3:]}"
    return position.replace("_", " ").capitalize()


def _baccarat_next(coup: Mapping[str, Any]) -> str | None:
    """Baccarat's next hand from its face-up coup (the game's own rule, not a copy of it)."""
    player, banker = coup.get("player"), coup.get("banker")
    if not isinstance(player, list) or not isinstance(banker, list):
        return None
    if any(not isinstance(c, str) for c in [*player, *banker]):
        return None
    from tablectl.controller.games.cards.baccarat import next_expected  # noqa: PLC0415

    try:
        hand = next_expected([parse_card(c) for c in player], [parse_card(c) for c in banker])
    except ValueError:
        return None
    return None if hand is None else str(hand)


def _generic(table: Table, phase: str, state: Mapping[str, Any]) -> Prompt:
    found = _opening(table, phase, "the next round")
    return found or Prompt(phase.replace("_", " ").capitalize() or "Waiting for the table")


_FAMILIES: Final[Mapping[str, Callable[[Table, str, Mapping[str, Any]], Prompt]]] = {
    "roulette": _roulette,
    "beads": _beads,
    "dice": _dice,
    "wheel": _wheel,
    "draw": _draw,
    "cards": _cards,
}
