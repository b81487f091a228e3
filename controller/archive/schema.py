"""The archive's tables (the contract others query, docs/fleet.md "Schema") and their migrations.

An archive outlives many tablectl versions, so each version ships the SQL that takes an older
archive to its shape, one transaction each. ``records`` is partitioned by month with no DEFAULT
partition, so every month can be detached.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

import structlog

if TYPE_CHECKING:
    import psycopg

log = structlog.get_logger("tablectl.archive")


@dataclass(frozen=True)
class Migration:
    """One step of the schema: ``version`` (1, 2, …) and its SQL statements, run in order."""

    version: int
    what: str
    statements: tuple[str, ...]


MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        1,
        "records partitioned by month; per-table verification state, gaps, conflicts",
        (
            """
            CREATE TABLE records (
                table_id    text        NOT NULL,
                seq         bigint      NOT NULL,
                ts          timestamptz NOT NULL,
                type        text        NOT NULL,
                round       text,
                hash        text        NOT NULL,
                prev_hash   text        NOT NULL,
                record      jsonb       NOT NULL,
                raw         bytea       NOT NULL,
                archived_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (table_id, seq, ts)
            ) PARTITION BY RANGE (ts)
            """,
            # A round's records (export --round) and a table's records of one type over months
            # (diag stats: outcomes) without reading every row of the table.
            "CREATE INDEX records_round ON records (table_id, round) WHERE round IS NOT NULL",
            "CREATE INDEX records_type ON records (table_id, type, ts)",
            """
            CREATE TABLE archive_tables (
                table_id        text        PRIMARY KEY,
                verified_seq    bigint      NOT NULL DEFAULT 0,
                verified_hash   text,
                last_seq        bigint      NOT NULL DEFAULT 0,
                chain_broken_at bigint,
                broken_reason   text,
                updated_at      timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE archive_gaps (
                table_id     text        NOT NULL,
                from_seq     bigint      NOT NULL,
                to_seq       bigint      NOT NULL,
                since        timestamptz NOT NULL DEFAULT now(),
                requested_at timestamptz,
                requests     integer     NOT NULL DEFAULT 0,
                PRIMARY KEY (table_id, from_seq)
            )
            """,
            """
            CREATE TABLE archive_conflicts (
                table_id    text        NOT NULL,
                seq         bigint      NOT NULL,
                ts          timestamptz NOT NULL,
                hash        text        NOT NULL,
                raw         bytea       NOT NULL,
                received_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (table_id, seq, hash)
            )
            """,
        ),
    ),
    Migration(
        2,
        "archive_detached: the months detached to files, with their manifests",
        (
            # IF NOT EXISTS: archive-admin detach of an earlier version created it itself.
            """
            CREATE TABLE IF NOT EXISTS archive_detached (
                month       text        PRIMARY KEY,
                manifest    jsonb       NOT NULL,
                directory   text        NOT NULL,
                detached_at timestamptz NOT NULL DEFAULT now()
            )
            """,
        ),
    ),
    Migration(
        3,
        "archive_quarantine: messages the archive refused; archive_tables.verified_ts",
        (
            # One row per distinct message (its topic and the sha256 of its bytes): a message
            # sent again counts up ``times`` instead of adding a row.
            """
            CREATE TABLE archive_quarantine (
                topic            text        NOT NULL,
                sha256           text        NOT NULL,
                table_id         text,
                seq              bigint,
                ts               timestamptz,
                reason           text        NOT NULL,
                detail           text        NOT NULL,
                size             bigint      NOT NULL,
                payload          bytea       NOT NULL,
                received_at      timestamptz NOT NULL DEFAULT now(),
                last_received_at timestamptz NOT NULL DEFAULT now(),
                times            bigint      NOT NULL DEFAULT 1,
                PRIMARY KEY (topic, sha256)
            )
            """,
            "CREATE INDEX archive_quarantine_table ON archive_quarantine (table_id, seq)",
            "CREATE INDEX archive_quarantine_received ON archive_quarantine (received_at)",
            # The verified head's own ts: what a record after it may be dated (admission).
            "ALTER TABLE archive_tables ADD COLUMN verified_ts timestamptz",
        ),
    ),
)
"""Every migration, oldest first; a new one is appended, never edited once released."""

SCHEMA_VERSION: Final = MIGRATIONS[-1].version
"""The schema version this tablectl writes and reads."""

_LOCK_KEY: Final = 0x7461626C  # "tabl": one advisory lock serialises concurrent migrators

_VERSIONS_TABLE: Final = """
    CREATE TABLE IF NOT EXISTS archive_migrations (
        version    integer     PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
    )
"""


@dataclass(frozen=True, order=True)
class Month:
    """A calendar month (UTC): the unit of ``records``' partitions."""

    year: int
    month: int

    @property
    def start(self) -> datetime:
        return datetime(self.year, self.month, 1, tzinfo=UTC)

    def next(self) -> Month:
        return Month(self.year + self.month // 12, self.month % 12 + 1)


def month_of(moment: datetime) -> Month:
    """The UTC month ``moment`` falls in."""
    utc = moment.astimezone(UTC)
    return Month(utc.year, utc.month)


def partition_name(month: Month) -> str:
    """``records_2026_11``: the partition holding that month's records."""
    return f"records_{month.year:04d}_{month.month:02d}"


def partition_sql(month: Month) -> str:
    """``CREATE TABLE IF NOT EXISTS`` of ``month``'s partition (bounds in UTC); a racing archiver's
    duplicate error means it exists."""
    start = month.start.isoformat()
    end = month.next().start.isoformat()
    return (
        f"CREATE TABLE IF NOT EXISTS {partition_name(month)} PARTITION OF records "
        f"FOR VALUES FROM ('{start}') TO ('{end}')"
    )


def applied_versions(conn: psycopg.Connection[tuple[object, ...]]) -> list[int]:
    """The versions applied to the archive (empty on a fresh database)."""
    with conn.transaction():
        conn.execute(_VERSIONS_TABLE)
        rows = conn.execute("SELECT version FROM archive_migrations ORDER BY version").fetchall()
    return [int(str(row[0])) for row in rows]


def migrate(
    conn: psycopg.Connection[tuple[object, ...]],
    *,
    now: datetime | None = None,
    migrations: Sequence[Migration] = MIGRATIONS,
) -> list[int]:
    """Apply the migrations the archive lacks, each in one transaction; return their versions.

    An advisory lock serialises concurrent archivers, so each migration runs once. ``conn`` must not
    be inside a transaction.
    """
    done: list[int] = []
    for migration in migrations:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            conn.execute(_VERSIONS_TABLE)
            row = conn.execute(
                "SELECT 1 FROM archive_migrations WHERE version = %s", (migration.version,)
            ).fetchone()
            if row is not None:
                continue
            for statement in migration.statements:
                conn.execute(statement.encode("utf-8"))
            conn.execute(
                "INSERT INTO archive_migrations (version) VALUES (%s)", (migration.version,)
            )
            done.append(migration.version)
            log.info("archive_migrated", version=migration.version, what=migration.what)
    current = month_of(now or datetime.now(UTC))
    for month in (current, current.next()):
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            conn.execute(partition_sql(month).encode("utf-8"))
    return done
