"""Money wheels (Dream Catcher, the 19-sector wheel, Crazy Time, Monopoly, Mega Wheel, Wheelbet,
Spin & Win, Music Wheel) as pure rules: layouts, spin validity, multiplier chains, RNG overlays, the
result.

One family, a preset per game; ``[rules]`` overrides it. Modules: :mod:`.rules` (the model),
:mod:`.spin` (a spin judged), :mod:`.overlay` (the RNG's picks). Rule ids point into seed-001 §5,
§2.2, §10, §12; every reading, with the book's words: ``docs/games/wheels.md``.

- **Layouts are configuration.** The book gives segment counts (Dream Catcher L1758–1766,
  Monopoly L1865, Crazy Time L2049, 19-sector L2471, Wheelbet L4345, Spin & Win L3969), never the
  order (§5.1 [GAP]): each preset (:data:`tablectl.controller.games.catalog.WHEEL_PRESETS`) has a
  documented default order (:func:`~tablectl.controller.games.catalog.spread`); a real table sets
  ``segments``, index 0 first, in the sensor's direction, and must keep the book's ``counts``.
- **Spin validity.** The 19-sector wheel needs at least 3 full clockwise turns, else a re-spin
  (L2471, C37): ``direction = "cw"``, ``min_revolutions = 3``. No other book asks for turns
  (L1748–1768, L1861–1940, L2047–2097, L3955–3965, L3969, L4337, L4345): minimum 0. The pointer
  on a divider is a re-spin (Crazy Time L2091; C6: every wheel, configurable). A re-spin keeps
  the bets and is never a result.
- **Multiplier chains.** Dream Catcher's 2x/7x spin again and stack until a number (L1754).
  Monopoly's Chance chains with the card's multiplier (L1875–1887; wheel factor 1); a cash card
  may end the round (C25: ``open_chain``, closed by ``confirm``).
- **Numbers.** Wheelbet's "00" is the string ``"00"``, never 0 (contracts §4.3); Wheelbet and
  Spin & Win results carry ``color`` and ``number_facts``.
- **RNG overlays** (:mod:`.overlay`): Mega Wheel, Music Wheel, Crazy Time's Top Slot.
- **Malfunction.** Dream Catcher L1768, Crazy Time L2097: ``on_fault = "void"``, bets returned.
  The others have no clause (§2.2): ``"decide"`` (seed-001 G3/G4, C42).
- **Monopoly's dice bonus** (L1891–1921): physical dice are not stated (§5.2 [GAP]), so
  ``dice_bonus = true`` keeps the round open for the bonus's rolls
  (:mod:`tablectl.controller.games.monopoly_bonus`); ``false`` (default) ends it on the segment.
"""

from __future__ import annotations

from tablectl.controller.games.wheel.overlay import Overlay, check_overlay, draw_order, overlay_data
from tablectl.controller.games.wheel.rules import OverlayKind, WheelRules, WheelVariant, is_number
from tablectl.controller.games.wheel.spin import (
    RESPIN_DIRECTION_UNKNOWN,
    RESPIN_MIN_REVOLUTIONS,
    RESPIN_ON_DIVIDER,
    RESPIN_REVOLUTIONS_UNKNOWN,
    RESPIN_WRONG_DIRECTION,
    Kind,
    check_spin,
    kind,
    number_facts,
    number_of,
    spin_result,
)

__all__ = [
    "RESPIN_DIRECTION_UNKNOWN",
    "RESPIN_MIN_REVOLUTIONS",
    "RESPIN_ON_DIVIDER",
    "RESPIN_REVOLUTIONS_UNKNOWN",
    "RESPIN_WRONG_DIRECTION",
    "Kind",
    "Overlay",
    "OverlayKind",
    "WheelRules",
    "WheelVariant",
    "check_overlay",
    "check_spin",
    "draw_order",
    "is_number",
    "kind",
    "number_facts",
    "number_of",
    "overlay_data",
    "spin_result",
]
