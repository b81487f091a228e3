"""The dragon tiger engine (and its presets football studio and war of bets, ``[rules] variant``).

The shoe and round lifecycle is the shared
:class:`~tablectl.controller.engines.baccarat.CardEngine`; a coup is :class:`TwoCardCoup`: one card
to each position in deal order, settled on the second (seed-001 §3.6–3.8, rules in
:mod:`tablectl.controller.games.cards.dragon_tiger`). Irregularities follow the baccarat remedies by
analogy, since seed-001 gives none but "any malfunction voids the game round" (L1823, L1793;
``on_fault = "void"`` by default): an extra card is the first card of the next coup (seed-000
BAC-I1/I2), cards dealt with no round form a coup without bets (BAC-I3), a card before bets closed
is a misdeal (seed-002-004 BAC 2.1.6, R10). War of bets adds the barcode rule: a barcode read twice
in one shoe holds the round for a supervisor (``duplicate_barcode``, L2619).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from tablectl.controller.config import validate_section
from tablectl.controller.core.events import BetsClosed, Decision
from tablectl.controller.engines.cards import NOT_FOR_THIS_GAME, CardEngine
from tablectl.controller.games.cards.dragon_tiger import (
    PRESETS,
    DragonTigerRules,
    Variant,
    next_expected,
    outcome,
)
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card

__all__ = ["DragonTigerEngine", "TwoCardCoup"]


class TwoCardCoup:
    """One coup of the dragon tiger family: two face-up cards, first position first."""

    def __init__(self, variant: Variant) -> None:
        self._variant = variant
        self._cards: list[Card] = []

    def expects_card(self) -> bool:
        return next_expected(self._cards, self._variant) is not None

    def place(self, card: Card) -> Finding | None:
        self._cards.append(card)
        return None

    def next_hidden(self) -> bool:
        return False  # "a single face-up card" (L1809, L1782, L2621)

    def decide(self, decision: Decision) -> Finding | None:
        return Finding(NOT_FOR_THIS_GAME, "DESIGN §4.4", "no player decisions in this game")

    def confirm(self) -> bool:
        return False

    def complete(self) -> bool:
        return len(self._cards) == 2

    def result(self) -> dict[str, Any]:
        return outcome(self._cards[0], self._cards[1], self._variant)

    def public(self) -> dict[str, Any]:
        positions = PRESETS[self._variant].positions
        return {
            pos: (self._cards[i].code if i < len(self._cards) else None)
            for i, pos in enumerate(positions)
        }


def _new_coup(variant: Variant, _bets_closed: BetsClosed | None) -> TwoCardCoup:
    return TwoCardCoup(variant)


class DragonTigerEngine(CardEngine):
    """A dragon tiger (or football studio, or war of bets) table."""

    def __init__(
        self, table_id: str, rules: DragonTigerRules | None = None, *, next_round: int = 1
    ) -> None:
        self._rules = rules if rules is not None else DragonTigerRules()
        super().__init__(
            table_id,
            "dragon_tiger",
            self._rules,
            # A partial, not a closure: the engine is pickled into recovery checkpoints.
            functools.partial(_new_coup, self._rules.variant),
            unique_barcodes=self._rules.preset.unique_barcodes,
            next_round=next_round,
        )

    @classmethod
    def from_rules(
        cls, table_id: str, rules: Mapping[str, Any], *, source: str, next_round: int = 1
    ) -> DragonTigerEngine:
        """Build from a raw ``[rules]`` mapping (raises ConfigError naming key and file)."""
        parsed = validate_section(DragonTigerRules, rules, source=source, section="rules")
        return cls(table_id, parsed, next_round=next_round)

    @property
    def rules(self) -> DragonTigerRules:
        return self._rules
