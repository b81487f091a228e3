"""Shared strategies and settings of the fuzz suite (bounded: the directory runs in < 60 s).

``deadline=None`` because the first example of a test pays for imports and pydantic schema
builds, which is not what a deadline should catch. Failures found once are kept in
``.hypothesis/`` and replayed first next time.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

__all__ = ["fuzz", "json_values", "split_points", "toml_values"]


def fuzz(examples: int) -> settings:
    """``@settings`` for one fuzz test with ``examples`` examples."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()  # NaN and ±inf included: json.loads accepts them, canonical JSON does not
    | st.text(max_size=20)
    | st.sampled_from(["\ud800", "", " ", "KH", "00", "void", "supervisor", "T1", "wheel"])
)

json_values: st.SearchStrategy[Any] = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
"""Anything ``json.loads`` could produce (and a little more: lone surrogates, huge ints)."""

toml_values: st.SearchStrategy[Any] = st.recursive(
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats()
    | st.text(max_size=20)
    | st.datetimes()
    | st.dates()
    | st.times(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
"""What ``tomllib`` can produce."""


@st.composite
def split_points(draw: Any, data: bytes) -> list[bytes]:
    """``data`` cut into chunks at arbitrary points (how serial reads arrive)."""
    cuts = sorted(draw(st.sets(st.integers(0, len(data)), max_size=8)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]
