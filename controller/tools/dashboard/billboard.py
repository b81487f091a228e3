"""The roulette billboard's figures over the last :data:`WINDOW` spins (pure).

A share is a percentage of *all* spins, zeros included, so red and black add up to less than 100
by the green share, as players expect. A display, not a test: bias is the statistics page's χ².
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from tablectl.controller.games.roulette import Pocket, Variant, color, pockets

WINDOW: Final = 500
"""Spins the hot/cold numbers and the shares are counted over."""
LAST: Final = 20
"""Numbers shown in the strip of last results."""
HOT: Final = 5
"""Hot and cold numbers shown."""


@dataclass(frozen=True, slots=True)
class Ball:
    number: Pocket
    color: str
    count: int = 0
    """Times in the window (hot and cold numbers); 0 in the strip of last numbers."""


@dataclass(frozen=True, slots=True)
class Share:
    label: str
    count: int
    percent: float


@dataclass(frozen=True)
class Billboard:
    """``last``: newest first. ``groups``: (title, shares) in display order."""

    spins: int
    last: tuple[Ball, ...]
    hot: tuple[Ball, ...]
    cold: tuple[Ball, ...]
    groups: tuple[tuple[str, tuple[Share, ...]], ...]


def billboard(
    numbers: Sequence[Pocket],
    variant: Variant = "european",
    *,
    window: int = WINDOW,
    last: int = LAST,
    hot: int = HOT,
) -> Billboard:
    """The billboard of ``numbers`` (oldest first; numbers not on the wheel are left out)."""
    valid = pockets(variant)
    spins = [n for n in numbers if not isinstance(n, bool) and n in valid][-window:]
    counts = Counter(spins)
    recency = {n: i for i, n in enumerate(spins)}  # the last index each number came up at
    every: list[Pocket] = sorted(p for p in valid if isinstance(p, int))
    every += ["00"] if "00" in valid else []
    # Hot: most often, the most recent first among equals. Cold: least often, the longest
    # absent first among equals (never seen in the window counts as longest absent).
    by_heat = sorted(every, key=lambda n: (-counts[n], -recency.get(n, -1)))
    by_cold = sorted(every, key=lambda n: (counts[n], recency.get(n, -1)))
    return Billboard(
        spins=len(spins),
        last=tuple(Ball(n, color(n)) for n in reversed(spins[-last:])),
        hot=tuple(Ball(n, color(n), counts[n]) for n in by_heat[:hot]) if spins else (),
        cold=tuple(Ball(n, color(n), counts[n]) for n in by_cold[:hot]) if spins else (),
        groups=_groups(spins),
    )


def _groups(spins: Sequence[Pocket]) -> tuple[tuple[str, tuple[Share, ...]], ...]:
    total = len(spins)
    numbered = [n for n in spins if isinstance(n, int) and n > 0]

    def share(label: str, count: int) -> Share:
        return Share(label, count, 100.0 * count / total if total else 0.0)

    colours = Counter(color(n) for n in spins)
    return (
        ("colour", tuple(share(c, colours[c]) for c in ("red", "black", "green"))),
        (
            "odd / even",
            (
                share("odd", sum(n % 2 == 1 for n in numbered)),
                share("even", sum(n % 2 == 0 for n in numbered)),
            ),
        ),
        (
            "low / high",
            (
                share("1–18", sum(n <= 18 for n in numbered)),
                share("19–36", sum(n >= 19 for n in numbered)),
            ),
        ),
        (
            "dozens",
            tuple(
                share(label, sum(lo <= n <= lo + 11 for n in numbered))
                for label, lo in (("1st 12", 1), ("2nd 12", 13), ("3rd 12", 25))
            ),
        ),
    )
