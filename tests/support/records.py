"""Journal records for tests that feed a consumer directly, without a journal."""

from __future__ import annotations

from typing import Any

from tablectl.controller.journal import GENESIS_HASH, JournalRecord


def journaled(fields: dict[str, Any], seq: int = 1) -> JournalRecord:
    """``fields`` (at least ``type`` and ``ts``) as the journal would hand them out at ``seq``.

    The hashes are placeholders: for consumers that read a record, not for chain checks.
    """
    whole = {"seq": seq, "prev_hash": GENESIS_HASH, "hash": GENESIS_HASH, **fields}
    return JournalRecord(
        seq=seq,
        ts=whole["ts"],
        type=whole["type"],
        prev_hash=GENESIS_HASH,
        hash=GENESIS_HASH,
        fields=whole,
    )
