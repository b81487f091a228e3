"""The journal: the hash-chained, fsync'd SQLite store per table, its outbox, anchors, rotation and
retention. Other layers import from here; the modules and their order: docs/journal.md."""

from tablectl.controller.journal.anchors import (
    ANCHOR,
    DEFAULT_EVERY,
    DEFAULT_SECONDS,
    WITHHELD_AUTH,
    KeyedAnchors,
    head_mac,
    withheld_mac,
)
from tablectl.controller.journal.cli import (
    AUTHORSHIP_UNVERIFIED,
    UNKEYED_NOTE,
    add_verify_arguments,
    check_published_anchor,
    run_verify,
)
from tablectl.controller.journal.db import APPLICATION_ID, connect_read_only
from tablectl.controller.journal.errors import JournalIntegrityError, KeyedEvidenceError
from tablectl.controller.journal.files import (
    Archive,
    archive_path,
    fsync_dir,
    journal_sets,
    list_archives,
    live_of,
    looks_rotated,
)
from tablectl.controller.journal.records import (
    AUTH,
    ENVELOPE,
    GENESIS_HASH,
    SCHEMA,
    JournalRecord,
    canonical_json,
    loads_record,
    read_record,
    record_hash,
)
from tablectl.controller.journal.retention import (
    ChainReport,
    prune,
    read_retired,
    retired_log_path,
    verify_chain,
)
from tablectl.controller.journal.seals import read_seal, seal_path
from tablectl.controller.journal.store import Committed, Journal, StoredRow
from tablectl.controller.journal.verify import (
    FileSummary,
    verify_conn,
    verify_file,
    verify_journal_file,
)

__all__ = [
    "ANCHOR",
    "APPLICATION_ID",
    "AUTH",
    "AUTHORSHIP_UNVERIFIED",
    "DEFAULT_EVERY",
    "DEFAULT_SECONDS",
    "ENVELOPE",
    "GENESIS_HASH",
    "SCHEMA",
    "UNKEYED_NOTE",
    "WITHHELD_AUTH",
    "Archive",
    "ChainReport",
    "Committed",
    "FileSummary",
    "Journal",
    "JournalIntegrityError",
    "JournalRecord",
    "KeyedAnchors",
    "KeyedEvidenceError",
    "StoredRow",
    "add_verify_arguments",
    "archive_path",
    "canonical_json",
    "check_published_anchor",
    "connect_read_only",
    "fsync_dir",
    "head_mac",
    "journal_sets",
    "list_archives",
    "live_of",
    "loads_record",
    "looks_rotated",
    "parse_ts",
    "prune",
    "read_record",
    "read_retired",
    "read_seal",
    "record_hash",
    "retired_log_path",
    "run_verify",
    "seal_path",
    "verify_chain",
    "verify_conn",
    "verify_file",
    "verify_journal_file",
    "withheld_mac",
]
