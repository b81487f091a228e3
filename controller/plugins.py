"""Games from other packages: the ``tablectl.games`` entry points (the drivers' have theirs).

An operator's own card game (a house variant, a game the rule books add later) is a deal script,
a :class:`~tablectl.controller.games.cards.deal.BaseGame` subclass, in a package of its own,
registered the way drivers are (:mod:`tablectl.drivers.registry`, python-can's
``can.interface``)::

    [project.entry-points."tablectl.games"]
    acme_high_card = "acme_tablectl.game:HighCard"

It then runs on the one card engine like every built-in card game. The same rules as for
drivers keep a certified table from changing silently: the catalog's names win (a plugin that
reuses one is refused), two packages registering one name are both refused, and nothing is
imported until a table uses the game. ``check-config`` and ``diag ports`` list what was found.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

from tablectl.controller.games.catalog import CATALOG, GameEntry

__all__ = ["GAME_GROUP", "PluginGame", "plugin_entry", "plugin_games"]

GAME_GROUP = "tablectl.games"
"""The entry-point group third-party packages register their games under."""


@dataclass(frozen=True)
class PluginGame:
    """One game an installed package registers, and whether it is used."""

    name: str
    module: str
    cls: str
    source: str
    """The distribution (``name version``) whose entry point registered it."""
    refused: str | None = None
    """Why it is not used (a catalog name, a name two packages claim, a malformed value)."""


def plugin_games() -> list[PluginGame]:
    """Every ``tablectl.games`` entry point installed, refused ones included (nothing imported)."""
    points = list(metadata.entry_points(group=GAME_GROUP))
    found = []
    for point in points:
        dist = point.dist
        source = f"{dist.name} {dist.version}" if dist is not None else "entry point"
        module, _, cls = point.value.partition(":")
        twins = [p for p in points if p.name == point.name and p is not point]
        refused = None
        if not module or not cls or " " in point.value:
            refused = f"entry point value {point.value!r} is not 'module:Class'"
        elif point.name in CATALOG:
            refused = f"reuses the built-in game name {point.name!r}"
        elif twins:
            refused = f"another package registers {point.name!r} too"
        found.append(PluginGame(point.name, module, cls, source, refused))
    return found


def plugin_entry(game: str) -> GameEntry | None:
    """The catalog entry of a usable plugin game named ``game`` (a card game), else ``None``."""
    for plugin in plugin_games():
        if plugin.name == game and plugin.refused is None:
            return GameEntry("cards", plugin.module, plugin.cls, doc=f"from {plugin.source}")
    return None
