"""Which scripted card game each ``[table] game`` key is: ``key -> (module, class, preset)``.

The class is a :class:`tablectl.controller.games.cards.deal.BaseGame`; ``preset`` holds the
``[rules]`` defaults that make the rule book's game out of a family class (``[rules]`` in the
table's config overrides them). Strings, so that importing the catalog imports no game (python-can's
``BACKENDS``).

Rule-book sources per game are in each module's docstring and in ``docs/card-games.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["GAMES"]

GAMES: Mapping[str, tuple[str, str, Mapping[str, Any]]] = {
    # Community-card poker against the dealer (seed-000 §6, seed-001 §3.14–3.15).
    "ultimate_texas_holdem": ("tablectl.controller.games.cards.holdem", "UltimateTexasHoldem", {}),
    "casino_holdem": ("tablectl.controller.games.cards.holdem", "CasinoHoldem", {}),
    "texas_holdem": ("tablectl.controller.games.cards.holdem", "TexasHoldemVsDealer", {}),
    # Three-card and five-card stud against the dealer (seed-000 §7, seed-001 §3.13, §3.17).
    "three_card_poker": ("tablectl.controller.games.cards.stud", "ThreeCardPoker", {}),
    "teen_patti": (
        "tablectl.controller.games.cards.stud",
        "ThreeCardPoker",
        {"ranking": "teen_patti"},
    ),
    "caribbean_stud": ("tablectl.controller.games.cards.stud", "CaribbeanStud", {}),
    # The "card poker" family with exchanges and the sixth card (seed-000 §8, seed-001 §3.9–3.12).
    "card_poker": (
        "tablectl.controller.games.cards.card_poker",
        "CardPoker",
        {"variant": "card_poker"},
    ),
    "card_poker_exchange": (
        "tablectl.controller.games.cards.card_poker",
        "CardPoker",
        {"variant": "card_poker_exchange"},
    ),
    "six_card_poker": (
        "tablectl.controller.games.cards.card_poker",
        "CardPoker",
        {"variant": "six_card_poker"},
    ),
    "poker_with_joker": (
        "tablectl.controller.games.cards.card_poker",
        "CardPoker",
        {"variant": "poker_with_joker"},
    ),
    "bombay_poker": ("tablectl.controller.games.cards.card_poker", "BombayPoker", {}),
    # Card sequences (seed-001 §3.8a, §3.18, §3.19).
    "andar_bahar": ("tablectl.controller.games.cards.sequences", "AndarBahar", {}),
    "side_bet_city": ("tablectl.controller.games.cards.sequences", "SideBetCity", {}),
    "speedy7": ("tablectl.controller.games.cards.sequences", "Speedy7", {}),
    # One card against another, a card a round, 21 with two hands (seed-001 §3.20, §3.21, §3.23).
    "bet21": ("tablectl.controller.games.cards.single_card", "Bet21", {}),
    "jokerbet": ("tablectl.controller.games.cards.single_card", "Jokerbet", {}),
    "top_card": ("tablectl.controller.games.cards.single_card", "TopCard", {}),
}
