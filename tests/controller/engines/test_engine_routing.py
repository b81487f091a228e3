"""Event routing, in one place (controller/engines/base.py): an event type an engine has no
handler of is another game's (``not_for_this_game``) unless every table shares it."""

from __future__ import annotations

import pytest

from tablectl.controller.core.events import EVENT_TYPES, parse_event
from tablectl.controller.core.outcomes import Verdict
from tablectl.controller.engines import base, build_engine
from tablectl.controller.engines.base import SHARED_EVENTS, foreign_events
from tablectl.controller.games import catalog


@pytest.mark.parametrize("game", sorted(catalog.CATALOG))
def test_a_shared_or_handled_event_is_never_another_games(game: str) -> None:
    engine = build_engine("T1", game, {}, source="t.toml")
    assert isinstance(engine, base.RoundEngine)
    foreign = engine._other_games
    assert foreign <= set(EVENT_TYPES)
    assert not foreign & SHARED_EVENTS
    # Handled and foreign only where the game does not play its family's event (card tables).
    assert not foreign & set(engine._handlers) or engine._family == "card"


def test_a_new_event_type_is_another_games_wherever_no_engine_handles_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(base, "EVENT_TYPES", {**EVENT_TYPES, "new_event": object})
    for family in ("roulette", "dice", "draw", "wheel", "beads", "card", "plug_in"):
        assert "new_event" in foreign_events(family, frozenset())
        assert "new_event" not in foreign_events(family, frozenset({"new_event"}))
    assert "confirm" not in foreign_events("beads", frozenset())


@pytest.mark.parametrize(
    ("game", "event", "code"),
    [
        ("fan_tan", {"type": "winning_number", "number": 3}, "not_for_this_game"),
        ("fan_tan", {"type": "confirm"}, "unexpected_event"),
        ("roulette", {"type": "card", "card": "AS"}, "not_for_this_game"),
        ("roulette", {"type": "mixing", "on": True}, "unexpected_event"),
        ("lucky7", {"type": "beads", "count": 3}, "not_for_this_game"),
        ("lucky7", {"type": "dice", "dice": [1, 2]}, "unexpected_event"),
        ("sic_bo", {"type": "beads", "count": 3}, "unexpected_event"),
        ("baccarat", {"type": "decision", "box": 1, "action": "hit"}, "not_for_this_game"),
        ("blackjack", {"type": "rng_draw", "numbers": [{"value": 1}]}, "unexpected_event"),
    ],
)
def test_each_family_routes_as_its_journals_record(
    game: str, event: dict[str, object], code: str
) -> None:
    [verdict] = build_engine("T1", game, {}, source="t.toml").apply(parse_event(event))
    assert isinstance(verdict, Verdict)
    assert verdict.code == code
