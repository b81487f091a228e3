"""Building a card table: a game of the catalog (:func:`load_game`), or one game's table by hand
(shorthands for tests and tools)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.engines import load_rules
from tablectl.controller.engines.cards.engine import CardEngine
from tablectl.controller.games import catalog
from tablectl.controller.games.cards.baccarat import Baccarat, BaccaratRules
from tablectl.controller.games.cards.blackjack import Blackjack
from tablectl.controller.games.cards.blackjack_rules import BlackjackRules
from tablectl.controller.games.cards.deal import BaseGame
from tablectl.controller.games.cards.dragon_tiger import DragonTiger, DragonTigerRules


def load_game(game: str, rules: Mapping[str, Any], *, source: str) -> BaseGame:
    """The catalog's card game with its ``[rules]`` validated (preset first); else
    ``ConfigError``."""
    entry = catalog.CATALOG.get(game)
    if entry is None or entry.family != "cards":
        raise ConfigError(f"{source}: {game!r} is not a card game")
    loaded = load_rules(game, rules, source=source)
    assert isinstance(loaded, BaseGame)
    return loaded


class BaccaratEngine(CardEngine):
    """A baccarat table (seed-000 §4, seed-001 §3.1, seed-002-004 A.1)."""

    def __init__(
        self, table_id: str, rules: BaccaratRules | None = None, *, next_round: int = 1
    ) -> None:
        super().__init__(table_id, Baccarat(rules or BaccaratRules()), next_round=next_round)


class DragonTigerEngine(CardEngine):
    """A dragon tiger (or football studio, or war of bets) table (seed-001 §3.6–3.8)."""

    def __init__(
        self, table_id: str, rules: DragonTigerRules | None = None, *, next_round: int = 1
    ) -> None:
        super().__init__(table_id, DragonTiger(rules or DragonTigerRules()), next_round=next_round)


class BlackjackEngine(CardEngine):
    """A blackjack table (seed-000 §2, seed-001 §3.4, seed-002-004 A.2)."""

    def __init__(
        self, table_id: str, rules: BlackjackRules | None = None, *, next_round: int = 1
    ) -> None:
        super().__init__(table_id, Blackjack(rules or BlackjackRules()), next_round=next_round)
