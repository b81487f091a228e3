"""The settlement facts of the Hold'em games: pure functions of the hands, kept apart from the games
so they can be read, and tested, without a deal."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Final, Literal, TypeAlias

from tablectl.controller.games.cards.deal import hand_codes
from tablectl.controller.games.cards.poker import HandValue, qualifies, summary
from tablectl.drivers.cards import Card

Versus: TypeAlias = Literal["win", "lose", "tie"]
"""A player hand against the dealer's: higher, lower, or the same five-card value (UTH-H1)."""

PUSH_IF_TIE: Final[dict[str, str]] = {"win": "win", "lose": "lose", "tie": "push"}


def paytable_hand(hand: HandValue) -> str:
    """The category, with the royal flush on its own line as every Hold'em paytable lists it (UTH
    §19/§20 per seed-000 §6.4; seed-001 L589–615, L657–677)."""
    return "royal_flush" if hand.is_royal else hand.category.name.lower()


def compare_hands(player: HandValue, dealer: HandValue) -> Versus:
    """UTH-H1 §11: the best five cards decide; "If the cards are of equal value, a tie is
    declared and the remaining two cards are not taken into account" (seed-001 L579 likewise)."""
    if player > dealer:
        return "win"
    if player < dealer:
        return "lose"
    return "tie"


def versus_bets(
    player: HandValue, dealer: HandValue, *, dealer_qualifies: bool, folded: bool
) -> dict[str, str]:
    """ANTE, PLAY, BLIND and TRIPS of Ultimate Texas Hold'em (seed-000 §6.4) and Texas Hold'em
    (seed-001 L645–677), which settle alike.

    - ``versus``: UTH-H1; L579.
    - ``ante``: push if the dealer does not qualify (UTH §17; L647) or on a tie (UTH §11); else
      §15, §16; L645.
    - ``play``: the comparison regardless (UTH §16, §18.1–18.3; L647); UTH §17 read with §18
      (seed-000 §14 item 19).
    - ``blind``: lost to the dealer (§19), paytable on a straight or better, else push (§19;
      L657–666).
    - ``trips``: three of a kind or better, whatever the dealer (UTH §20; L668–677).
    - A fold loses ANTE, BLIND and PLAY (UTH §9–10; GEN-09.2.2; L631); TRIPS still settles
      (GEN-09.2.2)."""
    versus = compare_hands(player, dealer)
    trips = paytable_hand(player) if qualifies(player, "three_of_a_kind") else "lose"
    if folded:
        return {"versus": versus, "ante": "lose", "play": "lose", "blind": "lose", "trips": trips}
    ante = PUSH_IF_TIE[versus] if dealer_qualifies else "push"
    if versus == "win":
        blind = "paytable" if qualifies(player, "straight") else "push"
    else:
        blind = PUSH_IF_TIE[versus]
    return {
        "versus": versus,
        "ante": ante,
        "play": PUSH_IF_TIE[versus],
        "blind": blind,
        "trips": trips,
    }


def hand_facts(cards: Sequence[Card], value: HandValue) -> dict[str, Any]:
    """A hand as the outcome shows it: its own cards in deal order and its best five of seven
    (UTH §14: the cards that form the combination)."""
    return {
        "cards": hand_codes(cards),
        **summary(value),
        "paytable_hand": paytable_hand(value),
    }


def duplicate_codes(cards: Sequence[Card]) -> list[str]:
    counts = Counter(card.code for card in cards)
    return sorted(code for code, n in counts.items() if n > 1)
