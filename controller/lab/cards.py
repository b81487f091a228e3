"""The lab's card tables beyond the dealer-screen games, and the studio RNG of Golden Wealth and
Lightning Baccarat: after each close of bets it draws five multiplier cards (seed-001 L4021, L4119)
as an ``rng_draw``, and the simulated dealer waits for it before the first card (L4025, L4123).
"""

from __future__ import annotations

import asyncio
from typing import Final

from tablectl.controller.games.cards.baccarat_rng import OverlayRules
from tablectl.controller.games.cards.deal import BaseGame
from tablectl.controller.lab.rng import SimulatedRng
from tablectl.controller.service.runner import TableRunner
from tablectl.drivers.cards import full_deck

SHOE_VARIANTS: Final = ("blackjack_turbo", "golden_wealth_baccarat", "lightning_baccarat")
"""The shoe games' variants a lab table runs besides the dealer-screen games
(``tablectl demo --tables lightning_baccarat``)."""

DECK_CARDS: Final = tuple(card.code for card in full_deck())
"""The virtual deck the RNG draws from: "a virtual deck of 52 cards" (L4021, L4119)."""


def card_rng(runner: TableRunner, game: BaseGame, *, seed: int = 0) -> SimulatedRng | None:
    """The studio RNG of ``game``'s table (``None``: the game has none)."""
    rules = game.rules
    if not game.rng_draw or not isinstance(rules, OverlayRules):
        return None
    count = (rules.rng_cards, rules.rng_cards)
    return SimulatedRng(
        runner, values=DECK_CARDS, multipliers=rules.multipliers, count=count, seed=seed
    )


def start_card_rng(
    group: asyncio.TaskGroup, runner: TableRunner, game: BaseGame, *, seed: int = 0
) -> SimulatedRng | None:
    """Attach ``game``'s studio RNG to its running table (a runner listener and a task)."""
    rng = card_rng(runner, game, seed=seed)
    if rng is not None:
        runner.listeners.append(rng.on_record)
        group.create_task(rng.run(), name=f"lab:{game.name}:rng")
    return rng
