"""The poker room's dealer assist (seed-002 G 33, L81–87; seed-000 PR-8, L586–613): Hold'em and
Omaha hands on the one card engine, the misdeals a shoe can see as flags, and no bank.

Rule tests are named after the seed lines they hold: ``g33_l87`` is seed-002 G 33's sixth case,
``l593`` seed-000 PR-8.4.1. Cards come from one shuffled deck per hand, as on the table."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import (
    BetsClosed,
    Card,
    Confirm,
    DealError,
    Decision,
    RoundOpen,
    ShuffleCompleted,
    ShuffleStarted,
    TableEvent,
    Void,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import build_engine, load_rules
from tablectl.controller.engines.cards import CardEngine
from tablectl.controller.games.cards.poker_room import PokerRoom
from tests.support.replay import DATA, replay, table_config

DECK = [rank + suit for suit in "SHDC" for rank in "A23456789TJQK"]


class Table:
    """One poker-room table and the deck of the hand in play."""

    def __init__(self, game: str = "poker_room_holdem", **rules: Any) -> None:
        built = build_engine("PR-1", game, rules, source="t.toml")
        assert isinstance(built, CardEngine)
        self.engine = built
        self.out: list[EngineOutput] = []
        self.deck: Iterator[str] = iter(())
        self.dealt: list[str] = []

    def hand(self, *boxes: int, seed: int = 1) -> Table:
        """Shuffle, open a hand and close the blinds (``bets_closed``: the deal begins)."""
        deck = DECK[:]
        random.Random(seed).shuffle(deck)
        self.deck = iter(deck)
        return self.feed(
            ShuffleStarted(), ShuffleCompleted(cards=52), RoundOpen(), BetsClosed(boxes=boxes)
        )

    def cards(self, n: int) -> Table:
        for _ in range(n):
            code = next(self.deck)
            self.dealt.append(code)
            self.feed(Card(card=code))
        return self

    def confirm(self) -> Table:
        return self.feed(Confirm())

    def feed(self, *events: TableEvent) -> Table:
        for event in events:
            self.out += self.engine.apply(event)
        return self

    def codes(self) -> list[str]:
        return [o.code for o in self.out if isinstance(o, Verdict)]

    def verdicts(self) -> list[Verdict]:
        return [o for o in self.out if isinstance(o, Verdict)]

    def outcomes(self) -> list[Outcome]:
        return [o for o in self.out if isinstance(o, Outcome)]

    def result(self) -> dict[str, Any]:
        (outcome,) = self.outcomes()
        assert outcome.status == "settled", outcome
        assert outcome.result is not None
        return outcome.result


def streets(table: Table, *counts: int) -> Table:
    """Deal each street's cards and close its betting round."""
    for n in counts:
        table.cards(n).confirm()
    return table


# -- a clean hand ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "hole"), [("poker_room_holdem", 2), ("poker_room_omaha", 4)], ids=["holdem", "omaha"]
)
def test_a_clean_hand_is_a_record_without_a_winner_and_without_hole_cards(
    game: str, hole: int
) -> None:
    table = Table(game).hand(1, 2, 3)
    streets(table, 3 * hole, 4, 2, 2)
    assert table.codes() == []
    result = table.result()
    assert result == {
        "seats": [1, 2, 3],
        "hole_cards": {"box1": hole, "box2": hole, "box3": hole},
        "board": {
            # burn, flop ×3, burn, turn, burn, river (seed-000 §9.2 burn model)
            "flop": table.dealt[3 * hole + 1 : 3 * hole + 4],
            "turn": [table.dealt[3 * hole + 5]],
            "river": [table.dealt[3 * hole + 7]],
        },
        "burns": 3,
        "folded": [],
        "returned": 0,
        "extra": 0,
    }
    # T 35 / G 14: hole cards and burns are never revealed by the record.
    hidden = set(table.dealt[: 3 * hole]) | {table.dealt[3 * hole + i] for i in (0, 4, 6)}
    shown = {c for cards in result["board"].values() for c in cards}
    assert len(shown) == 5
    assert not hidden & shown
    assert PokerRoom.reveals is False


def test_the_dealer_screen_asks_for_the_close_of_each_betting_round() -> None:
    table = Table().hand(1, 2).cards(4)
    deal = table.engine.snapshot()["deal"]
    assert (deal["next"], deal["awaits_confirm"]) == ("burn", True)
    table.confirm().cards(4)
    assert table.engine.snapshot()["deal"]["next"] == "burn"
    assert table.engine.snapshot()["deal"]["awaits_confirm"] is True


# -- what the shoe sees: seed-002 G 33, seed-000 PR-8 ----------------------------------------------


def test_g33_l87_pr_8_5_l596_a_card_too_many_before_the_flop_betting() -> None:
    # G 33 M6: more cards than due; at the Button, "the card is taken back and used as the burn".
    table = Table().hand(1, 2, 3).cards(7)
    assert table.codes() == ["wrong_card_count"]
    (flag,) = table.verdicts()
    assert flag.rule is not None
    assert "G 33 M6 (L87)" in flag.rule
    # The extra card stands as the flop's burn: the flop street then takes three.
    streets(table.confirm(), 3, 2, 2)
    assert table.codes() == ["wrong_card_count"]
    assert table.result()["burns"] == 3


def test_g33_l86_fewer_hole_cards_and_the_betting_cannot_close() -> None:
    # G 33 M5: fewer cards (the Button may still get its card): the close is refused.
    table = Table().hand(1, 2, 3).cards(5).confirm()
    assert table.codes() == ["wrong_card_count"]
    streets(table.cards(1), 0, 4, 2, 2)
    assert table.codes() == ["wrong_card_count"]
    assert table.result()["hole_cards"] == {"box1": 2, "box2": 2, "box3": 2}


def test_l593_pr_8_4_1_a_four_card_flop() -> None:
    table = Table().hand(1, 2).cards(4).confirm().cards(5)
    assert table.codes() == ["four_card_flop"]
    # "one as the next burn card and the other 3 are the flop": the turn street takes one card.
    streets(table.confirm(), 1, 2)
    result = table.result()
    assert table.codes() == ["four_card_flop"]
    assert (len(result["board"]["flop"]), len(result["board"]["turn"]), result["burns"]) == (
        3,
        1,
        3,
    )


@pytest.mark.parametrize(
    ("counts", "street"),
    [
        pytest.param((4, 3, 2, 2), "flop", id="l594-pr-8-4-2-flop-without-burn"),
        pytest.param((4, 4, 1, 2), "turn", id="l594-turn-without-burn"),
        pytest.param((4, 4, 2, 1), "river", id="l594-river-without-burn"),
    ],
)
def test_l594_pr_8_4_2_no_burn_play_proceeds_with_the_cards_dealt(
    counts: tuple[int, ...], street: str
) -> None:
    table = streets(Table().hand(1, 2), *counts)
    assert table.codes() == ["missing_burn"]
    (flag,) = table.verdicts()
    assert street in flag.message
    assert flag.data["event"] == "confirm"  # known once the street's betting closed
    result = table.result()
    assert result["burns"] == 2
    assert [len(result["board"][s]) for s in ("flop", "turn", "river")] == [3, 1, 1]


def test_l608_pr_8_9_4_a_street_closed_short_by_more_than_its_burn() -> None:
    table = streets(Table().hand(1, 2), 4, 4, 0, 2)
    assert table.codes() == ["wrong_card_count"]
    assert "turn street closed with 0 of its 2 cards" in table.verdicts()[0].message


def test_l593_a_street_whose_burn_came_early_is_short_of_its_own_cards() -> None:
    # The 4-card flop's fourth is the turn's burn: a turn street closed with no card lacks the
    # turn itself, not a burn.
    table = Table().hand(1, 2).cards(4).confirm().cards(5).confirm().confirm()
    assert table.codes() == ["four_card_flop", "wrong_card_count"]
    assert "turn street closed with 0 of its 1 cards" in table.verdicts()[1].message
    streets(table, 2)
    assert table.result()["board"]["turn"] == []


def test_l590_pr_8_2_the_flop_before_the_pre_flop_betting_ended() -> None:
    # The burn and the flop come out early: reshuffled, "a new flop is dealt without a burn".
    table = Table().hand(1, 2).cards(4 + 4)
    assert table.codes() == ["wrong_card_count", *["card_before_decisions"] * 3]
    assert all(v.rule == "seed-000 PR-8.2 (L590)" for v in table.verdicts()[1:])
    streets(table.confirm(), 3, 2, 2)
    result = table.result()
    assert result["returned"] == 3
    assert result["board"]["flop"] == table.dealt[8:11]  # the new flop, no new burn


def test_l591_pr_8_3_a_premature_turn_is_dealt_again_after_the_betting() -> None:
    table = Table().hand(1, 2).cards(4).confirm().cards(4)
    table.cards(2)  # burn and turn before the flop's betting ended
    assert table.codes() == ["four_card_flop", "card_before_decisions"]
    assert table.verdicts()[1].rule == "seed-000 PR-8.3 (L591)"
    streets(table.confirm(), 1, 2)
    table.confirm()
    result = table.result()
    assert result["board"]["turn"] == [table.dealt[-3]]  # the turn dealt after the betting
    assert result["returned"] == 1


def test_l591_a_card_after_the_river_is_not_part_of_the_hand() -> None:
    table = streets(Table().hand(1, 2), 4, 4, 2).cards(3)
    assert table.codes() == ["extra_card"]
    table.confirm()
    assert table.result()["extra"] == 1


# -- what the dealer or a seat reader reports ------------------------------------------------------


@pytest.mark.parametrize(
    ("reports", "remedies", "rules"),
    [
        pytest.param(["box1"], ["misdeal"], ["G 33 M1 (L82)"], id="g33-l82-the-first-card"),
        pytest.param(["box2"], ["misdeal"], ["PR-8.9.1 (L605)"], id="l605-a-blind-card"),
        pytest.param(["box3"], ["replace_with_burn"], ["PR-8.6 (L599)"], id="l599-one-card"),
        pytest.param(
            ["box3", "box4"],
            ["replace_with_burn", "misdeal"],
            ["PR-8.6 (L599)", "G 33 M2 (L83)"],
            id="g33-l83-l606-several-cards",
        ),
    ],
)
def test_cards_exposed_on_the_initial_deal(
    reports: list[str], remedies: list[str], rules: list[str]
) -> None:
    table = Table().hand(1, 2, 3, 4).cards(4)
    for position in reports:
        table.feed(DealError(kind="card_exposed", position=position))
    flags = table.verdicts()
    assert [v.code for v in flags] == ["card_exposed"] * len(reports)
    assert [v.message.rsplit("(", 1)[1].rstrip(")") for v in flags] == remedies
    assert all(r in (v.rule or "") for r, v in zip(rules, flags, strict=True))
    assert table.engine.phase == "dealing"  # a flag: the floor declares the misdeal (PR-8.9)
    table.feed(Void(reason="misdeal"))
    assert [(o.status, o.reason) for o in table.outcomes()] == [("void", "misdeal")]


def test_g26_a_card_exposed_after_the_initial_deal_plays_on() -> None:
    table = Table().hand(1, 2).cards(4).confirm().cards(4)
    table.feed(DealError(kind="card_exposed", position="box2"))
    assert table.verdicts()[0].message.endswith("(play_on)")


def test_g33_l86_l87_a_seat_reported_with_the_wrong_count_is_flagged() -> None:
    table = Table().hand(1, 2, 3).cards(6)
    table.feed(DealError(kind="wrong_count", position="box2", cards=3))
    (flag,) = table.verdicts()
    assert (flag.code, flag.message.endswith("(misdeal)")) == ("wrong_card_count", True)


def test_l596_pr_8_5_the_dead_hand_reading_puts_the_seat_out() -> None:
    table = Table(wrong_count="dead_hand").hand(1, 2, 3).cards(6)
    table.feed(DealError(kind="wrong_count", position="box2", cards=3))
    assert table.codes() == ["wrong_card_count"]
    streets(table.confirm(), 4, 2, 2)
    assert table.result().get("void_positions") == {"box2": "dead_hand"}


# -- folds end the hand ----------------------------------------------------------------------------


def test_g15_folds_to_one_seat_end_the_hand() -> None:
    table = Table().hand(1, 2, 3).cards(6).confirm().cards(4)
    table.feed(Decision(box=1, action="fold"), Decision(box=1, action="fold"))
    assert table.codes() == ["decision_refused"]
    assert table.outcomes() == []
    table.feed(Decision(box=3, action="fold"))
    result = table.result()
    assert (result["folded"], result["board"]["turn"]) == ([1, 3], [])


def test_a_fold_before_the_hole_cards_are_out_is_refused() -> None:
    table = Table().hand(1, 2).cards(3).feed(Decision(box=1, action="fold"))
    assert table.codes() == ["decision_refused"]


# -- rules -----------------------------------------------------------------------------------------


def test_l603_pr_8_8_the_deck_must_hold_the_hand_without_its_last_card() -> None:
    assert load_rules("poker_room_omaha", {"boxes": 10}).rules.hole_cards == 4  # 48 cards
    with pytest.raises(ConfigError, match=r"PR-8\.8"):
        load_rules("poker_room_omaha", {"boxes": 10, "hole_cards": 5}, source="t.toml")
    with pytest.raises(ConfigError, match="decks"):
        load_rules("poker_room_holdem", {"decks": 2}, source="t.toml")


# -- any sequence ----------------------------------------------------------------------------------

STEPS = st.lists(
    st.sampled_from(["card", "card", "card", "confirm", "fold1", "fold2", "exposed", "void"]),
    max_size=50,
)


@settings(max_examples=200)
@given(STEPS, st.integers(min_value=0, max_value=1000))
def test_any_deal_never_raises_and_never_names_a_hole_card_or_a_burn(
    steps: Sequence[str], seed: int
) -> None:
    table = Table().hand(1, 2, 3, seed=seed)
    for step in steps:
        if step == "card" and len(table.dealt) < 51:
            table.cards(1)
        elif step == "confirm":
            table.confirm()
        elif step.startswith("fold"):
            table.feed(Decision(box=int(step[-1]), action="fold"))
        elif step == "exposed":
            table.feed(DealError(kind="card_exposed", position="box2"))
        elif step == "void":
            table.feed(Void(reason="misdeal"))
    outcomes = table.outcomes()
    assert len(outcomes) <= 1
    for outcome in outcomes:
        if outcome.status != "settled" or outcome.result is None:
            continue
        board = [c for cards in outcome.result["board"].values() for c in cards]
        assert len(board) == len(set(board))
        assert not set(board) & set(table.dealt[:6])  # hole cards stay secret


# -- the replay ------------------------------------------------------------------------------------


def test_poker_room_stream_replays_to_one_outcome_per_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = table_config(tmp_path, "PR-T1", "poker_room_holdem")
    outcomes, diagnostics = replay(capsys, config, DATA / "poker-room.jsonl")
    assert [(o["status"], o["reason"]) for o in outcomes] == [
        ("settled", None),
        ("settled", None),
        ("void", "misdeal"),
        ("settled", None),
        ("settled", None),
    ]
    assert all(o["game"] == "poker_room_holdem" for o in outcomes)
    codes = [d["verdict"]["code"] for d in diagnostics if "verdict" in d]
    assert codes == [
        "wrong_card_count",  # hand 2: a ninth card before the pre-flop betting ended (G 33 M6)
        "four_card_flop",  # PR-8.4.1
        "missing_burn",  # PR-8.4.2, the river
        "card_exposed",  # hand 3: the first card (G 33 M1), then the floor voids it
        "wrong_card_count",  # hand 5: the betting closed with a hole card short (G 33 M5)
    ]
    assert outcomes[3]["result"]["folded"] == [1, 3]
    assert outcomes[2]["result"] == {"cards": {"box1": [None]}}  # a void never names a hole card
