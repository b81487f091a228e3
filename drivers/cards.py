"""Playing cards in the one notation tablectl emits (DESIGN §4.1), and the spellings it accepts.

Rank then suit: ranks ``A 2 3 4 5 6 7 8 9 T J Q K``, suits ``S H D C`` (``TH`` = ten of hearts);
jokers ``JK`` (``JK1``/``JK2`` where a deck carries two). Decoders may meet other spellings on
the wire (``10H``, ``H10``, ``HT``, lower case); :func:`parse_card` accepts them and
:attr:`Card.code` always gives the canonical form. Pure: shared by the shoe codecs (drivers) and
the card engines (controller).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from tablectl.drivers.errors import EncodeError

__all__ = ["RANKS", "SUITS", "Card", "full_deck", "parse_card"]

RANKS: Final = "A23456789TJQK"
SUITS: Final = "SHDC"
_JOKERS: Final = frozenset({"JK", "JK1", "JK2"})
_LENIENT: Final = re.compile(
    r"^(?:(?P<r1>10|[A2-9TJQK])(?P<s1>[SHDC])|(?P<s2>[SHDC])(?P<r2>10|[A2-9TJQK]))$"
)


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """One card. ``rank`` is one of :data:`RANKS` or ``"JK"``; ``suit`` is one of :data:`SUITS`,
    or ``""`` for a joker (whose ``code`` may carry its number: ``JK1``)."""

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

    def __str__(self) -> str:
        return self.code


def parse_card(text: str) -> Card:
    """Parse canonical or lenient notation.

    Raises:
        ValueError: naming the text, for anything that is not a card.
    """
    cleaned = text.strip().upper()
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
