"""A real journal whose appends a test can make fail the way a full disk does.

Why not a real full disk here: a real disk cannot be made to refuse one chosen transaction; the
end-to-end case on a real full tmpfs is tests/integration/test_journal_outage.py
(:mod:`tests.support.disk`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tablectl.controller.core.errors import JournalWriteError
from tablectl.controller.journal import Committed, Journal

__all__ = ["GatedJournal"]


class GatedJournal(Journal):
    """A real journal whose appends fail like a full disk while :attr:`full` is set."""

    full = False

    def commit(
        self, records: Sequence[Mapping[str, Any]], *, after_seq: int | None = None
    ) -> Committed:
        if self.full:
            raise JournalWriteError(f"{self.path}: database or disk is full")
        return super().commit(records, after_seq=after_seq)
