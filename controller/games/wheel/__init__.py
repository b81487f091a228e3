"""Money wheels (Dream Catcher, the 19-sector wheel, Crazy Time, Monopoly, Mega Wheel, Wheelbet,
Spin & Win, Music Wheel) as pure rules; one family, a preset per game. Every reading, with the
book's words: ``docs/games/wheels.md``.

- Layouts: counts per book (L1758–1766, L1865, L2049, L2471, L4345, L3969), never the order (§5.1
  [GAP]): a real table sets ``segments`` and keeps the ``counts``.
- Spin validity: 3 clockwise turns on the 19-sector wheel (L2471, C37), none elsewhere; a pointer
  on a divider re-spins (L2091; C6).
- Chains: Dream Catcher (L1754), Monopoly's Chance (L1875–1887; C25 ``open_chain``).
- Numbers: Wheelbet's "00" stays a string (contracts §4.3).
- Malfunction: void for Dream Catcher (L1768) and Crazy Time (L2097); the rest ``"decide"``
  (§2.2; G3/G4, C42).
- Monopoly's dice bonus (L1891–1921; §5.2 [GAP]): ``dice_bonus``."""

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
