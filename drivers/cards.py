"""Playing cards in the one notation tablectl emits (contracts §4.1), and the spellings it accepts.

Rank then suit (``TH``), jokers ``JK``/``JK1``/``JK2``; :func:`parse_card` also takes ``10H``,
``H10``, ``HT`` and lower case. Pure: shared by the shoe codecs and the card engines.

Symbol decks (Rock, Paper, Scissors, seed-001 L2871) write their cards ``RK`` (the book's
"stone"), ``PA``, ``SC``: none reads as a standard card in any spelling (``SC`` would be suit-first
for a rank ``C``). Accepted only with ``symbols=True``, so a standard table still refuses them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from tablectl.drivers.errors import EncodeError

__all__ = ["RANKS", "SUITS", "SYMBOLS", "SYMBOL_NAMES", "Card", "full_deck", "parse_card"]

RANKS: Final = "A23456789TJQK"
SUITS: Final = "SHDC"
SYMBOLS: Final = ("RK", "PA", "SC")
"""The cards of a Rock, Paper, Scissors deck (seed-001 L2871), in canonical notation."""
SYMBOL_NAMES: Final[Mapping[str, str]] = MappingProxyType(
    {"RK": "rock", "PA": "paper", "SC": "scissors"}
)
"""Each symbol card's name (the book's "stone" is the game's rock)."""
_JOKERS: Final = frozenset({"JK", "JK1", "JK2"})
_LENIENT: Final = re.compile(
    r"^(?:(?P<r1>10|[A2-9TJQK])(?P<s1>[SHDC])|(?P<s2>[SHDC])(?P<r2>10|[A2-9TJQK]))$"
)


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """One card. ``rank`` is one of :data:`RANKS` or ``"JK"``; ``suit`` is one of :data:`SUITS`,
    or ``""`` for a joker (whose ``code`` may carry its number: ``JK1``). A symbol card's
    ``rank`` is its symbol (:data:`SYMBOLS`) and its ``suit`` is ``""``."""

    rank: str
    suit: str
    joker_id: str = ""

    @property
    def code(self) -> str:
        """The canonical two-character notation (``KH``, ``TS``, ``JK``, ``JK2``)."""
        if self.rank == "JK":
            return "JK" + self.joker_id
        return self.rank + self.suit

    @property
    def is_joker(self) -> bool:
        return self.rank == "JK"

    @property
    def is_symbol(self) -> bool:
        """A card of a symbol deck (``RK``, ``PA``, ``SC``)."""
        return self.rank in SYMBOLS

    def __str__(self) -> str:
        return self.code


def parse_card(text: str, *, symbols: bool = False) -> Card:
    """Parse canonical or lenient notation; with ``symbols``, ``RK``/``PA``/``SC`` too.

    ``ValueError`` naming the text for anything that is not a card.
    """
    cleaned = text.strip().upper()
    if symbols and cleaned in SYMBOLS:
        return Card(cleaned, "")
    if cleaned in _JOKERS:
        return Card("JK", "", cleaned[2:])
    match = _LENIENT.match(cleaned)
    if match is None:
        raise EncodeError(f"not a card: {text!r} (expected e.g. KH, TS, 10H, H10, JK)")
    rank = match.group("r1") or match.group("r2")
    suit = match.group("s1") or match.group("s2")
    return Card("T" if rank == "10" else rank, suit)


def full_deck() -> list[Card]:
    """The 52 cards of one standard deck, in rank-major order (no jokers)."""
    return [Card(rank, suit) for suit in SUITS for rank in RANKS]
