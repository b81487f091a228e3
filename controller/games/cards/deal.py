"""Deal scripts and the game contract: every card game is a :class:`BaseGame` with a
:class:`DealScript`, run by the one card engine (docs/card-games.md).

Rule anchors: boxes dealt in rotation (seed-001 L295; seed-000 PKH-09); ``face = "down"`` cards
withheld until the outcome (seed-000 L79, PKH-15); a card before its ``stage`` waits for a
supervisor (seed-000 §6.5, PR-8.2/8.3 by analogy); ``rng_draw`` overlays (seed-001 L4019–4025,
L4117–4123); ``reshuffle`` every round (L569, L3423, L3543) or at the cut card (L1599, L3157)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal, TypeAlias

import pydantic

from tablectl.controller.core.events import BetsClosed, DealError, Decision, RngPick
from tablectl.controller.games.cards.shoe import COMPOSITION_RULE, LastCoup, OnFault, ShoeRules
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card

Face: TypeAlias = Literal["up", "down"]
Reshuffle: TypeAlias = Literal["every_round", "shoe"]
RngOverlay: TypeAlias = tuple[tuple[str, int], ...]
"""A round's RNG picks, checked: ``(card code, multiplier)`` in the RNG's order."""
RngMissing: TypeAlias = Literal["void", "hold"]
"""A round whose RNG draw never came: void (``rng_missing``) or wait for a supervisor."""

BOXES: Final = "boxes"
"""The step position that stands for every playing box, in box order."""

# Stable verdict codes of the deal scripts (docs/verdicts.md, "House-banked poker and single-deck
# card games").
CARD_BEFORE_DECISIONS: Final = "card_before_decisions"

# The void reason of a reported deal error, and the remedies a void's ``result.remedy`` names.
MISDEAL: Final = "misdeal"
RESHUFFLE_BETS_STAND: Final = "reshuffle_bets_stand"
"""seed-000 PKH-21: "all cards will be reshuffled and Bets will remain untouched"."""
REFUND: Final = "refund"
"""seed-001 L561, L617, L679, L773: the round is cancelled and "the player gets back his bet"."""
REFUND_PLUS_HALF_ANTE: Final = "refund_plus_half_ante"
"""seed-001 L335: "return of bets … and a fine at the amount of 50% of the Ante"."""
WRONG_CARD_COUNT: Final = "wrong_card_count"
DECISION_REFUSED: Final = "decision_refused"


def box_name(box: int) -> str:
    """The position name of box ``box`` (1-based): ``box1``."""
    return f"box{box}"


@dataclass(frozen=True, slots=True)
class Step:
    """``count`` cards to each of ``to``, in rotation (one card to each position, then again)."""

    to: tuple[str, ...]
    count: int = 1
    face: Face = "up"
    stage: int = 0
    rotate: bool = True
    """``False``: all ``count`` cards to the first position, then to the next (the flop)."""

    def slots(self, boxes: Sequence[int]) -> list[Slot]:
        positions: list[str] = []
        for name in self.to:
            positions += [box_name(b) for b in boxes] if name == BOXES else [name]
        if self.rotate:
            return [Slot(p, self.face, self.stage) for _ in range(self.count) for p in positions]
        return [Slot(p, self.face, self.stage) for p in positions for _ in range(self.count)]


@dataclass(frozen=True, slots=True)
class Slot:
    """Where one card goes: its position, how it lies, and the decision window it waits for."""

    position: str
    face: Face = "up"
    stage: int = 0


@dataclass(frozen=True, slots=True)
class DealScript:
    """A game's deal, as data (see the module docstring)."""

    steps: tuple[Step, ...]
    reshuffle: Reshuffle = "every_round"

    def slots(self, boxes: Sequence[int]) -> list[Slot]:
        """The initial deal for these playing boxes, in the order the cards come out."""
        return [slot for step in self.steps for slot in step.slots(boxes)]


@dataclass
class Deal:
    """One round's deal so far: what the game's hooks read (and may keep notes in)."""

    boxes: tuple[int, ...]
    hands: dict[str, list[Card]] = field(default_factory=dict)
    """Position → its cards in the order they came (exchanged cards removed)."""
    order: list[tuple[str, Card, Face]] = field(default_factory=list)
    """Every card read in this round: the position it went to and how it lay."""
    decisions: list[Decision] = field(default_factory=list)
    """Accepted decisions, in order."""
    windows_closed: int = 0
    """Decision windows the dealer has closed (``confirm`` events)."""
    void_positions: dict[str, str] = field(default_factory=dict)
    """Positions voided by a deal error → the remedy (the card-poker family, L335)."""
    notes: dict[str, Any] = field(default_factory=dict)
    """Game-private state (e.g. Bombay's removed dealer cards)."""
    rng: RngOverlay | None = None
    """The round's RNG overlay (:meth:`BaseGame.check_rng`), once drawn."""

    def hand(self, position: str) -> list[Card]:
        return self.hands.get(position, [])

    def decided(self, box: int, action: str) -> bool:
        return any(d.box == box and d.action == action for d in self.decisions)


def hand_codes(cards: Iterable[Card]) -> list[str]:
    return [c.code for c in cards]


@dataclass(frozen=True, slots=True)
class Remedy:
    """What a deal error does, by the game's rule book: ``void`` (e.g. PKH-21's
    ``reshuffle_bets_stand``), ``void_position`` (refund plus half the ante, L335), ``deal_more``
    (a dealer with four cards takes a fifth, L335) or ``note`` (a verdict only). ``rule`` is
    cited."""

    action: Literal["void", "void_position", "deal_more", "note"]
    rule: str
    reason: str = MISDEAL
    remedy: str = REFUND
    slots: tuple[Slot, ...] = ()
    code: str | None = None


class GameRules(ShoeRules):
    """Keys of the house-banked poker and single-deck games: one deck shuffled every round, no burn,
    no cut card (PKH-01, PKH-03); a fault voids (seed-001 L561, L617, L679, L773)."""

    decks: int = pydantic.Field(default=1, ge=1, le=16)
    boxes: int = pydantic.Field(default=1, ge=1, le=9)
    """Boxes (player positions) at the table; ``bets_closed.boxes`` picks the playing ones."""
    last_coup: LastCoup = "current"
    on_fault: OnFault = "void"


Procedure: TypeAlias = Literal["dealer_screen", "shoe"]
"""How the dealer works the table (docs/card-games.md). ``"dealer_screen"``: deal-error reports,
``confirm`` refused while cards are due (seed-000 PKH-21, seed-001 §3.0 validator (2)), a fault
before the first card cancels the hand (PKH-22). ``"shoe"``: a fault only latches until ``[rules]
on_fault`` decides."""


class BaseGame:
    """A card game: ``name``, ``script``, ``rules_model``, :meth:`outcome` and the hooks its rules
    need. A deal error voids with bets returned by default (seed-001 L561, L617, L679, L773)."""

    name: ClassVar[str]
    script: DealScript
    """The deal (a class attribute; a game whose positions depend on its rules sets it in
    ``__init__``)."""
    rules_model: ClassVar[type[ShoeRules]] = GameRules
    decision_actions: ClassVar[frozenset[str]] = frozenset()
    deal_error_rule: ClassVar[str] = "seed-001 L561"
    procedure: ClassVar[Procedure] = "dealer_screen"
    no_bets_deal: ClassVar[bool] = False
    """Cards dealt with no round open form a coup played to the end without bets (seed-000
    BAC-I3); otherwise each is carried to the next round (BJ-I1: "all cards are played")."""
    composition_rule: ClassVar[str] = COMPOSITION_RULE
    """The rule a card seen more often than the decks hold breaks (``composition_exceeded``):
    the game's rule book's, e.g. baccarat's V-BAC-6, blackjack's V-BJ-2."""
    rng_draw: ClassVar[bool] = False
    """The game takes a studio RNG's draw between ``bets_closed`` and the first card
    (:meth:`check_rng`)."""
    window_rule: ClassVar[str] = "seed-000 PR-8.2"
    """The rule a card dealt before its window closed breaks: seed-000 PR-8.2 by analogy, unless the
    game's book has its own (war of bets, L2625)."""
    rng_rule: ClassVar[str] = "seed-001 §2.2 (d)"
    """The rule an RNG draw at the wrong time, or missing, breaks (the verdict's ``rule``)."""
    reveals: ClassVar[bool] = True
    """The outcome reveals the round's face-down cards (seed-000 L79: withheld until then).
    ``False``: never (a poker room's hole cards and burns: seed-002 T 35, G 14)."""

    def __init__(self, rules: ShoeRules) -> None:
        if not isinstance(rules, self.rules_model):
            raise TypeError(f"{type(self).__name__} needs {self.rules_model.__name__}")
        self.rules = rules

    @property
    def symbols_per_deck(self) -> int:
        """A symbol deck's cards of each symbol (Rock, Paper, Scissors, seed-001 L2871); 0: the
        deck has ranked cards (the shoe's composition and the card notation follow it)."""
        return 0

    @property
    def on_rng_missing(self) -> RngMissing:
        """What a round's first card does when its RNG draw never came (:data:`RngMissing`)."""
        return "void"

    def check_rng(self, picks: Sequence[RngPick]) -> RngOverlay | Finding:
        """An ``rng_draw``'s picks as the round's overlay (kept in ``Deal.rng``), or why they
        cannot be; asked only of a game with :attr:`rng_draw`."""
        raise NotImplementedError

    @property
    def unique_barcodes(self) -> bool:
        """Whether each physical card carries its own barcode (war of bets): a barcode read twice
        in a shoe is a ``duplicate_barcode`` hold."""
        return False

    def playing_boxes(self, bets_closed: BetsClosed | None) -> tuple[int, ...]:
        """The boxes in play this round (none for a game without boxes)."""
        if not isinstance(self.rules, GameRules):
            return ()
        boxes = bets_closed.boxes if bets_closed is not None else None
        if boxes:
            chosen = tuple(sorted({b for b in boxes if 1 <= b <= self.rules.boxes}))
            if chosen:
                return chosen
        return tuple(range(1, self.rules.boxes + 1))

    def begin(self, deal: Deal, bets_closed: BetsClosed | None) -> None:
        """A new round's deal, with the close of bets that opened it (a game may note facts
        committed there in ``deal.notes``, e.g. Andar Bahar's first side)."""
        del deal, bets_closed

    def more(self, deal: Deal) -> Sequence[Slot]:
        """Cards the rules call for once the queue is empty (``[]``: none); queued as returned."""
        del deal
        return []

    def next_slot(self, deal: Deal) -> Slot | None:
        """The card the rules call for now when nothing is queued, asked afresh for every card
        (blackjack: the hand in play, then the dealer; a decision changes it); ``None``: none."""
        del deal
        return None

    def waiting(self, deal: Deal) -> bool:
        """Whether a decision window is open that can still add cards (the round is not
        complete until the dealer closes it; a card read meanwhile is early)."""
        del deal
        return False

    def ready(self, deal: Deal) -> bool:
        """Whether the outcome may be given once no card is due (blackjack: not while insurance
        is still offered against a scanned hole card, seed-002-004 BJ 3.7)."""
        del deal
        return True

    def admit(self, deal: Deal, decision: Decision) -> Finding | None:
        """Whether the game takes this decision at all (nothing changes when refused)."""
        if decision.action not in self.decision_actions:
            allowed = ", ".join(sorted(self.decision_actions)) or "none"
            return Finding(
                DECISION_REFUSED,
                "contracts §4.4",
                f"{self.name} takes no {decision.action!r} decision (takes: {allowed})",
            )
        if decision.box not in deal.boxes:
            return Finding(DECISION_REFUSED, "contracts §4.4", f"box {decision.box} is not playing")
        return None

    def decide(self, deal: Deal, decision: Decision) -> Finding | list[Slot]:
        """Apply a decision: the cards it calls for (``[]``: none), or a finding (refused)."""
        del deal
        return Finding(
            DECISION_REFUSED, "contracts §4.4", f"{decision.action!r} does not change this deal"
        )

    def confirm(self, deal: Deal) -> bool:
        """A ``confirm`` that closes no decision window of the script: whether the game takes it
        (blackjack: the insurance window is over); ``False`` refuses it."""
        del deal
        return False

    def closed(self, deal: Deal) -> Sequence[Finding]:
        """Verdicts a window's close proves (a poker street dealt short: a missing burn)."""
        del deal
        return ()

    def early(self, deal: Deal, slot: Slot) -> Finding | None:
        """The game's finding for a card placed before its window closed (the window stays open);
        ``None``: the round waits for a supervisor (``card_before_decisions``)."""
        del deal, slot
        return None

    def deal_error(self, deal: Deal, error: DealError) -> Remedy:
        """The rule book's remedy for a reported deal irregularity."""
        del deal, error
        return Remedy("void", self.deal_error_rule, MISDEAL, REFUND)

    def check(self, deal: Deal, slot: Slot, card: Card) -> Finding | None:
        """A rule the card breaks where it lands (it is placed anyway); a ``hold`` finding puts
        the round before a supervisor, a ``carry`` one makes it the next round's first card."""
        del deal, slot, card
        return None

    def outcome(self, deal: Deal) -> dict[str, Any]:
        """The settled result (only once complete)."""
        raise NotImplementedError

    def public(self, deal: Deal) -> dict[str, Any]:
        """Face-up cards by position, for snapshots and a void's result; a face-down card appears
        as ``None`` (never its face)."""
        out: dict[str, list[str | None]] = {}
        for position, card, face in deal.order:
            if card not in deal.hand(position):
                continue  # exchanged away
            out.setdefault(position, []).append(card.code if face == "up" else None)
        return out
