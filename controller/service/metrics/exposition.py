"""The Prometheus text exposition format, and the two instruments it is fed from.

A labelled counter with a bound on distinct label sets (:data:`MAX_SERIES`) and a cumulative-bucket
histogram; :class:`Exposition` collects the samples of one scrape and renders them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text exposition format."""

MAX_SERIES = 64
"""Distinct label sets per family and table before new ones are counted as ``"other"``."""


@dataclass
class _Family:
    name: str
    kind: str
    help: str
    samples: list[tuple[str, Mapping[str, str], float]] = field(default_factory=list)


class Exposition:
    """Collects samples per family (a family's samples must be contiguous in the output)."""

    def __init__(self) -> None:
        self._families: dict[str, _Family] = {}

    def family(self, name: str, kind: str, help_text: str) -> _Family:
        found = self._families.get(name)
        if found is None:
            found = self._families[name] = _Family(name, kind, help_text)
        return found

    def add(
        self, name: str, kind: str, help_text: str, labels: Mapping[str, str], value: float
    ) -> None:
        self.family(name, kind, help_text).samples.append((name, labels, value))

    def render(self) -> str:
        lines: list[str] = []
        for fam in self._families.values():
            lines.append(f"# HELP {fam.name} {_escape_help(fam.help)}")
            lines.append(f"# TYPE {fam.name} {fam.kind}")
            for name, labels, value in fam.samples:
                lines.append(f"{name}{_labels(labels)} {_number(value)}")
        return "\n".join(lines) + "\n"


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _escape_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape_value(v)}"' for k, v in labels.items()) + "}"


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


# --- instruments ---------------------------------------------------------------------------------


class Counts:
    """A labelled counter with a bound on distinct label sets (see :data:`MAX_SERIES`)."""

    def __init__(self, arity: int) -> None:
        self._arity = arity
        self.values: dict[tuple[str, ...], float] = {}

    def inc(self, key: tuple[str, ...], n: float = 1) -> None:
        if key not in self.values and len(self.values) >= MAX_SERIES:
            key = ("other",) * self._arity
        self.values[key] = self.values.get(key, 0) + n


class Histogram:
    """Cumulative-bucket histogram (Prometheus semantics: ``le`` buckets, ``_sum``, ``_count``)."""

    def __init__(self, buckets: Sequence[float]) -> None:
        self.bounds = tuple(buckets)
        self.counts = [0] * len(self.bounds)
        self.total = 0
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.total += 1
        self.sum += value
        for index, bound in enumerate(self.bounds):
            if value <= bound:
                self.counts[index] += 1
                break

    def samples(
        self, name: str, labels: Mapping[str, str]
    ) -> Iterable[tuple[str, Mapping[str, str], float]]:
        running = 0
        for bound, count in zip(self.bounds, self.counts, strict=True):
            running += count
            yield f"{name}_bucket", {**labels, "le": _number(bound)}, running
        yield f"{name}_bucket", {**labels, "le": "+Inf"}, self.total
        yield f"{name}_sum", labels, self.sum
        yield f"{name}_count", labels, self.total
