"""Baccarat rules: points, the deal order, the third-card tableau (exhaustively), the result.

The tableau is checked against a table written here, literally from seed-000 §4.3 (§13–17) and
seed-002-004 BAC 3.5.1 — not derived from the code under test.
"""

from __future__ import annotations

import pytest

from tablectl.controller.games.cards.baccarat import (
    BaccaratRules,
    banker_draws,
    is_natural,
    next_expected,
    outcome,
    point,
    total,
)
from tablectl.drivers.cards import Card, parse_card

# seed-000 §4.3 third-card tableau, row by row: Banker two-card total ->
# (Banker draws when the Player stood on 6/7, the Player third-card values on which it draws).
ALL = frozenset(range(10))
TABLEAU: dict[int, tuple[bool, frozenset[int]]] = {
    0: (True, ALL),  # "always (unless the Player has 8 or 9)"
    1: (True, ALL),
    2: (True, ALL),
    3: (True, ALL - {8}),  # "P3 != 8"
    4: (True, frozenset({2, 3, 4, 5, 6, 7})),
    5: (True, frozenset({4, 5, 6, 7})),
    6: (False, frozenset({6, 7})),  # "stand" when the Player stood
    7: (False, frozenset()),  # "never"
}
PLAYER_DRAWS = frozenset({0, 1, 2, 3, 4, 5})  # "Player: 0-5 draw; 6-7 stand; 8-9 natural"
NATURALS = frozenset({8, 9})

# One card per point value (T/J/Q/K = 0, A = 1): seed-000 §4.3 "Card values (§10)".
BY_POINT = {0: "K", 1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9"}


def hand(value: int, suit: str) -> list[Card]:
    """Two cards totalling ``value`` (a zero-point card and the value card)."""
    return [parse_card("T" + suit), parse_card(BY_POINT[value] + suit)]


def cards(*codes: str) -> list[Card]:
    return [parse_card(c) for c in codes]


@pytest.mark.parametrize(
    ("code", "value"),
    [
        ("AS", 1),
        ("2H", 2),
        ("5D", 5),
        ("9C", 9),
        ("TS", 0),
        ("JH", 0),
        ("QD", 0),
        ("KC", 0),
    ],
    ids=lambda v: f"seed-000-4.3-BAC10-{v}",
)
def test_point_values(code: str, value: int) -> None:
    assert point(parse_card(code)) == value


@pytest.mark.parametrize(
    ("codes", "expected"),
    [(("7S", "9H"), 6), (("AS", "2H", "4D"), 7), (("AS", "2H", "9D"), 2), (("TS", "KH"), 0)],
    ids=["seed-001-L1521-7+9", "seed-004-BAC1.3.2-A24", "seed-004-BAC1.3.2-A29", "baccarat-0"],
)
def test_totals_are_mod_10(codes: tuple[str, ...], expected: int) -> None:
    assert total(cards(*codes)) == expected


def test_deal_order_is_p1_b1_p2_b2() -> None:
    # seed-002-004 BAC 3.4.3: first and third cards the Player's, second and fourth the Banker's.
    p, b = cards("2S", "3S"), cards("4S", "5S")
    assert next_expected([], []) == "player"
    assert next_expected(p[:1], []) == "banker"
    assert next_expected(p[:1], b[:1]) == "player"
    assert next_expected(p, b[:1]) == "banker"


def _cases() -> list[tuple[int, int, int | None]]:
    return [(p, b, t) for p in range(10) for b in range(10) for t in (None, *range(10))]


@pytest.mark.parametrize(
    ("player", "banker", "third"),
    _cases(),
    ids=[f"seed-000-4.3-P{p}-B{b}-P3={'none' if t is None else t}" for p, b, t in _cases()],
)
def test_tableau_exhaustive(player: int, banker: int, third: int | None) -> None:
    p2, b2 = hand(player, "S"), hand(banker, "H")
    natural = player in NATURALS or banker in NATURALS
    if third is None:
        # The decision after four cards.
        if natural:
            expected = None  # seed-000 §4.3 §11, V-BAC-3: no more cards to either hand
        elif player in PLAYER_DRAWS:
            expected = "player"
        else:
            expected = "banker" if TABLEAU[banker][0] else None
        assert next_expected(p2, b2) == expected
        return
    p3 = [*p2, parse_card(BY_POINT[third] + "D")]
    if natural or player not in PLAYER_DRAWS:
        # No legal coup gives this Player a third card.
        with pytest.raises(ValueError, match=r"third card|no legal coup"):
            next_expected(p3, b2)
        return
    draws = third in TABLEAU[banker][1]
    assert next_expected(p3, b2) == ("banker" if draws else None)
    assert banker_draws(banker, p3[2]) is draws
    if draws:
        # After the Banker's third card the coup is over, whatever it is.
        assert next_expected(p3, [*b2, parse_card("9C")]) is None


def test_player_standing_banker_rule_seed_000_s17() -> None:
    # seed-000 §4.3 §17: Player 6/7 with two cards -> Banker draws on 0-5.
    assert [banker_draws(b, None) for b in range(8)] == [True] * 6 + [False] * 2


@pytest.mark.parametrize(
    ("player", "banker", "winner", "natural", "six"),
    [
        (("9S", "KH"), ("2C", "3S"), "player", True, None),
        (("2S", "3H"), ("8C", "KS"), "banker", True, None),
        (("4S", "3H"), ("5C", "2S"), "tie", False, None),
        (("TS", "KH", "5D"), ("3C", "3S"), "banker", False, 2),
        (("TS", "2H", "3D"), ("4C", "KS", "2D"), "banker", False, 3),
    ],
    ids=[
        "seed-000-4.4-player-natural",
        "seed-000-4.4-banker-natural",
        "seed-000-4.4-tie-BAC20",
        "seed-000-4.4-BAC27.1.1-banker-six-2-cards",
        "seed-000-4.4-BAC27.1.2-banker-six-3-cards",
    ],
)
def test_outcome(
    player: tuple[str, ...], banker: tuple[str, ...], winner: str, natural: bool, six: int | None
) -> None:
    result = outcome(cards(*player), cards(*banker), commission=False)
    assert result["winner"] == winner
    assert result["natural"] is natural
    assert result["banker_six"] == six
    assert result["player"] == {"cards": list(player), "total": total(cards(*player))}
    assert result["commission"] is False


def test_pairs_are_same_rank() -> None:
    # seed-000 §4.4: pair undefined in the source; the usual reading (same rank) is used.
    result = outcome(cards("7S", "7H"), cards("KC", "QS", "9D"))
    assert result["player_pair"] is True
    assert result["banker_pair"] is False


def test_outcome_refuses_an_incomplete_coup() -> None:
    with pytest.raises(ValueError, match="not complete"):
        outcome(cards("2S", "3H"), cards("4C", "KS"))


def test_naturals() -> None:
    assert is_natural(cards("8S", "KH"))
    assert not is_natural(cards("4S", "2H", "2D"))


def test_rules_defaults_are_seed_000() -> None:
    rules = BaccaratRules()
    # BAC-E1 8 decks; BAC-E3 >= 13 behind the cut card; BAC-E6 burn; seed-004 BAC 3.2.2 last coup.
    assert (rules.decks, rules.cut_card_min_behind, rules.burn, rules.last_coup) == (
        8,
        13,
        True,
        "current",
    )
    assert rules.commission is True
