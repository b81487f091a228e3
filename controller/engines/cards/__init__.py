"""The card engine: one engine for every card game (see :mod:`.engine`).

- :mod:`.engine` — :class:`CardEngine`: rounds, decisions, where each card read goes;
- :mod:`.table` — :class:`~.table.CardTable`, its base: the shoe's and the devices' events,
  faults, the end of a round;
- :mod:`.build` — :func:`load_game` (a card game of the catalog) and one game's table by hand;
- :mod:`.phases` — its strict machine and the codes of its verdicts and voids;
- :mod:`.round` — :class:`~.round.ScriptRound`, one round of a game's deal script and hooks;
- :mod:`.shoe` — :class:`~.shoe.ShoeLife`, the shoe's life (its own validated machine);
- :mod:`.idle` — :class:`~.idle.IdleCards`, cards between rounds (carried, or a coup without bets).
"""

from __future__ import annotations

from tablectl.controller.engines.cards.build import (
    BaccaratEngine,
    BlackjackEngine,
    DragonTigerEngine,
    load_game,
)
from tablectl.controller.engines.cards.engine import CardEngine
from tablectl.controller.engines.cards.phases import DEAL_ERROR_NOTED, HAND_CANCELLED

__all__ = [
    "DEAL_ERROR_NOTED",
    "HAND_CANCELLED",
    "BaccaratEngine",
    "BlackjackEngine",
    "CardEngine",
    "DragonTigerEngine",
    "load_game",
]
