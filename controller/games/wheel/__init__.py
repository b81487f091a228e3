"""Money wheels (Dream Catcher, the 19-sector wheel, Crazy Time, Monopoly, Mega Wheel, Wheelbet,
Spin & Win, Music Wheel) as pure rules: layouts, spin validity, multiplier chains, RNG overlays,
the result.

One family, a preset per rule-book game; ``[rules]`` overrides its parameters. Modules:
:mod:`.rules` (the ``[rules]`` model), :mod:`.spin` (a spin judged, the result), :mod:`.overlay`
(the RNG's picks). Rule ids point into ``../shared/rules/seed-001-live-casino-regulations.md`` §5
(wheels), §2.2, §10, §12; ``docs/games/wheels.md`` has every reading:

- **Layouts are configuration.** The rule book gives segment counts (Dream Catcher L1758–1766,
  Monopoly L1865, Crazy Time L2049, the 19-sector wheel L2471, Wheelbet L4345, Spin & Win L3969)
  but never the physical order (§5.1 [GAP]); each preset
  (:data:`tablectl.controller.games.catalog.WHEEL_PRESETS`) has a *documented default order* (the
  counts spread evenly by :func:`~tablectl.controller.games.catalog.spread`; a roulette wheel's
  order for the two numbered 0–36 wheels) so a table runs out of the box, and a real table sets
  ``segments`` to its wheel's order, index 0 first, in the direction the sensor counts. When the
  rule book gives the counts, a configured layout must have exactly them (``counts``).
- **Spin validity.** The 19-sector wheel: "The round is considered succeeded if the wheel made at
  least 3 full spins clockwise" and "the spin must be repeated" otherwise (L2471, C37) →
  ``direction = "cw"``, ``min_revolutions = 3``; a spin that fails is a re-spin with the same bets,
  never a result. No other wheel's book asks for full turns (Dream Catcher L1748–1768, Monopoly
  L1861–1940, Crazy Time L2047–2097, Mega Wheel L3955–3965, Spin & Win L3969 "after one spin",
  Music Wheel L4337 "after the wheel stops completely", Wheelbet L4345): their minimum is 0, a
  table may set one. The pointer on a divider → re-spin (Crazy Time L2091 "If the wheel stops on
  the border of the segments … the wheel is spun again"; C6: applied to every wheel, configurable).
- **Multiplier chains.** Dream Catcher's 2x/7x (L1754): "all bets remain in place and new bets
  won't be allowed. The wheel is spun again … the multipliers stack" until a number; "2x, then …
  7x, and … 5 … (5 to 1) x 2 x 7". Monopoly's Chance (L1875–1887) chains the same way with the
  card's multiplier (the card is not the wheel's: the wheel factor is 1), and a cash card may end
  the round there (C25: ``open_chain``, closed by a supervisor ``confirm``).
- **Numbers.** Wheelbet's "00" is the string ``"00"`` in every result, never 0 (contracts §4.3);
  Wheelbet and Spin & Win results carry ``color`` and the facts of their bets (``number_facts``).
- **RNG overlays** (:mod:`.overlay`): Mega Wheel's lucky number, Music Wheel's bonus sector,
  Crazy Time's Top Slot, each one ``rng_draw`` after bets close and before its deadline.
- **Malfunction.** Dream Catcher L1768 and Crazy Time L2097: "Any malfunction cancels the game
  round … Bets are returned" → ``on_fault = "void"``. Monopoly, the 19-sector wheel, Mega Wheel,
  Music Wheel, Wheelbet and Spin & Win have no clause (§2.2) → ``"decide"`` (seed-001 G3/G4, C42).
- **Monopoly's dice bonus** (L1891–1921). Whether its dice are physical is not stated (§5.2 [GAP]),
  so it is a switch: ``dice_bonus = true`` keeps the round open after "2 rolls"/"4 rolls" for the
  bonus's rolls (:mod:`tablectl.controller.games.monopoly_bonus`); ``false`` (the default: a
  table with no dice reader, or a virtual bonus) ends the round on the segment as before.
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
