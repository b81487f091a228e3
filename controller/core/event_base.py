"""What every normalized table event is built on: the shared fields and the strict parsing mode.

A module of its own so that the event vocabulary can live in several modules (``events`` for the
wheels, cards and drums; ``dice_events`` for dice tables and RNG picks) without importing one
another's private names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import pydantic

Direction = Literal["cw", "ccw"]
"""Rotation seen from above the wheel: clockwise or counter-clockwise."""

STRICT = pydantic.ConfigDict(extra="forbid", strict=True, frozen=True)
"""Events from outside are parsed strictly: no unknown keys, no ``"3"`` for ``3``."""


@dataclass(frozen=True, kw_only=True)
class EventBase:
    """Fields every event may carry. ``seq`` is set once the journal has it."""

    __pydantic_config__: ClassVar[pydantic.ConfigDict] = STRICT

    ts: str | None = None
    device: str | None = None
    manual: bool = False
    seq: int | None = None
