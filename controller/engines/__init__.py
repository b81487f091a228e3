"""Round engines: one per game family, chosen by ``[table] game`` through the catalog.

:data:`ENGINES` (``game -> ("module.path", "ClassName")``, python-can's ``BACKENDS`` pattern) is
derived from :data:`tablectl.controller.games.catalog.CATALOG`, and so is every game's ``[rules]``
(:func:`load_rules`: the catalog's preset, the table's ``[rules]`` on top, validated strictly).
Importing this package imports no engine and no game; a broken engine module fails when a table
that uses it starts, with a :class:`~tablectl.controller.core.errors.ConfigError` naming the game,
and not at import of the whole service.

An engine is pure: events in (time inside them), :class:`~tablectl.controller.core.outcomes.Outcome`
and :class:`~tablectl.controller.core.outcomes.Verdict` values out. The runner journals each event
before calling :meth:`Engine.apply` and publishes :meth:`Engine.snapshot` on the retained ``state``
topic. Every engine is a :class:`~tablectl.controller.engines.base.RoundEngine`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Protocol

from tablectl.controller.config import validate_section
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import TableEvent
from tablectl.controller.core.outcomes import EngineOutput
from tablectl.controller.games import catalog

__all__ = ["ENGINES", "Engine", "EngineClass", "build_engine", "load_rules"]

ENGINES: Mapping[str, tuple[str, str]] = {
    game: catalog.ENGINE_FAMILIES[entry.family] for game, entry in catalog.CATALOG.items()
}
"""``game -> (module, class)`` of the catalog's games; the class implements :class:`EngineClass`.
Games from installed packages (:mod:`tablectl.controller.plugins`) are found by
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
    """The class-side contract of a registry entry (every engine's constructor): an engine from
    the table id (round ids are ``f"{table_id}-{n:06d}"``), the validated rules
    (:func:`load_rules`), the game key (put into every outcome) and ``n`` of the next round id
    (``ValueError`` below 1)."""

    def __call__(self, table_id: str, rules: Any, /, *, game: str, next_round: int) -> Engine: ...


def _entry(game: str, source: str) -> catalog.GameEntry:
    """The catalog's entry for ``game``, else an installed package's
    (:mod:`tablectl.controller.plugins`).

    Raises:
        ConfigError: no such game (the message lists the known ones).
    """
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
    """The validated rules of ``game``: its catalog preset (or the family preset ``[rules]
    variant`` names) with ``rules`` on top. A card game's are returned as the game itself (a
    :class:`~tablectl.controller.games.cards.deal.BaseGame` on its rules model); the others' as
    their rules model.

    Raises:
        ConfigError: an unknown game or preset (naming where it came from), rules that cannot be
            loaded, ``[rules]`` the model rejects (key and file named), or ``[rules]`` that
            contradict a fact of the game's rule book
            (:mod:`tablectl.controller.games.rule_book`: key, file and rule named).
    """
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
    """Build the engine for ``game`` with its ``[rules]`` validated strictly.

    Args:
        table_id: the ``[table] id``; round ids are ``f"{table_id}-{n:06d}"``.
        game: the ``[table] game`` key.
        rules: the raw ``[rules]`` mapping, validated by the game's own model.
        source: the config file, named in error messages.
        next_round: ``n`` of the next round id (the runner takes it from the journal).

    Raises:
        ConfigError: unknown game (the message lists the known ones), an engine that cannot be
            loaded, or ``[rules]`` that the game rejects.
    """
    found = ENGINES.get(game)
    module_name, class_name = found or catalog.ENGINE_FAMILIES[_entry(game, source).family]
    try:
        cls: EngineClass = _import(module_name, class_name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{source}: engine for game {game!r} cannot be loaded: {exc}") from None
    return cls(table_id, load_rules(game, rules, source=source), game=game, next_round=next_round)
