"""Round engines: one per game family, chosen by ``[table] game`` through the catalog.

:data:`ENGINES` (python-can's ``BACKENDS`` pattern) and each game's ``[rules]`` come from
:data:`tablectl.controller.games.catalog.CATALOG`. Importing this package imports no engine, so a
broken engine module fails when a table that uses it starts (a ``ConfigError`` naming the game),
not at import of the whole service. Engines are pure: events in, outcomes and verdicts out."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Protocol

from tablectl.controller.config import DEALER_REQUIRED, validate_section
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import TableEvent
from tablectl.controller.core.outcomes import EngineOutput
from tablectl.controller.games import catalog

__all__ = ["ENGINES", "Engine", "EngineClass", "build_engine", "load_rules"]

ENGINES: Mapping[str, tuple[str, str]] = {
    game: catalog.ENGINE_FAMILIES[entry.family] for game, entry in catalog.CATALOG.items()
}
"""``game -> (module, class)`` of the catalog's games; installed packages' games are found by
:func:`build_engine` too, on the card engine."""


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

    @property
    def phase(self) -> str:
        """The round machine's state (the betting timer looks at it ten times a second)."""
        ...

    @property
    def faults(self) -> frozenset[str]:
        """The latched fault codes (a table with any is held, R14)."""
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
    """Every engine's constructor: table id, validated rules, game key, ``n`` of the next round
    id."""

    def __call__(self, table_id: str, rules: Any, /, *, game: str, next_round: int) -> Engine: ...


def _entry(game: str, source: str) -> catalog.GameEntry:
    """The catalog's entry for ``game``, else an installed package's; ``ConfigError`` lists the
    known."""
    entry = catalog.CATALOG.get(game)
    if entry is None:
        # Only a key the catalog lacks looks at the installed packages' metadata.
        from tablectl.controller.plugins import plugin_entry  # noqa: PLC0415

        entry = plugin_entry(game)
    if entry is None:
        known = ", ".join(sorted(catalog.CATALOG))
        raise ConfigError(f"{source}: unknown game {game!r} (known: {known})")
    return entry


def _import(module_name: str, name: str) -> Any:
    return getattr(importlib.import_module(module_name), name)


def load_rules(
    game: str, rules: Mapping[str, Any] | None = None, *, source: str = "<catalog>"
) -> Any:
    """The validated rules of ``game``: its preset (or the one ``[rules] variant`` names) with
    ``rules`` on top; a card game's come back as the game itself. Every refusal is a
    ``ConfigError`` naming key, file and (for a rule-book contradiction) the rule."""
    entry = _entry(game, source)
    try:
        cls = _import(entry.module, entry.name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{source}: rules of game {game!r} cannot be loaded: {exc}") from None
    from tablectl.controller.games.cards.deal import BaseGame  # noqa: PLC0415 - only when used

    if entry.family == "cards" and not (isinstance(cls, type) and issubclass(cls, BaseGame)):
        raise ConfigError(f"{source}: game {game!r}: {entry.module}.{entry.name} is no BaseGame")
    raw = dict(rules or {})
    if entry.variants is None:
        merged = {**entry.preset, **raw}
    else:
        # One engine, many rule-book games: the game key (or [rules] variant) picks the preset.
        variant = raw.get("variant", game)
        if not isinstance(variant, str) or variant not in entry.variants:
            known = ", ".join(entry.variants)
            where = "rules.variant" if "variant" in raw else "table.game"
            raise ConfigError(
                f"{source}: {where}: no {entry.family} preset {variant!r} (known: {known})"
            )
        merged = {**entry.variants[variant], "variant": variant, **raw}
    # What the rule book fixes (seed-001 §3.0 (4) jokers, §5 sectors, §6 balls and faces …) is
    # not the table's to change: games/rule_book.py, named with the rule it breaks.
    from tablectl.controller.games import rule_book  # noqa: PLC0415 - only when used

    if entry.family == "cards":
        if (found := rule_book.deck_contradiction(game, merged)) is not None:
            raise ConfigError(f"{source}: {found}")
        return cls(validate_section(cls.rules_model, merged, source=source, section="rules"))
    validated = validate_section(cls, merged, source=source, section="rules")
    if (found := rule_book.contradiction(entry.family, game, validated)) is not None:
        raise ConfigError(f"{source}: {found}")
    return validated


def build_engine(
    table_id: str,
    game: str,
    rules: Mapping[str, Any],
    *,
    source: str,
    next_round: int = 1,
) -> Engine:
    """The engine for ``game``, its raw ``[rules]`` validated strictly (``source`` is named in
    errors)."""
    found = ENGINES.get(game)
    module_name, class_name = found or catalog.ENGINE_FAMILIES[_entry(game, source).family]
    try:
        cls: EngineClass = _import(module_name, class_name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{source}: engine for game {game!r} cannot be loaded: {exc}") from None
    # [staff] dealer_required travels with the rules (TableConfig.engine_rules): every game has it.
    required = rules.get(DEALER_REQUIRED, False)
    if not isinstance(required, bool):
        raise ConfigError(f"{source}: rules.{DEALER_REQUIRED}: must be true or false")
    raw = {k: v for k, v in rules.items() if k != DEALER_REQUIRED}
    engine = cls(table_id, load_rules(game, raw, source=source), game=game, next_round=next_round)
    from tablectl.controller.engines.base import RoundEngine  # noqa: PLC0415 - loaded by now

    if isinstance(engine, RoundEngine):
        engine.dealer_required = required
    return engine
