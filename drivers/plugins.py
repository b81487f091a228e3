"""Entry points of installed packages, scanned one way for every plugin registry.

The drivers' registry (:mod:`tablectl.drivers.registry`, group ``tablectl.drivers``) and the
games' (:mod:`tablectl.controller.plugins`, group ``tablectl.games``) both list what installed
packages register, with the same rules. Only package metadata is read here, nothing is imported,
so the pure game layers may ask which games exist.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from importlib import metadata

__all__ = ["RegistryEntry", "entry_point_entries"]


@dataclass(frozen=True)
class RegistryEntry:
    """One driver or game a registry knows: where it is and who provides it."""

    name: str
    module: str
    cls: str
    source: str
    """``"built-in"``, or the distribution (``name version``) whose entry point registered it."""
    refused: str | None = None
    """Why a plugin's entry is not used (a built-in name, a name two packages claim, a value that
    is not ``module:Class``)."""


def entry_point_entries(group: str, reserved: Collection[str], what: str) -> list[RegistryEntry]:
    """Every entry point of ``group``, refused ones included; nothing is imported.

    A name in ``reserved`` (the built-ins) is refused, and so is one two packages claim (which would
    run is not a guess).
    """
    points = list(metadata.entry_points(group=group))
    entries = []
    for point in points:
        dist = point.dist
        source = f"{dist.name} {dist.version}" if dist is not None else "entry point"
        module, _, cls = point.value.partition(":")
        twins = [p for p in points if p.name == point.name and p is not point]
        refused = None
        if not module or not cls or " " in point.value:
            refused = f"entry point value {point.value!r} is not 'module:Class'"
        elif point.name in reserved:
            refused = f"reuses the built-in {what} name {point.name!r}"
        elif twins:
            others = ", ".join(f"{d.name} {d.version}" for d in (p.dist for p in twins) if d)
            refused = f"{others or 'another package'} registers {point.name!r} too"
        entries.append(RegistryEntry(point.name, module, cls, source, refused))
    return entries
