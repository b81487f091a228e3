"""Shared rules of the shoe games: composition, burn, cut card, shuffler reconciliation. Pure.

- Composition: each (rank, suit) at most ``decks`` times (seed-000 BAC-E1, BJ-E1, V-BAC-6,
  V-BJ-2, PKH-01; seed-001 §3.0 validator (1); seed-002-004 A.4); jokers only where the decks
  carry them (§3.0 validator (4)); a symbol deck per seed-001 L2871.
- Shuffler reconciliation (R6): its count is never trusted alone; the cards read are checked
  against it.
- Burn (seed-000 BAC-E6, V-BAC-1; the shown card discarded too, BAC-E6 DERIVED): burned faces are
  never reported.
- Cut card (seed-000 BAC-E3, V-BAC-6; seed-002-004 BAC 1.3.1/3.3.4).
- A stream that begins mid-shoe (contracts §4.4): ``known=False`` skips the depth checks.

Readings: docs/verdicts.md "Rule-book readings"."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Final, Literal, TypeAlias

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import RANKS, SUITS, SYMBOLS, Card, parse_card

# Stable codes (docs/verdicts.md, "Card games").
COMPOSITION_EXCEEDED: Final = "composition_exceeded"
JOKER_NOT_ALLOWED: Final = "joker_not_allowed"
RANK_NOT_IN_DECK: Final = "rank_not_in_deck"
NOT_A_CARD: Final = "not_a_card"
SHUFFLER_COUNT_MISMATCH: Final = "shuffler_count_mismatch"
SHUFFLER_DECK_CHECK: Final = "shuffler_deck_check"
SHOE_COUNT_MISMATCH: Final = "shoe_count_mismatch"
CUT_CARD_TOO_DEEP: Final = "cut_card_too_deep"
DUPLICATE_BARCODE: Final = "duplicate_barcode"

COMPOSITION_RULE: Final = "seed-001 §3.0(1)"
"""What :data:`COMPOSITION_EXCEEDED` cites unless the game names its own: seed-001 validator (1),
which covers every card game of seed-001."""

LastCoup: TypeAlias = Literal["current", "next"]
"""Which coup is the last once the cut card is out. ``"current"`` is the only rule a book states:
seed-002-004 BAC 3.2.2, BAC 3.5.4 (C-A3, the 7-card reserve), BJ 3.2, seed-000 V-BJ-11 and §13
gap 4; seed-000 (§13 gap 5) and seed-001 (§3.0) have none. ``"next"``: one more coup (BAC-E3's 13
cards behind the cut card allow it)."""

OnFault: TypeAlias = Literal["decide", "void"]
"""A device fault in a round. ``"decide"``: wait for a supervisor (seed-000 GEN-10/11/12, BAC-I4,
BJ-I6). ``"void"``: void at once, seed-001 L1587, L1793, L1823 "any malfunction voids the game
round", seed-002-004 BJ 2.1.5."""


class ShoeRules(pydantic.BaseModel):
    """``[rules]`` keys every shoe game shares; strict: unknown keys and wrong types are config
    errors."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, strict=True)

    decks: int = pydantic.Field(default=8, ge=1, le=16)
    """Decks in the shoe (seed-000 BAC-E1 8, BJ-E1 6; seed-001 §3.0)."""

    jokers_per_deck: int = pydantic.Field(default=0, ge=0, le=2)
    """Jokers each deck carries; 0 refuses any joker (seed-001 §3.0 validator (4))."""

    ranks: str = RANKS
    """The ranks each deck holds, four suits each: 21 Bet's 36-card deck is ``"6789TJQKA"``
    (seed-001 L3499, §3.0 validator (5)); a card of another rank proves a foreign card."""

    @pydantic.field_validator("ranks")
    @classmethod
    def _known_ranks(cls, value: str) -> str:
        if not value or any(r not in RANKS for r in value) or len(set(value)) != len(value):
            raise RuleError(f"ranks must be distinct ranks out of {RANKS!r}, got {value!r}")
        return value

    burn: bool = False
    """Expect the burn procedure after each shuffle (seed-000 BAC-E6, V-BAC-1)."""

    burn_after_dealer_change: int = pydantic.Field(default=0, ge=0, le=10)
    """Cards burned unseen after a dealer change, before the next round's first card (R7)."""

    cut_card_min_behind: int = pydantic.Field(default=0, ge=0)
    """Cards that must remain behind the cut card when it comes out; 0 disables the check."""

    last_coup: LastCoup = "current"
    """Which coup is the last once the cut card is out (see :data:`LastCoup`)."""

    on_fault: OnFault = "decide"
    """A device fault during a round: a supervisor decides, or it is void (:data:`OnFault`)."""


def shoe_size(decks: int, jokers_per_deck: int = 0, ranks: str = RANKS, symbols: int = 0) -> int:
    """Cards in a full shoe; a symbol deck has three symbols."""
    if symbols:
        return decks * len(SYMBOLS) * symbols
    return decks * (4 * len(ranks) + jokers_per_deck)


def burn_count(card: Card) -> int:
    """Cards the shown first card burns (seed-000 BAC-E6, V-BAC-1): tens and pictures count 10 here,
    unlike their baccarat value 0. A joker has no value (ValueError)."""
    if card.is_joker:
        raise RuleError("a joker has no burn value")
    if card.rank == "A":
        return 1
    if card.rank in "TJQK":
        return 10
    return int(card.rank)


def read_card(code: str, *, symbols: bool = False) -> Card | Finding:
    """The card, or a :data:`NOT_A_CARD` finding (the coup waits for a rescan). Symbol codes only on
    a symbol-deck table (contracts §4.1 extended)."""
    try:
        return parse_card(code, symbols=symbols)
    except ValueError:
        return Finding(NOT_A_CARD, "contracts §4.1", f"{code!r} is not a card")


class Shoe:
    """What has come out of one shoe, by (rank, suit).

    ``known=False``: a stream that begins mid-shoe (contracts §4.4); depth checks are skipped.
    ``counted``: the shuffler's own count (R6)."""

    __slots__ = ("_counted", "_counts", "_dealt", "_decks", "_jokers", "_known", "_ranks",
                 "_rule", "_symbols")  # fmt: skip

    def __init__(
        self,
        decks: int,
        *,
        jokers_per_deck: int = 0,
        known: bool = True,
        counted: int | None = None,
        ranks: str = RANKS,
        symbols: int = 0,
        composition_rule: str = COMPOSITION_RULE,
    ) -> None:
        if decks < 1 or jokers_per_deck < 0 or symbols < 0:
            raise RuleError(
                f"bad shoe: decks={decks}, jokers_per_deck={jokers_per_deck}, symbols={symbols}"
            )
        self._decks = decks
        self._symbols = symbols
        self._rule = composition_rule
        self._jokers = jokers_per_deck
        self._known = known
        self._counted = counted
        self._ranks = ranks
        self._counts: Counter[tuple[str, str]] = Counter()
        self._dealt = 0

    @property
    def decks(self) -> int:
        return self._decks

    @property
    def size(self) -> int:
        """Cards in the full shoe (decks × 52, plus jokers where the decks carry them)."""
        return shoe_size(self._decks, self._jokers, self._ranks, self._symbols)

    @property
    def known(self) -> bool:
        """Whether this shoe was seen from its start (``False``: the stream began mid-shoe)."""
        return self._known

    @property
    def counted(self) -> int | None:
        """The shuffler's count of this shoe, if a shuffler reported one."""
        return self._counted

    @property
    def dealt(self) -> int:
        """Cards read out of this shoe (burned cards included), as seen by this engine."""
        return self._dealt

    @property
    def remaining(self) -> int:
        """Cards still in the shoe (never below 0, even after a foreign card)."""
        return max(self.size - self._dealt, 0)

    def count(self, card: Card) -> int:
        """How many times this (rank, suit) — or this numbered joker — came out of the shoe."""
        if card.is_joker:
            return self._counts[(card.rank, card.joker_id)]
        return self._counts[(card.rank, card.suit)]

    def deal(self, card: Card) -> Finding | None:
        """Count a card that left the shoe (it is physically out either way) and return the finding
        it proves, if any; R6: the shuffler's count is never trusted alone."""
        self._dealt += 1
        key = (card.rank, card.joker_id) if card.is_joker else (card.rank, card.suit)
        self._counts[key] += 1
        seen = self._counts[key]
        if card.is_joker:
            jokers = sum(n for (rank, _), n in self._counts.items() if rank == card.rank)
            if jokers > self._jokers * self._decks:
                return Finding(
                    JOKER_NOT_ALLOWED,
                    "seed-001 §3.0(4)",
                    f"a joker came out of a shoe whose decks carry {self._jokers} per deck",
                    severity="hold",
                )
            if card.joker_id and seen > self._decks:
                # Numbered jokers (Jokerbet's red JK1 and black JK2, L3157) are one per deck each.
                return Finding(
                    COMPOSITION_EXCEEDED,
                    "seed-001 §3.20",
                    f"{card.code} seen {seen} times in a {self._decks}-deck shoe",
                    severity="hold",
                )
        elif self._symbols:
            found = self._symbol_card(card, seen)
            if found is not None:
                return found
        elif card.rank not in self._ranks:
            return Finding(
                RANK_NOT_IN_DECK,
                "seed-001 §3.0(5)",
                f"{card.code} is not a card of this table's decks (ranks {self._ranks})",
                severity="hold",
            )
        elif seen > self._decks:
            return Finding(
                COMPOSITION_EXCEEDED,
                self._rule,
                f"{card.code} seen {seen} times in a {self._decks}-deck shoe",
                severity="hold",
            )
        if self._counted is not None and self._dealt > self._counted:
            return Finding(
                SHOE_COUNT_MISMATCH,
                "R6",
                f"{self._dealt} cards read, the shuffler counted {self._counted}",
            )
        return None

    def _symbol_card(self, card: Card, seen: int) -> Finding | None:
        """A symbol deck (L2871): each symbol ``symbols`` times a deck, no ranked card."""
        if not card.is_symbol:
            return Finding(
                RANK_NOT_IN_DECK,
                "seed-001 L2871",
                f"{card.code} is not a card of this table's symbol deck ({', '.join(SYMBOLS)})",
                severity="hold",
            )
        if seen > self._decks * self._symbols:
            return Finding(
                COMPOSITION_EXCEEDED,
                self._rule,
                f"{card.code} seen {seen} times; {self._decks} symbol deck(s) hold"
                f" {self._decks * self._symbols}",
                severity="hold",
            )
        return None

    def empty(self) -> Finding | None:
        """The shoe reports no cards left: every card must have been read (R6 cross-check)."""
        if not self._known:
            return None
        expected = self._counted if self._counted is not None else self.size
        if self._dealt != expected:
            return Finding(
                SHOE_COUNT_MISMATCH,
                "R6",
                f"shoe empty after {self._dealt} cards read, expected {expected}",
            )
        return None


def check_shuffle(
    decks: int,
    cards: int,
    missing: Iterable[str] = (),
    extra: Iterable[str] = (),
    *,
    jokers_per_deck: int = 0,
    ranks: str = RANKS,
    symbols: int = 0,
) -> Finding | None:
    """Reconcile a ``shuffle_completed`` report (regulatory R6; seed-000 DEV-01 "validate the
    loaded card count"). ``None``: the shoe may be used."""
    expected = shoe_size(decks, jokers_per_deck, ranks, symbols)
    if cards != expected:
        return Finding(
            SHUFFLER_COUNT_MISMATCH,
            "R6",
            f"shuffler counted {cards} cards, a {decks}-deck shoe holds {expected}: shoe removed",
        )
    missing_list, extra_list = sorted(missing), sorted(extra)
    if missing_list or extra_list:
        return Finding(
            SHUFFLER_DECK_CHECK,
            "R6",
            f"shuffler deck check failed (missing {missing_list}, extra {extra_list}):"
            " shoe removed",
        )
    return None


def check_cut_card(shoe: Shoe, min_behind: int) -> Finding | None:
    """The cut card came out: at least ``min_behind`` cards must be left behind it (seed-000
    BAC-E3, V-BAC-6: 13; seed-002-004 BAC 1.3.1, 3.3.4: seven). Skipped mid-shoe."""
    if not shoe.known or min_behind <= 0:
        return None
    behind = (shoe.counted if shoe.counted is not None else shoe.size) - shoe.dealt
    if behind < min_behind:
        return Finding(
            CUT_CARD_TOO_DEEP,
            "V-BAC-6",
            f"cut card out with {behind} cards behind it, at least {min_behind} required",
        )
    return None


class Burn:
    """The burn of a new shoe (seed-000 BAC-E6, V-BAC-1): burned cards are counted, never named."""

    __slots__ = ("_burned", "_expected", "_shown")

    def __init__(self) -> None:
        self._shown: Card | None = None
        self._expected: int | None = None
        self._burned = 0

    @property
    def shown(self) -> Card | None:
        """The face-up first card, once read."""
        return self._shown

    @property
    def expected(self) -> int | None:
        """Cards to burn after the shown one (``None`` until it is read)."""
        return self._expected

    @property
    def burned(self) -> int:
        return self._burned

    @property
    def done(self) -> bool:
        return self._expected is not None and self._burned >= self._expected

    def take(self, card: Card) -> bool:
        """``True`` once the burn is complete. A joker or symbol card burns nothing: BAC-E6 counts
        pips."""
        if self._expected is None:
            self._shown = card
            self._expected = 0 if card.is_joker or card.is_symbol else burn_count(card)
        else:
            self._burned += 1
        return self.done

    def summary(self) -> dict[str, object]:
        """JSON-ready progress: the shown card (public) and counts only."""
        return {
            "shown": None if self._shown is None else self._shown.code,
            "expected": self._expected,
            "burned": self._burned,
        }


def full_shoe_codes(decks: int) -> list[str]:
    """Every card code of a ``decks``-deck shoe (tests and simulators build shoes from it)."""
    return [rank + suit for _ in range(decks) for suit in SUITS for rank in RANKS]
