"""The engine that runs every deal script (tablectl.controller.engines.cards), with small test
games.

The games' own rules are tested in their modules' tests; here: what the engine does the same for
all of them — the script's positions and order, face-down concealment, decision windows, the
per-round reshuffle, extra cards, deal errors and their remedies, a shuffler stop before the
deal (PKH-22), decisions, the catalog and config errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import DealError, Decision, parse_event
from tablectl.controller.core.outcomes import Outcome, Verdict
from tablectl.controller.engines import ENGINES, build_engine
from tablectl.controller.engines.cards import HAND_CANCELLED, CardEngine
from tablectl.controller.games import catalog
from tablectl.controller.games.cards.deal import (
    BOXES,
    CARD_BEFORE_DECISIONS,
    DECISION_REFUSED,
    WRONG_CARD_COUNT,
    BaseGame,
    Deal,
    DealScript,
    GameRules,
    Remedy,
    Slot,
    Step,
    box_name,
)
from tablectl.controller.games.cards.shoe import RANK_NOT_IN_DECK
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import full_deck

Remedies = Literal["void", "void_position", "deal_more"]


class MiniRules(GameRules):
    boxes: int = 2
    remedy: Remedies = "void"


class MiniHoldem(BaseGame):
    """Two face-down cards to each box and the dealer, a face-up flop of three after the first
    decision window; ``fold`` is taken; ``exchange`` gives one card back for a new one."""

    name = "mini"
    script = DealScript(
        (Step((BOXES, "dealer"), 2, "down"), Step(("flop",), 3, "up", stage=1, rotate=False))
    )
    rules_model = MiniRules
    decision_actions: ClassVar[frozenset[str]] = frozenset({"fold", "exchange"})

    def decide(self, deal: Deal, decision: Decision) -> Finding | list[Slot]:
        if decision.action == "exchange":
            hand = deal.hands[box_name(decision.box)]
            given = [c for c in hand if c.code in (decision.cards or ())]
            if len(given) != 1:
                return Finding(DECISION_REFUSED, "test", "give back one card of the hand")
            hand.remove(given[0])
            return [Slot(box_name(decision.box), "down", deal.windows_closed)]
        return []

    def deal_error(self, deal: Deal, error: DealError) -> Remedy:
        assert isinstance(self.rules, MiniRules)
        if self.rules.remedy == "void_position":
            return Remedy("void_position", "L335", remedy="refund_plus_half_ante")
        if self.rules.remedy == "deal_more":
            return Remedy("deal_more", "L335", slots=(Slot("dealer", "down"),))
        return Remedy("void", "PKH-21", "misdeal", "reshuffle_bets_stand")

    def outcome(self, deal: Deal) -> dict[str, Any]:
        return {
            "cards": {p: [c.code for c in cards] for p, cards in deal.hands.items()},
            "folded": [d.box for d in deal.decisions if d.action == "fold"],
        }


class EndlessDraw(BaseGame):
    """Cards to ``draw`` until a heart comes (the ``more`` hook: Andar Bahar's shape)."""

    name = "endless"
    script = DealScript((Step(("draw",), 1),))

    def more(self, deal: Deal) -> Sequence[Slot]:
        return [] if deal.hand("draw")[-1].suit == "H" else [Slot("draw")]

    def outcome(self, deal: Deal) -> dict[str, Any]:
        return {"draw": [c.code for c in deal.hand("draw")]}


@pytest.fixture(autouse=True)
def _test_games(monkeypatch: pytest.MonkeyPatch) -> None:
    for game, name in (("mini", "MiniHoldem"), ("endless", "EndlessDraw"), ("strict", "Strict")):
        entry = catalog.GameEntry("cards", __name__, name, dealer_screen=True)
        monkeypatch.setitem(catalog.CATALOG, game, entry)  # type: ignore[index]
        monkeypatch.setitem(ENGINES, game, catalog.ENGINE_FAMILIES["cards"])  # type: ignore[index]


def engine(game: str = "mini", **rules: Any) -> CardEngine:
    return build_engine("T1", game, rules, source="test.toml")


def run(eng: CardEngine, *events: dict[str, Any] | str) -> list[Outcome | Verdict]:
    """Feed events (a bare string is a card); every output, in order."""
    out: list[Outcome | Verdict] = []
    for event in events:
        raw = {"type": "card", "card": event} if isinstance(event, str) else event
        for o in eng.apply(parse_event(raw)):
            assert isinstance(o, Outcome | Verdict)
            out.append(o)
    return out


SHUFFLED = ({"type": "shuffle_started"}, {"type": "shuffle_completed", "cards": 52})
OPEN = ({"type": "round_open"}, {"type": "bets_closed"})
HOLES = ("AS", "KS", "QS", "JS", "TS", "9S")  # box1, box2, dealer, box1, box2, dealer
CONFIRM = {"type": "confirm"}


def codes(outputs: list[Outcome | Verdict]) -> list[str]:
    return [o.code for o in outputs if isinstance(o, Verdict)]


def outcomes(outputs: list[Outcome | Verdict]) -> list[Outcome]:
    return [o for o in outputs if isinstance(o, Outcome)]


def test_the_script_deals_in_rotation_and_settles_after_the_last_card() -> None:
    eng = engine()
    out = run(eng, *SHUFFLED, *OPEN, *HOLES, CONFIRM, "2H", "3H", "4H")
    (outcome,) = outcomes(out)
    assert codes(out) == []
    assert outcome.status == "settled"
    assert outcome.result == {
        "cards": {
            "box1": ["AS", "JS"],
            "box2": ["KS", "TS"],
            "dealer": ["QS", "9S"],
            "flop": ["2H", "3H", "4H"],
        },
        "folded": [],
    }


def test_face_down_cards_are_concealed_and_never_in_the_snapshot() -> None:
    eng = engine()
    run(eng, *SHUFFLED, *OPEN)
    hidden = []
    for card in HOLES:
        event = parse_event({"type": "card", "card": card})
        hidden.append(eng.conceals(event))
        eng.apply(event)
    assert hidden == [True] * 6
    run(eng, CONFIRM)
    assert not eng.conceals(parse_event({"type": "card", "card": "2H"}))
    run(eng, "2H")
    snap = eng.snapshot()
    assert snap["coup"] == {
        "box1": [None, None],
        "box2": [None, None],
        "dealer": [None, None],
        "flop": ["2H"],
    }
    assert "AS" not in repr(snap)
    assert snap["deal"] == {
        "boxes": [1, 2],
        "next": "flop",
        "windows_closed": 1,
        "awaits_confirm": False,
    }


def test_the_snapshot_asks_the_dealer_to_close_the_window_first() -> None:
    eng = engine()
    run(eng, *SHUFFLED, *OPEN, *HOLES)
    assert eng.snapshot()["deal"]["awaits_confirm"] is True


def test_a_card_before_the_decision_window_closed_holds_the_round() -> None:
    eng = engine()
    out = run(eng, *SHUFFLED, *OPEN, *HOLES, "2H")
    assert codes(out) == [CARD_BEFORE_DECISIONS]
    assert eng.phase == "pending_decision"
    # The supervisor lets the deal go on: the exposed card is the first flop card.
    out = run(eng, CONFIRM, "3H", "4H")
    (outcome,) = outcomes(out)
    assert outcome.result is not None
    assert outcome.result["cards"]["flop"] == ["2H", "3H", "4H"]


def test_a_confirm_while_cards_of_the_stage_are_due_is_a_wrong_card_count() -> None:
    eng = engine()
    out = run(eng, *SHUFFLED, *OPEN, *HOLES[:5], CONFIRM)
    assert codes(out) == [WRONG_CARD_COUNT]
    assert eng.phase == "dealing"


def test_every_round_needs_a_new_shuffle_and_a_card_after_the_deal_is_extra() -> None:
    eng = engine()
    run(eng, *SHUFFLED, *OPEN, *HOLES, CONFIRM, "2H", "3H", "4H")
    assert eng.phase == "shoe_end"
    assert codes(run(eng, "5H")) == ["extra_card"]
    assert codes(run(eng, {"type": "round_open"})) == ["shuffle_required"]
    out = run(eng, *SHUFFLED, *OPEN, *HOLES, CONFIRM, "2H", "3H", "4H")
    assert [o.round for o in outcomes(out)] == ["T1-000002"]


def test_a_shuffler_stop_before_the_first_card_cancels_the_hand() -> None:
    """seed-000 PKH-22."""
    eng = engine()
    out = run(eng, *SHUFFLED, *OPEN, {"type": "fault", "code": "jam"})
    (void,) = outcomes(out)
    assert (void.status, void.reason) == ("void", HAND_CANCELLED)
    assert eng.faults == frozenset({"jam"})


def test_a_fault_once_cards_are_out_voids_as_a_device_fault() -> None:
    out = run(engine(), *SHUFFLED, *OPEN, "AS", {"type": "fault", "code": "jam"})
    (void,) = outcomes(out)
    assert (void.status, void.reason) == ("void", "device_fault")


@pytest.mark.parametrize(
    ("remedy", "expected"),
    [
        ("void", ("void", "misdeal", "reshuffle_bets_stand")),
        ("void_position", None),
        ("deal_more", None),
    ],
)
def test_deal_errors_get_the_games_remedy(
    remedy: Remedies, expected: tuple[str, str, str] | None
) -> None:
    eng = engine(remedy=remedy)
    out = run(eng, *SHUFFLED, *OPEN, *HOLES)
    error = {"type": "deal_error", "kind": "wrong_count", "position": "box2", "cards": 3}
    out = run(eng, error)
    if expected is not None:
        (void,) = outcomes(out)
        assert void.result is not None
        assert (void.status, void.reason, void.result["remedy"]) == expected
        assert void.result["rule"] == "PKH-21"
        return
    assert codes(out) == [WRONG_CARD_COUNT]
    if remedy == "void_position":
        out = run(eng, CONFIRM, "2H", "3H", "4H")
        (outcome,) = outcomes(out)
        assert outcome.result is not None
        assert outcome.result["void_positions"] == {"box2": "refund_plus_half_ante"}
    else:
        out = run(eng, "8S", CONFIRM, "2H", "3H", "4H")
        (outcome,) = outcomes(out)
        assert outcome.result is not None
        assert outcome.result["cards"]["dealer"] == ["QS", "9S", "8S"]


def test_a_deal_error_with_no_deal_in_progress_is_refused() -> None:
    eng = engine()
    exposed = {"type": "deal_error", "kind": "card_exposed"}
    out = run(eng, *SHUFFLED, {"type": "round_open"}, exposed)
    assert codes(out) == ["unexpected_event"]


def test_decisions_the_game_does_not_take_or_for_a_box_not_playing_are_refused() -> None:
    eng = engine()
    run(eng, *SHUFFLED, {"type": "round_open"}, {"type": "bets_closed", "boxes": [1]})
    run(eng, "AS", "KS", "QS", "JS")
    assert codes(run(eng, {"type": "decision", "box": 1, "action": "buy_game"})) == [
        DECISION_REFUSED
    ]
    assert codes(run(eng, {"type": "decision", "box": 2, "action": "fold"})) == [DECISION_REFUSED]
    assert codes(run(eng, {"type": "decision", "box": 1, "action": "fold"})) == []
    out = run(eng, CONFIRM, "2H", "3H", "4H")
    (outcome,) = outcomes(out)
    assert outcome.result is not None
    assert outcome.result["folded"] == [1]
    assert set(outcome.result["cards"]) == {"box1", "dealer", "flop"}


def test_an_exchange_takes_the_card_back_and_deals_its_replacement_face_down() -> None:
    eng = engine()
    run(eng, *SHUFFLED, *OPEN, *HOLES)
    bad = {"type": "decision", "box": 1, "action": "exchange", "cards": ["KS"]}
    assert codes(run(eng, bad)) == [DECISION_REFUSED]  # KS is box 2's
    assert codes(run(eng, {**bad, "cards": ["AS"]})) == []
    assert eng.conceals(parse_event({"type": "card", "card": "8C"}))
    out = run(eng, "8C", CONFIRM, "2H", "3H", "4H")
    (outcome,) = outcomes(out)
    assert outcome.result is not None
    assert outcome.result["cards"]["box1"] == ["JS", "8C"]


def test_the_more_hook_deals_until_the_game_is_satisfied() -> None:
    eng = engine("endless")
    out = run(eng, *SHUFFLED, *OPEN, "AS", "KC", "2D")
    assert outcomes(out) == []
    (outcome,) = outcomes(run(eng, "7H"))
    assert outcome.result == {"draw": ["AS", "KC", "2D", "7H"]}


@settings(max_examples=30, deadline=None)
@given(st.permutations([c.code for c in full_deck()]))
def test_any_shuffled_deck_settles_with_every_card_where_the_script_sends_it(
    deck: list[str],
) -> None:
    eng = engine()
    out = run(eng, *SHUFFLED, *OPEN, *deck[:6], CONFIRM, *deck[6:9])
    (outcome,) = outcomes(out)
    assert codes(out) == []
    assert outcome.result is not None
    assert outcome.result["cards"] == {
        "box1": [deck[0], deck[3]],
        "box2": [deck[1], deck[4]],
        "dealer": [deck[2], deck[5]],
        "flop": deck[6:9],
    }


def test_a_short_deck_refuses_ranks_it_does_not_hold() -> None:
    eng = engine("endless", ranks="6789TJQKA")
    out = run(eng, {"type": "shuffle_started"}, {"type": "shuffle_completed", "cards": 36})
    assert codes(out) == []
    out = run(eng, *OPEN, "2C")
    assert RANK_NOT_IN_DECK in codes(out)
    assert eng.phase == "pending_decision"


def test_a_52_card_count_for_a_36_card_deck_is_rejected() -> None:
    out = run(engine("endless", ranks="6789TJQKA"), *SHUFFLED)
    assert codes(out) == ["shuffler_count_mismatch"]


def test_config_errors_name_the_key_and_the_game() -> None:
    with pytest.raises(ConfigError, match="bogus"):
        engine(bogus=1)
    with pytest.raises(ConfigError, match="unknown game 'baccarat_but_not'"):
        engine("baccarat_but_not")
    with pytest.raises(ConfigError, match="ranks"):
        engine(ranks="XYZ")


def test_every_catalog_game_is_an_engine_registry_entry() -> None:
    assert set(ENGINES) == set(catalog.CATALOG)
    for game in catalog.GAMES:
        assert ENGINES[game] == ("tablectl.controller.engines.cards", "CardEngine")


class Strict(MiniHoldem):
    """A game whose outcome refuses a foul deck, as the hand evaluator does."""

    name = "strict"

    def outcome(self, deal: Deal) -> dict[str, Any]:
        codes_ = [c.code for _, c, _ in deal.order]
        if len(set(codes_)) != len(codes_):
            raise ValueError("duplicate card")
        return super().outcome(deal)


def test_a_foreign_card_a_supervisor_lets_through_settles_without_facts_not_a_crash() -> None:
    eng = engine("strict")
    out = run(eng, *SHUFFLED, *OPEN, "AS", "AS")
    assert codes(out) == ["composition_exceeded"]
    out = run(eng, CONFIRM, "QS", "JS", "TS", "9S", CONFIRM, "2H", "3H", "4H")
    (outcome,) = outcomes(out)
    assert outcome.result is not None
    assert outcome.result["unsettled"] == "duplicate card"
    assert outcome.result["cards"]["box1"] == ["AS", "JS"]
