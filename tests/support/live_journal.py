"""Reading a journal file beside a running controller the only safe way: read-only.

Why never ``sqlite3.connect(path)`` here: read-write connections racing a rotation write into
the files they race. Reproduced: three read-write readers polling a journal that rotated every
five records emptied a rotated file's schema within a minute (the controller then found
"journal.000301-000340.sqlite: cannot read journal: no such table: records" and stopped, as it
did in CI in test_clock_step); read-only readers never did in two minutes. A read-only connection
can write nothing, but across a rotation it may fail ("attempt to write a readonly database", a
hot journal it may not roll back) or read a mix of the old file and the new one's WAL: it is
tried again here, and a caller that reads several files compares the rotated files before and
after (``tests.fault.harness.read_journal``).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

__all__ = ["read_rows"]

_TRIES = 50
_PAUSE_S = 0.02


def read_rows(path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` on the journal file ``path``, opened read-only; ``[]`` when the file
    does not exist (yet, or any more: rotated away) or its schema is not written yet."""
    for _ in range(_TRIES - 1):
        try:
            return _read_once(path, sql, params)
        except sqlite3.OperationalError:
            time.sleep(_PAUSE_S)  # a rotation under the reader: again
    return _read_once(path, sql, params)


def _read_once(path: Path, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    if not path.exists():
        return []
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
    try:
        return list(conn.execute(sql, params).fetchall())
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []  # the controller is creating it
        raise
    finally:
        conn.close()
