"""Connecting to the archive's PostgreSQL, and the archive's errors.

Why a module: every archive command (``archive``, ``export --dsn``, ``verify --dsn``, ``diag
stats --dsn``) fails the same way when the DSN is wrong or the server is down, and a person wants
one line saying which (never a libpq traceback):

    ControllerError
    └── ArchiveError                the archive cannot be used
        ├── ArchiveConfigError(ConfigError)  a DSN that is not one (names what is wrong)
        └── ArchiveUnavailableError           the server cannot be reached or refused us

psycopg (the ``archive`` extra) is imported lazily, so the rest of tablectl runs without it and
an archive command without it says how to install it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from tablectl.controller.core.errors import ConfigError, ControllerError

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "ArchiveConfigError",
    "ArchiveError",
    "ArchiveUnavailableError",
    "check_dsn",
    "connect",
    "connect_async",
    "describe_dsn",
    "psycopg_module",
]

CONNECT_TIMEOUT: Final = 10
"""Seconds a connection attempt may take before the server counts as unreachable."""


class ArchiveError(ControllerError):
    """The archive's database cannot be used (one line, naming the server and why)."""


class ArchiveConfigError(ArchiveError, ConfigError):
    """A ``--dsn`` that is not a PostgreSQL connection URL or key=value string."""


class ArchiveUnavailableError(ArchiveError):
    """The archive's server cannot be reached, refused the login, or went away."""


def psycopg_module() -> object:
    """The psycopg module, or an :class:`ArchiveError` saying how to install it."""
    try:
        import psycopg  # noqa: PLC0415 - the archive extra is optional
    except ImportError:
        raise ArchiveError("psycopg is not installed: pip install 'tablectl[archive]'") from None
    return psycopg


def check_dsn(dsn: str) -> str:
    """``dsn`` if libpq can read it; else :class:`ArchiveConfigError` naming what is wrong.

    Accepts ``postgresql://`` / ``postgres://`` URLs and ``key=value`` strings, as libpq does.
    """
    psycopg_module()
    from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415 - optional extra

    text = dsn.strip()
    if not text:
        raise ArchiveConfigError("--dsn is empty (e.g. postgresql://archive@db-host/archive)")
    if "://" in text and urlsplit(text).scheme not in ("postgresql", "postgres"):
        raise ArchiveConfigError(
            f"--dsn {describe_dsn(text)}: scheme must be postgresql:// (or key=value pairs)"
        )
    try:
        conninfo_to_dict(text)
    except Exception as exc:  # psycopg.ProgrammingError: libpq's own words
        raise ArchiveConfigError(f"--dsn {describe_dsn(text)}: {_first_line(exc)}") from None
    return text


def describe_dsn(dsn: str) -> str:
    """The DSN without its password, for messages and logs."""
    try:
        from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415 - optional extra

        parts = conninfo_to_dict(dsn)
    except Exception:  # not readable: show only its start, it may hold a password
        return repr(dsn.rsplit("@", maxsplit=1)[-1][:60])
    host = parts.get("host") or "localhost"
    port = parts.get("port") or "5432"
    name = parts.get("dbname") or parts.get("user") or ""
    return f"{host}:{port}/{name}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def connect(dsn: str, *, autocommit: bool = False) -> psycopg.Connection[tuple[object, ...]]:
    """A (synchronous) connection to the archive.

    Raises:
        ArchiveConfigError: the DSN is not one.
        ArchiveUnavailableError: the server is down, unreachable or refused the login.
    """
    check_dsn(dsn)
    import psycopg  # noqa: PLC0415 - optional extra

    try:
        return psycopg.connect(dsn, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as exc:
        raise ArchiveUnavailableError(
            f"PostgreSQL {describe_dsn(dsn)}: {_first_line(exc)}"
        ) from None


async def connect_async(
    dsn: str, *, autocommit: bool = False
) -> psycopg.AsyncConnection[tuple[object, ...]]:
    """An asynchronous connection to the archive (the archiver's).

    Raises:
        ArchiveConfigError: the DSN is not one.
        ArchiveUnavailableError: the server is down, unreachable or refused the login.
    """
    check_dsn(dsn)
    import psycopg  # noqa: PLC0415 - optional extra

    try:
        return await psycopg.AsyncConnection.connect(
            dsn, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT
        )
    except psycopg.Error as exc:
        raise ArchiveUnavailableError(
            f"PostgreSQL {describe_dsn(dsn)}: {_first_line(exc)}"
        ) from None
