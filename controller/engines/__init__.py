"""Round engines: one per game family, chosen by ``[table] game`` through a lazy registry.

The registry holds ``"module.path", "ClassName"`` strings (python-can's ``BACKENDS`` pattern), so
importing this package costs nothing and a broken engine module fails when a table that uses it
starts, with a :class:`~tablectl.controller.core.errors.ConfigError` naming the game, and not at
import of the whole service.

An engine is pure: events in (time inside them), :class:`~tablectl.controller.core.outcomes.Outcome`
and :class:`~tablectl.controller.core.outcomes.Verdict` values out. The runner journals each event
before calling :meth:`Engine.apply` and publishes :meth:`Engine.snapshot` on the retained ``state``
topic.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import TableEvent
from tablectl.controller.core.outcomes import EngineOutput
from tablectl.controller.games.catalog import GAMES

__all__ = ["ENGINES", "Engine", "EngineClass", "PresetEngineClass", "build_engine"]

ENGINES: Mapping[str, tuple[str, str]] = {
    "roulette": ("tablectl.controller.engines.roulette", "RouletteEngine"),
    "baccarat": ("tablectl.controller.engines.baccarat", "BaccaratEngine"),
    "dragon_tiger": ("tablectl.controller.engines.dragon_tiger", "DragonTigerEngine"),
    "blackjack": ("tablectl.controller.engines.blackjack", "BlackjackEngine"),
    # Ball draws: one engine, a preset per rule-book game ([rules] overrides its parameters).
    "lucky5": ("tablectl.controller.engines.draw", "DrawEngine"),
    "lucky6": ("tablectl.controller.engines.draw", "DrawEngine"),
    "lucky7": ("tablectl.controller.engines.draw", "DrawEngine"),
    "super_six": ("tablectl.controller.engines.draw", "DrawEngine"),
    "mega6": ("tablectl.controller.engines.draw", "DrawEngine"),
    "one_bet": ("tablectl.controller.engines.draw", "DrawEngine"),
    "keno_express": ("tablectl.controller.engines.draw", "DrawEngine"),
    "lotto_5_35": ("tablectl.controller.engines.draw", "DrawEngine"),
    "mega_ball": ("tablectl.controller.engines.draw", "DrawEngine"),
    "bingo37": ("tablectl.controller.engines.draw", "DrawEngine"),
    "bingo38": ("tablectl.controller.engines.draw", "DrawEngine"),
    "keno": ("tablectl.controller.engines.draw", "DrawEngine"),
    # Money wheels: one engine, a preset (segment layout) per rule-book game.
    "dream_catcher": ("tablectl.controller.engines.wheel", "WheelEngine"),
    "wheel_of_fortune": ("tablectl.controller.engines.wheel", "WheelEngine"),
    "crazy_time": ("tablectl.controller.engines.wheel", "WheelEngine"),
    "monopoly": ("tablectl.controller.engines.wheel", "WheelEngine"),
    "mega_wheel": ("tablectl.controller.engines.wheel", "WheelEngine"),
    # House-banked poker and the single-deck card games: one engine runs every deal script; the game
    # key picks the game (tablectl.controller.games.catalog).
    **{game: ("tablectl.controller.engines.scripted", "ScriptEngine") for game in GAMES},
}
"""``game -> (module, class)``; the class implements :class:`EngineClass`."""


class Engine(Protocol):
    """What the runner needs from a game's round engine."""

    @property
    def game(self) -> str:
        """The registry key, e.g. ``"roulette"`` (goes into every outcome)."""
        ...

    @property
    def current_round(self) -> str | None:
        """The round in progress, ``None`` between rounds."""
        ...

    def apply(self, event: TableEvent) -> list[EngineOutput]:
        """Feed one event; never raises for a bad sequence (those are verdicts)."""
        ...

    def snapshot(self) -> dict[str, Any]:
        """JSON-ready table state for the retained ``state`` topic."""
        ...

    def conceals(self, event: TableEvent) -> bool:
        """Whether ``event``, applied next, is a card dealt face down (not to be published
        before its reveal); asked before the event is journaled."""
        ...


class EngineClass(Protocol):
    """The class-side contract of a registry entry: build an engine from a raw ``[rules]``."""

    def from_rules(
        self, table_id: str, rules: Mapping[str, Any], *, source: str, next_round: int = 1
    ) -> Engine: ...


@runtime_checkable
class PresetEngineClass(Protocol):
    """A registry entry shared by several games (the draw and wheel families): the game key
    selects a preset of the rule book's parameters, and ``[rules]`` overrides them."""

    def from_preset(
        self,
        table_id: str,
        game: str,
        rules: Mapping[str, Any],
        *,
        source: str,
        next_round: int = 1,
    ) -> Engine: ...


def build_engine(
    table_id: str,
    game: str,
    rules: Mapping[str, Any],
    *,
    source: str,
    next_round: int = 1,
) -> Engine:
    """Build the engine for ``game`` with its ``[rules]`` validated strictly.

    Args:
        table_id: the ``[table] id``; round ids are ``f"{table_id}-{n:06d}"``.
        game: the ``[table] game`` key.
        rules: the raw ``[rules]`` mapping, validated by the engine's own model.
        source: the config file, named in error messages.
        next_round: ``n`` of the next round id (the runner takes it from the journal).

    Raises:
        ConfigError: unknown game (the message lists the known ones), an engine that cannot be
            loaded, or ``[rules]`` that the engine rejects.
    """
    try:
        module_name, class_name = ENGINES[game]
    except KeyError:
        known = ", ".join(sorted(ENGINES))
        raise ConfigError(f"{source}: unknown game {game!r} (known: {known})") from None
    try:
        module = importlib.import_module(module_name)
        cls: EngineClass = getattr(module, class_name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{source}: engine for game {game!r} cannot be loaded: {exc}") from None
    if isinstance(cls, PresetEngineClass):
        # One engine, many rule-book games: the game key picks the preset.
        return cls.from_preset(table_id, game, rules, source=source, next_round=next_round)
    return cls.from_rules(table_id, rules, source=source, next_round=next_round)
