"""RoundIds survive a pickle (the runner's undo of a failed commit, recovery checkpoints) exactly,
whatever the ids: its compact state joins them with newlines, so ids holding one must still
come back as they were (controller/engines/base.py)."""

from __future__ import annotations

import pickle

from hypothesis import given
from hypothesis import strategies as st

from tablectl.controller.engines.base import RECENT_ROUNDS, RoundIds

ids = st.lists(st.text(max_size=12), max_size=40)


@given(ended=ids, next_round=st.integers(min_value=1, max_value=10**6))
def test_round_ids_come_back_from_a_pickle_exactly(ended: list[str], next_round: int) -> None:
    original = RoundIds("ROU-01", next_round)
    for round_id in ended:
        original.ended(round_id)
    copy = pickle.loads(pickle.dumps(original, protocol=pickle.HIGHEST_PROTOCOL))  # noqa: S301
    # Same recent ids in the same order (the oldest is forgotten first), same next id.
    assert list(copy._recent) == list(original._recent)
    assert copy.take(None) == original.take(None)
    for round_id in ended:
        assert copy.used(round_id, None) == original.used(round_id, None)


def test_a_full_table_pickles_its_recent_ids_as_one_string() -> None:
    """What makes the undo pickle cheap: one string, not 1,024 (a newline-free set of ids)."""
    round_ids = RoundIds("ROU-01", 1)
    for n in range(RECENT_ROUNDS + 10):
        round_ids.ended(f"ROU-01-{n:06d}")
    _, _, recent = round_ids.__getstate__()
    assert isinstance(recent, str)
    assert recent.count("\n") == RECENT_ROUNDS - 1
    assert recent.startswith("ROU-01-000010\n")  # the ten oldest were forgotten


def test_a_checkpoint_written_before_the_compact_state_still_loads() -> None:
    """Checkpoints on disk from before ``__getstate__`` hold the plain attribute dict."""
    old = RoundIds.__new__(RoundIds)
    old.__setstate__({"_table": "ROU-01", "_next": 7, "_recent": {"ROU-01-000003": None}})
    assert old.used("ROU-01-000003", None)
    assert old.take(None) == "ROU-01-000007"
