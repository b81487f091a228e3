"""Every journal connection bounds what it keeps in memory (issue 16: RSS flat over months).

SQLite's page cache fills as a journal grows and is kept while the connection is open; its
default (2,000 KiB per connection) was a table's whole RSS growth in the soak. Checked by asking
each kind of connection for its settings, not by measuring memory.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from tablectl.controller.journal.db import CACHE_KIB, connect_read_only
from tablectl.controller.journal.live import LiveFile
from tablectl.controller.journal.records import chain_record

TABLE = "RL-01"


def _settings(conn: sqlite3.Connection) -> tuple[int, int]:
    cache = conn.execute("PRAGMA cache_size").fetchone()[0]
    mmap = conn.execute("PRAGMA mmap_size").fetchone()[0]
    return int(cache), int(mmap)


def test_the_live_file_and_read_only_connections_have_a_bounded_cache_and_no_map(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite"
    live = LiveFile(path, TABLE, (), None)
    try:
        assert _settings(live.conn) == (-CACHE_KIB, 0)
        record = {"type": "round_open", "ts": "2026-12-01T10:00:00.000000Z", "table": TABLE}
        live.insert([chain_record(record, 1, live.last_hash)], "a record")
        reader = connect_read_only(path)  # with a -wal next to it: mode=ro
        try:
            assert _settings(reader) == (-CACHE_KIB, 0)
        finally:
            reader.close()
    finally:
        live.close(None, datetime.now(UTC))
    reader = connect_read_only(path)  # closed and checkpointed: immutable=1
    try:
        assert _settings(reader) == (-CACHE_KIB, 0)
        assert reader.execute("SELECT count(*) FROM records").fetchone()[0] == 1
    finally:
        reader.close()
