"""What a game rule says about an event it cannot accept: a :class:`Finding`. The engine turns it
into a verdict or a void, since it knows the round and the time, the rule does not."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Severity: TypeAlias = Literal["verdict", "hold", "carry"]
"""What the engine does with a finding inside a round: a ``verdict`` (the event is refused, the
round goes on), ``hold`` (the round waits for a supervisor: seed-000 GEN-11) or ``carry`` (a
card not called for becomes the first of the next round: BAC-I2, BJ-I1)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule broken by an event: a stable ``code`` (docs/verdicts.md), the rule-book ``rule``,
    a ``message`` for the record (never naming a hidden card), ``data`` for the verdict or the
    void's ``result`` (JSON-ready), and its ``severity``."""

    code: str
    rule: str
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)
    severity: Severity = "verdict"
