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

from tablectl.controller.games.catalog import CATALOG, GameEntry
from tablectl.drivers.plugins import RegistryEntry, entry_point_entries

GAME_GROUP = "tablectl.games"
"""The entry-point group third-party packages register their games under."""


def plugin_games() -> list[RegistryEntry]:
    """Every ``tablectl.games`` entry point installed, refused ones included (nothing imported)."""
    return entry_point_entries(GAME_GROUP, CATALOG, "game")


def plugin_entry(game: str) -> GameEntry | None:
    """The catalog entry of a usable plugin game named ``game`` (a card game), else ``None``."""
    for plugin in plugin_games():
        if plugin.name == game and plugin.refused is None:
            return GameEntry("cards", plugin.module, plugin.cls, doc=f"from {plugin.source}")
    return None
