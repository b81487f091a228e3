"""The card engine: one engine for every card game (:mod:`.engine`), its base :mod:`.table`, its
machine :mod:`.phases`, a round :mod:`.round`, the shoe :mod:`.shoe`, idle cards :mod:`.idle`,
and :mod:`.build`."""

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
