"""Jokerbet (seed-001 §3.20, L3153–3319): one face-up card a round from 52 + 2 jokers (L3155), dealt
through (L3157); the result names every item the card wins (L3161–3311)."""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal

import pydantic

from tablectl.controller.games.cards.deal import BaseGame, Deal, DealScript, GameRules, Slot, Step
from tablectl.controller.games.cards.single_card.irregularities import (
    DEAL_ERROR_RULE,
    JOKER_UNIDENTIFIED,
)
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card

_RED_SUITS: Final = frozenset("HD")
"""Items 73–74: "black card (♠, ♣, black joker)", "red card (♦, ♥, red joker)" (L3161–3311)."""
_JOKER_COLOURS: Final = {"1": "red", "2": "black"}
"""The two jokers, "red and black" (L3155): the scanner reports the red one as ``JK1`` and the
black one as ``JK2`` (a convention of this controller; the rule book names no codes)."""
_DIGITAL: Final = frozenset("23456789T")
"""Item 76 "digital" (2–10); item 75 "non-digital" is J, Q, K, A and the jokers (L3161–3311)."""


def jokerbet_facts(card: Card) -> dict[str, Any]:
    """The 76 items of L3161–3311 the card wins, as ``winning_items``. A plain ``JK`` wins ``joker``
    and ``non_digital`` only: its colour is unresolved (:data:`JOKER_UNIDENTIFIED`)."""
    if card.is_joker:
        colour = _JOKER_COLOURS.get(card.joker_id)
        items = ["joker", *([f"joker:{colour}", f"colour:{colour}"] if colour else [])]
        return {
            "card": card.code,
            "rank": None,
            "suit": None,
            "joker": True,
            "joker_colour": colour,
            "colour": colour,
            "digital": False,
            "winning_items": [*items, "non_digital"],
            "irregular": None if colour else JOKER_UNIDENTIFIED,
        }
    colour = "red" if card.suit in _RED_SUITS else "black"
    digital = card.rank in _DIGITAL
    return {
        "card": card.code,
        "rank": card.rank,
        "suit": card.suit,
        "joker": False,
        "joker_colour": None,
        "colour": colour,
        "digital": digital,
        "winning_items": [
            f"rank:{card.rank}",
            f"card:{card.code}",
            f"suit:{card.suit}",
            f"colour:{colour}",
            "digital" if digital else "non_digital",
        ],
        "irregular": None,
    }


class JokerbetRules(GameRules):
    """One deck of 54 (L3155), dealt to its end and replaced (L3157), pinned so a card seen twice is
    refused; the back colour alternation is invisible [GAP]."""

    decks: int = pydantic.Field(default=1, ge=1, le=1)
    jokers_per_deck: int = pydantic.Field(default=2, ge=2, le=2)
    ranks: Literal["A23456789TJQK"] = "A23456789TJQK"
    cut_card_min_behind: int = pydantic.Field(default=0, ge=0)


class Jokerbet(BaseGame):
    """Jokerbet (seed-001 §3.20, L3153–3319): "Only one card is drawn and placed face-up in each
    draw" (L3155) from the card shoe, which runs through its 54-card deck (reshuffle ``"shoe"``)."""

    name: ClassVar[str] = "jokerbet"
    script = DealScript((Step(("card",)),), reshuffle="shoe")
    rules_model: ClassVar[type[GameRules]] = JokerbetRules
    deal_error_rule: ClassVar[str] = DEAL_ERROR_RULE

    def check(self, deal: Deal, slot: Slot, card: Card) -> Finding | None:
        """A joker read without its colour leaves the Red/Black Joker and colour items (L3161–3311)
        undecided: the round waits for a supervisor, who confirms (settled as unidentified) or
        voids."""
        del deal, slot
        if card.is_joker and not card.joker_id:
            return Finding(
                JOKER_UNIDENTIFIED,
                "seed-001 L3157",
                "a joker without its colour (JK1 red, JK2 black): supervisor decision",
                severity="hold",
            )
        return None

    def outcome(self, deal: Deal) -> dict[str, Any]:
        (card,) = deal.hand("card")
        return jokerbet_facts(card)
