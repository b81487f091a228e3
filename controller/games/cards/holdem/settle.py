"""The settlement facts of the Hold'em games: pure functions of the hands, no deal, no rules.

Each Hold'em game (:mod:`tablectl.controller.games.cards.holdem`) builds its outcome from these:
the comparison with the dealer, the paytable line of a hand and the bets of Ultimate Texas
Hold'em and Texas Hold'em against the dealer, which settle alike (:func:`versus_bets`). Kept apart
from the games so the facts can be read, and tested, without a deal.
"""

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
    """The paytable line a hand pays on: its category, and ``"royal_flush"`` for the ace-high
    straight flush, which every Hold'em paytable lists on its own line (UTH §19/§20 per
    seed-000 §6.4; seed-001 L589–615, L657–677)."""
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
    against the dealer (seed-001 L645–677), which settle alike.

    - ``versus``: the hand against the dealer's (UTH-H1; L579).
    - ``ante``: ``"push"`` when the dealer does not qualify (UTH §17 "remains untouched"; L647
      "considered a draw") or on a tie (UTH §11); else the comparison (§15, §16; L645).
    - ``play``: the comparison whether or not the dealer qualifies (UTH §16, §18.1–18.3; L647
      "Play pays 1:1 regardless"). UTH §17's "paid out according to the player's combination"
      (seed-000 §14 item 19) is read with §18: the comparison still decides.
    - ``blind``: ``"lose"`` when the dealer wins (§19 "the BLIND Bet is lost"), ``"push"`` on a
      tie, ``"paytable"`` when the hand wins with a straight or better, ``"push"`` when it wins
      with less (§19 "remains untouched"; L657–666 "bet returned").
    - ``trips``: the hand's :func:`paytable_hand` when it is three of a kind or better, else
      ``"lose"``, whatever the dealer holds (UTH §20; L668–677).
    - A folded hand loses ANTE, BLIND and PLAY (UTH §9–10; GEN-09.2.2 "The Ante and Blind bets
      are collected"; L631 "Fold loses Ante and Blind"); TRIPS is still settled on the cards
      (GEN-09.2.2 "collected or paid out according to the outcome of the game").
    """
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
