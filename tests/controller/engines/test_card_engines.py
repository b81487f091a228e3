"""The shoe-game engines (baccarat, dragon tiger): shoe and round lifecycle, every irregularity
with its stable code and rule-book id, the registry, and random 8-deck shoes dealt through."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import (
    BetsClosed,
    Card,
    Confirm,
    CutCard,
    Decision,
    Fault,
    FaultCleared,
    ReadError,
    RoundOpen,
    ShoeEmpty,
    ShoeRemoved,
    ShuffleCompleted,
    ShuffleStarted,
    TableEvent,
    Void,
    WinningNumber,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, ShoeReport, Verdict
from tablectl.controller.engines import build_engine
from tablectl.controller.engines.cards import BaccaratEngine, CardEngine, DragonTigerEngine
from tablectl.controller.games.cards.baccarat import Baccarat, BaccaratRules
from tablectl.controller.games.cards.blackjack import Blackjack
from tablectl.controller.games.cards.dragon_tiger import DragonTiger, DragonTigerRules
from tablectl.controller.games.cards.shoe import full_shoe_codes
from tablectl.drivers.cards import full_deck

TABLE = "BAC-T1"
R1, R2, R3 = (f"{TABLE}-{n:06d}" for n in (1, 2, 3))


def bac(**rules: Any) -> BaccaratEngine:
    return BaccaratEngine(TABLE, BaccaratRules(**rules))


def feed(engine: CardEngine, events: Sequence[TableEvent]) -> list[EngineOutput]:
    out: list[EngineOutput] = []
    for event in events:
        out.extend(engine.apply(event))
    return out


def cards(*codes: str) -> list[Card]:
    return [Card(card=c) for c in codes]


def coup(*codes: str) -> list[TableEvent]:
    return [RoundOpen(), BetsClosed(), *cards(*codes)]


def summary(outputs: Sequence[EngineOutput]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for o in outputs:
        if isinstance(o, Outcome):
            rows.append((o.round, o.status, str(o.reason)))
        else:
            rows.append(("verdict", o.code))
    return rows


def codes(outputs: Sequence[EngineOutput]) -> list[str]:
    return [o.code for o in outputs if isinstance(o, Verdict)]


def outcomes(outputs: Sequence[EngineOutput]) -> list[Outcome]:
    return [o for o in outputs if isinstance(o, Outcome)]


# Player 9 (natural) vs Banker 5: four cards.
NATURAL = ("9H", "2C", "KD", "3S")
NEW_SHOE: list[TableEvent] = [ShuffleStarted(), ShuffleCompleted(cards=416)]


# -- registry and config ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "cls"),
    [("baccarat", Baccarat), ("dragon_tiger", DragonTiger), ("blackjack", Blackjack)],
)
def test_registry_builds_one_card_engine_for_every_card_game(game: str, cls: type) -> None:
    engine = build_engine(TABLE, game, {}, source="t.toml")
    assert type(engine) is CardEngine
    assert isinstance(engine.game_rules, cls)
    assert engine.game == game


@pytest.mark.parametrize(
    ("game", "rules", "message"),
    [
        ("baccarat", {"decks": 0}, "rules.decks"),
        ("baccarat", {"shoes": 1}, "unknown key 'rules.shoes'"),
        ("baccarat", {"last_coup": "later"}, "rules.last_coup"),
        ("dragon_tiger", {"variant": "poker"}, "rules.variant"),
    ],
)
def test_rules_are_strict(game: str, rules: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_engine(TABLE, game, rules, source="t.toml")


# -- the round lifecycle ---------------------------------------------------------------------


def test_mid_shoe_stream_starting_with_round_open_validates() -> None:
    # contracts §4.4: composition from a full shoe, no burn expected (even with burn = true).
    engine = bac(burn=True)
    out = feed(engine, coup(*NATURAL))
    assert summary(out) == [(R1, "settled", "None")]
    result = outcomes(out)[0].result
    assert result is not None
    assert result["winner"] == "player"
    assert result["natural"] is True
    assert engine.snapshot()["shoe"]["state"] == "unknown"
    assert engine.snapshot()["shoe"]["remaining"] is None  # how many cards came before: unknown


def test_outcome_right_after_the_last_card_the_tableau_calls_for() -> None:
    # seed-000 §4.3: Player 0-5 draws; Banker 3 with P3 = 8 stands -> 5 cards.
    engine = bac()
    out = feed(engine, [*coup("4S", "2C", "KD", "AS"), Card(card="8H")])
    assert summary(out) == [(R1, "settled", "None")]
    result = outcomes(out)[0].result
    assert result is not None
    assert result["player"]["cards"] == ["4S", "KD", "8H"]
    assert result["banker"]["cards"] == ["2C", "AS"]


def test_void_any_time_in_a_round_gv_rl5() -> None:
    engine = bac()
    out = feed(engine, [RoundOpen(), Void(reason="table_closed")])
    out += feed(engine, [RoundOpen(), BetsClosed(), Card(card="2S"), Void(reason="")])
    assert summary(out) == [(R1, "void", "table_closed"), (R2, "void", "supervisor_void")]
    assert outcomes(out)[1].result == {"cards": {"player": ["2S"], "banker": []}}


def test_round_open_while_dealing_voids_the_abandoned_round_r15() -> None:
    engine = bac()
    out = feed(engine, [*coup("2S", "3C"), RoundOpen()])
    assert summary(out) == [(R1, "void", "round_abandoned")]
    assert engine.current_round == R2


@pytest.mark.parametrize(
    "event",
    [BetsClosed(), Void(reason="x"), Confirm(), FaultCleared(code="nope")],
    ids=["bets_closed", "void", "confirm", "fault_cleared-not-latched"],
)
def test_out_of_phase_events_are_unexpected(event: TableEvent) -> None:
    engine = bac()
    assert codes(engine.apply(event)) == ["unexpected_event"]
    assert engine.phase == "idle"


@pytest.mark.parametrize(
    "event",
    [WinningNumber(number=3), Decision(box=1, action="hit")],
    ids=["roulette-event", "blackjack-decision"],
)
def test_other_games_events(event: TableEvent) -> None:
    assert codes(bac().apply(event)) == ["not_for_this_game"]


def test_duplicate_round_id() -> None:
    engine = bac()
    feed(engine, [RoundOpen(round="X1"), BetsClosed(), *cards(*NATURAL)])
    assert codes(engine.apply(RoundOpen(round="X1"))) == ["duplicate_round"]


# -- irregularities --------------------------------------------------------------------------


def test_card_before_bets_closed_is_a_misdeal_seed_004_bac_2_1_6() -> None:
    engine = bac()
    out = feed(engine, [RoundOpen(), Card(card="7H")])
    assert summary(out) == [(R1, "void", "misdeal")]
    assert outcomes(out)[0].result == {"card": "7H"}
    # R7: the card is burned, not carried: the next coup starts from the next card.
    out = feed(engine, coup(*NATURAL))
    result = outcomes(out)[0].result
    assert result is not None
    assert result["player"]["cards"] == ["9H", "KD"]
    assert engine.shoe.dealt == 5


def test_extra_card_bac_i2_is_the_first_card_of_the_next_coup() -> None:
    engine = bac()
    out = feed(engine, [*coup(*NATURAL), Card(card="QS")])
    assert summary(out) == [(R1, "settled", "None"), ("verdict", "extra_card")]
    verdict = out[-1]
    assert isinstance(verdict, Verdict)
    assert verdict.rule == "BAC-I2"
    assert engine.snapshot()["carried"] == 1
    out = feed(engine, coup("2C", "9S", "KD"))
    result = outcomes(out)[0].result
    assert result is not None
    # QS is P1, 2C B1, 9S P2, KD B2: Player 9 natural.
    assert result["player"]["cards"] == ["QS", "9S"]
    assert result["banker"]["cards"] == ["2C", "KD"]


def test_cards_while_idle_bac_i3_complete_without_action() -> None:
    engine = bac()
    out = feed(engine, cards(*NATURAL))
    assert codes(out) == ["extra_card", "deal_without_bets", "no_action_coup"]
    assert outcomes(out) == []  # no round was opened: nothing to settle
    final = out[-1]
    assert isinstance(final, Verdict)
    assert final.rule == "BAC-I3"
    assert final.data["result"]["winner"] == "player"
    assert engine.phase == "idle"
    assert summary(feed(engine, coup(*NATURAL))) == [(R1, "settled", "None")]


def test_unfinished_deal_without_bets_is_abandoned_by_a_round() -> None:
    engine = bac()
    out = feed(engine, [*cards("2S", "3S"), RoundOpen()])
    assert codes(out) == ["extra_card", "deal_without_bets", "coup_abandoned"]


def test_shuffler_fault_mid_hand_bac_i4_waits_for_a_supervisor() -> None:
    engine = bac()
    out = feed(engine, [*coup("9H", "2C"), Fault(code="jam", device="shuffler")])
    assert out == []
    assert engine.phase == "pending_decision"
    assert engine.snapshot()["pending"] == ["jam"]
    # The hand is completed (BAC-I4: with a regular deck); the outcome waits for the decision.
    assert feed(engine, cards("KD", "3S")) == []
    assert codes(engine.apply(RoundOpen())) == ["decision_pending"]
    out = feed(engine, [Confirm()])
    assert summary(out) == [(R1, "settled", "None")]
    # R14: the fault is still latched, so no round opens until it is cleared.
    assert codes(engine.apply(RoundOpen())) == ["fault_latched"]
    assert feed(engine, [FaultCleared(code="jam"), RoundOpen()]) == []


def test_supervisor_confirm_lets_an_incomplete_coup_go_on() -> None:
    engine = bac()
    feed(engine, [*coup("9H"), Fault(code="jam")])
    assert feed(engine, [Confirm()]) == []
    assert engine.phase == "dealing"
    assert summary(feed(engine, cards("2C", "KD", "3S"))) == [(R1, "settled", "None")]


def test_supervisor_void_of_a_pending_round() -> None:
    engine = bac()
    out = feed(engine, [*coup("9H"), Fault(code="jam"), Void(reason="shuffler_failure")])
    assert summary(out) == [(R1, "void", "shuffler_failure")]


def test_fault_voids_with_on_fault_void_seed_001_l1587() -> None:
    engine = bac(on_fault="void")
    out = feed(engine, [*coup("9H"), Fault(code="jam")])
    assert summary(out) == [(R1, "void", "device_fault")]
    assert engine.faults == {"jam"}


def test_shoe_removed_is_latched_until_cleared() -> None:
    engine = bac()
    assert feed(engine, [ShoeRemoved()]) == []
    assert codes(engine.apply(RoundOpen())) == ["fault_latched"]
    assert engine.snapshot()["faults"] == ["shoe_removed"]
    assert feed(engine, [FaultCleared(code="shoe_removed"), RoundOpen()]) == []
    # Mid-coup, the removal holds the round for a supervisor.
    feed(engine, [BetsClosed(), Card(card="9H"), ShoeRemoved()])
    assert engine.phase == "pending_decision"
    assert engine.snapshot()["pending"] == ["shoe_removed"]


def test_read_error_waits_for_a_rescan_or_a_manual_card() -> None:
    engine = bac()
    out = feed(engine, [*coup("9H", "2C"), ReadError(reason="unreadable", barcode="??")])
    assert codes(out) == ["read_error"]
    assert engine.phase == "dealing"
    out = feed(engine, [Card(card="KD", manual=True), Card(card="3S")])
    assert summary(out) == [(R1, "settled", "None")]


def test_not_a_card_is_refused_like_a_read_error() -> None:
    engine = bac()
    out = feed(engine, [*coup("9H"), Card(card="ZZ")])
    assert codes(out) == ["not_a_card"]
    assert engine.snapshot()["coup"] == {"player": ["9H"], "banker": []}


def test_composition_exceeded_v_bac_6_holds_the_round() -> None:
    engine = bac(decks=1, burn=False)
    feed(engine, [ShuffleCompleted(cards=52)])
    out = feed(engine, coup("9H", "9H"))
    assert codes(out) == ["composition_exceeded"]
    assert engine.phase == "pending_decision"
    assert engine.snapshot()["pending"] == ["composition_exceeded"]


def test_joker_refused_unless_configured() -> None:
    engine = bac()
    out = feed(engine, coup("9H", "JK"))
    assert codes(out) == ["joker_not_allowed"]
    assert engine.phase == "pending_decision"
    assert engine.snapshot()["coup"] == {"player": ["9H"], "banker": []}


# -- the shoe --------------------------------------------------------------------------------


def test_shuffler_count_mismatch_r6_rejects_the_shoe() -> None:
    engine = bac()
    out = feed(engine, [ShuffleStarted(), ShuffleCompleted(cards=415)])
    assert codes(out) == ["shuffler_count_mismatch"]
    assert engine.phase == "shoe_end"
    assert engine.snapshot()["shoe"]["state"] == "rejected"
    assert codes(engine.apply(RoundOpen())) == ["shuffle_required"]
    assert feed(engine, [ShuffleStarted(), ShuffleCompleted(cards=416)]) == []
    assert engine.phase == "burn"


def test_shuffler_deck_check_r6_rejects_the_shoe() -> None:
    engine = bac()
    out = engine.apply(ShuffleCompleted(cards=416, missing=("AS",), extra=("KD",)))
    assert codes(out) == ["shuffler_deck_check"]
    assert engine.phase == "shoe_end"


def test_shoe_count_mismatch_r6_cross_checks_the_shuffler() -> None:
    engine = bac(decks=1, burn=False, cut_card_min_behind=0)
    feed(engine, [ShuffleCompleted(cards=52)])
    deck = full_shoe_codes(1)
    out = feed(engine, [*cards(*deck[:51]), ShoeEmpty()])
    assert "shoe_count_mismatch" in codes(out)
    assert engine.phase == "shoe_end"


def test_burn_seed_000_bac_e6_then_play() -> None:
    engine = bac()
    feed(engine, NEW_SHOE)
    assert engine.phase == "burn"
    assert codes(engine.apply(RoundOpen())) == ["burn_incomplete"]
    # First card 4: four cards burned (and never shown).
    burned = ["QH", "QS", "QD", "7C"]
    assert feed(engine, cards("4D", *burned[:3])) == []
    assert engine.phase == "burn"
    assert feed(engine, cards(burned[3])) == []
    assert engine.phase == "idle"
    snap = engine.snapshot()
    assert snap["shoe"]["burn"] == {"shown": "4D", "expected": 4, "burned": 4}
    assert not any(code in json.dumps(snap) for code in burned)
    assert summary(feed(engine, coup(*NATURAL))) == [(R1, "settled", "None")]


@pytest.mark.parametrize(("shown", "burned"), [("AS", 1), ("9C", 9), ("TH", 10), ("KD", 10)])
def test_burn_count_per_rank_v_bac_1(shown: str, burned: int) -> None:
    engine = bac()
    feed(engine, NEW_SHOE)
    feed(engine, cards(shown, *["2C"] * (burned - 1)))
    assert engine.phase == "burn"
    feed(engine, cards("2C"))
    assert engine.phase == "idle"


def test_supervisor_confirm_accepts_an_unscanned_burn() -> None:
    engine = bac()
    feed(engine, [*NEW_SHOE, Card(card="5S"), Confirm()])
    assert engine.phase == "idle"


def test_cut_card_current_coup_is_the_last_seed_004_bac_3_2_2() -> None:
    engine = bac(burn=False)
    feed(engine, NEW_SHOE)
    out = feed(engine, [*coup("9H", "2C"), CutCard(), *cards("KD", "3S")])
    assert summary(out) == [(R1, "settled", "None")]
    assert engine.phase == "shoe_end"
    assert codes(engine.apply(RoundOpen())) == ["shuffle_required"]
    # The stub is counted out through the reader (R10): counted, no irregularity.
    assert engine.apply(Card(card="5S")) == []
    assert engine.snapshot()["shoe"]["dealt"] == 5


def test_shoe_end_reconciles_cards_read_with_the_shuffler_count_r6() -> None:
    engine = bac(burn=False, decks=1)
    feed(engine, [ShuffleStarted(), ShuffleCompleted(cards=52)])
    deck = [c.code for c in full_deck()]
    # A,3 v 2,4 + P3 5: banker 6 stands; the cut card comes out mid-coup: it is the last.
    feed(engine, [*coup(*deck[:3]), CutCard(), *cards(*deck[3:5])])
    assert engine.phase == "shoe_end"
    out = feed(engine, [*(Card(card=code) for code in deck[5:]), ShoeEmpty()])
    reports = [o for o in out if isinstance(o, ShoeReport)]
    assert [(r.cards_read, r.shuffler_count, r.reconciled) for r in reports] == [(52, 52, True)]


def test_shoe_end_with_a_card_unread_is_not_reconciled_r6() -> None:
    engine = bac(burn=False, decks=1)
    feed(engine, [ShuffleStarted(), ShuffleCompleted(cards=52)])
    deck = [c.code for c in full_deck()]
    feed(engine, [*coup(*deck[:3]), CutCard(), *cards(*deck[3:5])])
    out = feed(engine, [*(Card(card=code) for code in deck[5:-1]), ShoeEmpty()])
    assert "shoe_count_mismatch" in codes(out)
    reports = [o for o in out if isinstance(o, ShoeReport)]
    assert [(r.cards_read, r.reconciled) for r in reports] == [(51, False)]


def test_cut_card_between_coups_makes_the_next_coup_the_last() -> None:
    engine = bac(burn=False)
    feed(engine, [*NEW_SHOE, *coup(*NATURAL), CutCard()])
    assert engine.phase == "idle"
    feed(engine, coup(*NATURAL))
    assert engine.phase == "shoe_end"


def test_cut_card_next_plays_one_more_coup() -> None:
    engine = bac(burn=False, last_coup="next")
    feed(engine, [*NEW_SHOE, *coup("9H", "2C"), CutCard(), *cards("KD", "3S")])
    assert engine.phase == "idle"
    assert engine.snapshot()["shoe"]["coups_left"] == 1
    feed(engine, coup(*NATURAL))
    assert engine.phase == "shoe_end"


def test_cut_card_too_deep_v_bac_6() -> None:
    engine = bac(decks=1, burn=False, cut_card_min_behind=13)
    feed(engine, [ShuffleCompleted(cards=52)])
    deck = full_shoe_codes(1)
    # 40 cards out as deals without bets, then the cut card with 12 behind it.
    feed(engine, cards(*deck[:40]))
    assert codes(engine.apply(CutCard())) == ["cut_card_too_deep"]
    assert codes(engine.apply(CutCard())) == ["cut_card_repeated"]


def test_shoe_empty_mid_coup_holds_and_ends_the_shoe() -> None:
    engine = bac()
    out = feed(engine, [*coup("9H", "2C"), ShoeEmpty()])
    assert codes(out) == ["shoe_exhausted"]
    assert engine.phase == "pending_decision"
    out = feed(engine, [Confirm(), Card(card="KD", manual=True), Card(card="3S", manual=True)])
    assert summary(out) == [(R1, "settled", "None")]
    assert engine.phase == "shoe_end"


def test_snapshot_never_shows_undealt_cards() -> None:
    engine = bac()
    snap = engine.snapshot()
    assert set(snap) >= {"phase", "round", "faults", "shoe"}
    assert set(snap["shoe"]) >= {"decks", "dealt", "remaining", "cut_card_seen"}
    json.dumps(snap)


# -- dragon tiger through the engine -----------------------------------------------------------


def test_dragon_tiger_coup_and_extra_card() -> None:
    engine = DragonTigerEngine("DT-1")
    out = feed(engine, [RoundOpen(), BetsClosed(), *cards("KH", "2C", "5D")])
    assert [o.result for o in outcomes(out)] == [
        {"winner": "dragon", "dragon": "KH", "tiger": "2C", "suited_tie": False}
    ]
    assert codes(out) == ["extra_card"]


def test_dragon_tiger_malfunction_voids_seed_001_l1823() -> None:
    engine = DragonTigerEngine("DT-1")
    out = feed(engine, [RoundOpen(), BetsClosed(), Card(card="KH"), Fault(code="scanner")])
    assert [(o.status, o.reason) for o in outcomes(out)] == [("void", "device_fault")]


def test_war_of_bets_duplicate_barcode_seed_001_3_8() -> None:
    engine = DragonTigerEngine("WB-1", DragonTigerRules(variant="war_of_bets"))
    assert engine.shoe.decks == 6
    out = feed(
        engine,
        [
            RoundOpen(),
            BetsClosed(),
            Card(card="AH", barcode="0001"),
            Confirm(),  # L2625: the second betting round closes before the dealer's card
            Card(card="2C", barcode="0002"),
        ],
    )
    assert [o.result for o in outcomes(out)] == [
        {"winner": "player", "player": "AH", "dealer": "2C"}
    ]
    out = feed(engine, [RoundOpen(), BetsClosed(), Card(card="AH", barcode="0001")])
    assert codes(out) == ["duplicate_barcode"]
    assert engine.phase == "pending_decision"


# -- random 8-deck shoes through the baccarat engine (hypothesis) ------------------------------

# seed-000 §4.3, written out again here (independently of tablectl.controller.games.cards.baccarat).
_POINTS = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0, **{str(n): n for n in range(2, 10)}}
_BANKER_DRAWS_ON_P3 = {
    0: set(range(10)),
    1: set(range(10)),
    2: set(range(10)),
    3: set(range(10)) - {8},
    4: {2, 3, 4, 5, 6, 7},
    5: {4, 5, 6, 7},
    6: {6, 7},
    7: set(),
}


def _legal_coup(player: list[str], banker: list[str]) -> bool:
    """Whether these hands are exactly what seed-000 §4.3 deals."""

    def tot(hand: list[str]) -> int:
        return sum(_POINTS[c[0]] for c in hand) % 10

    p2, b2 = tot(player[:2]), tot(banker[:2])
    if p2 >= 8 or b2 >= 8:
        return len(player) == 2 and len(banker) == 2
    if p2 >= 6:
        return len(player) == 2 and len(banker) == (3 if b2 <= 5 else 2)
    if len(player) != 3:
        return False
    draws = b2 <= 7 and _POINTS[player[2][0]] in _BANKER_DRAWS_ON_P3[b2]
    return len(banker) == (3 if draws else 2)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), last_coup=st.sampled_from(["current", "next"]))
def test_random_8_deck_shoes_through_the_engine(seed: int, last_coup: str) -> None:
    rng = random.Random(seed)
    shoe = full_shoe_codes(8)
    rng.shuffle(shoe)
    cut_at = len(shoe) - 14  # the cut card leaves 14 behind it (BAC-E3: at least 13)
    engine = bac(last_coup=last_coup)
    assert feed(engine, NEW_SHOE) == []
    pos = 0
    # Burn (seed-000 BAC-E6).
    while engine.phase == "burn":
        assert feed(engine, cards(shoe[pos])) == []
        pos += 1
    rounds = 0
    seen: Counter[str] = Counter()
    while engine.phase == "idle":
        assert feed(engine, [RoundOpen(), BetsClosed()]) == []
        rounds += 1
        dealt = 0
        results: list[Outcome] = []
        while not results:
            events: list[TableEvent] = [Card(card=shoe[pos])]
            if pos == cut_at:
                events.insert(0, CutCard())
            out = feed(engine, events)
            assert codes(out) == [], codes(out)
            results = outcomes(out)
            seen[shoe[pos]] += 1
            pos += 1
            dealt += 1
        assert len(results) == 1  # exactly one outcome per coup
        result = results[0].result
        assert result is not None
        assert results[0].status == "settled"
        player, banker = result["player"]["cards"], result["banker"]["cards"]
        assert 4 <= dealt <= 6
        assert len(player) + len(banker) == dealt
        assert _legal_coup(player, banker)
        for side, hand in (("player", player), ("banker", banker)):
            assert result[side]["total"] == sum(_POINTS[c[0]] for c in hand) % 10
    assert engine.phase == "shoe_end"
    assert pos <= len(shoe)  # the 14 cards behind the cut card always suffice
    assert max(seen.values()) <= 8  # composition holds (V-BAC-6)
    assert engine.shoe.dealt == pos
    assert engine.snapshot()["rounds"] == rounds


# -- whatever the stream, apply() never raises (STYLE practice 9) ------------------------------

_ANY_EVENT = st.one_of(
    st.just(RoundOpen()),
    st.just(BetsClosed()),
    st.builds(lambda c: Card(card=c), st.sampled_from([*full_shoe_codes(1)[:20], "JK", "ZZ"])),
    st.just(CutCard()),
    st.just(ShuffleStarted()),
    st.builds(lambda n: ShuffleCompleted(cards=n), st.sampled_from([416, 312, 52, 415])),
    st.just(ReadError(reason="unreadable")),
    st.just(ShoeRemoved()),
    st.just(ShoeEmpty()),
    st.just(Confirm()),
    st.just(Void(reason="x")),
    st.just(Fault(code="jam")),
    st.just(FaultCleared(code="jam")),
    st.just(FaultCleared(code="shoe_removed")),
    st.builds(
        lambda box, action: Decision(box=box, action=action),
        st.integers(0, 8),
        st.sampled_from(["hit", "stand", "double", "split", "insurance", "even_money"]),
    ),
)


@settings(max_examples=150, deadline=None)
@given(
    game=st.sampled_from(["baccarat", "dragon_tiger", "blackjack"]),
    events=st.lists(_ANY_EVENT, max_size=60),
)
def test_apply_never_raises(game: str, events: list[TableEvent]) -> None:
    engine = build_engine(TABLE, game, {}, source="t.toml")
    opened = 0
    ended: list[str] = []
    for event in events:
        before = engine.current_round
        out = engine.apply(event)
        opened += engine.current_round not in (None, before)
        ended += [o.round for o in out if isinstance(o, Outcome)]
        json.dumps(engine.snapshot())
    # Every round gets at most one outcome.
    assert len(ended) == len(set(ended))


def test_the_scanned_hole_card_is_concealed_until_revealed_seed_004_bj_3_7() -> None:
    from tablectl.controller.engines.cards import BlackjackEngine  # noqa: PLC0415
    from tablectl.controller.games.cards.blackjack_rules import BlackjackRules  # noqa: PLC0415

    engine = BlackjackEngine("BJ-1", BlackjackRules(boxes=1, hole_card="scanned"))
    feed(engine, [RoundOpen(), BetsClosed()])
    dealt: list[tuple[str, bool]] = []
    for code in ("TS", "6D", "9H", "QC"):  # box, dealer up, box, dealer hole card
        event = Card(card=code)
        dealt.append((code, engine.conceals(event)))
        engine.apply(event)
    assert dealt == [("TS", False), ("6D", False), ("9H", False), ("QC", True)]
    assert "QC" not in json.dumps(engine.snapshot())


def test_burned_cards_are_concealed_the_shown_one_is_not_bac_e6() -> None:
    engine = bac()
    feed(engine, [ShuffleStarted(), ShuffleCompleted(cards=416)])
    assert engine.phase == "burn"
    assert engine.conceals(Card(card="3H")) is False  # the first card is shown face up
    engine.apply(Card(card="3H"))
    assert [engine.conceals(Card(card=c)) for c in ("KS",)] == [True]
