"""Connecting to the archive's PostgreSQL, and the archive's errors: every archive command says in
one line what is wrong (never a libpq traceback, never a password). psycopg (the ``archive`` extra)
is imported lazily, so the rest of tablectl runs without it."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import unquote

import structlog

from tablectl.controller.core.errors import ConfigError, ControllerError
from tablectl.drivers.connection import Backoff

if TYPE_CHECKING:
    import psycopg

log = structlog.get_logger("tablectl.archive")

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
    """``dsn`` if libpq can read it; else :class:`ArchiveConfigError` naming what is wrong, never
    the password (libpq quotes a URL it cannot read whole)."""
    psycopg_module()
    from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415 - optional extra

    text = dsn.strip()
    if not text:
        raise ArchiveConfigError("--dsn is empty (e.g. postgresql://archive@db-host/archive)")
    url = _URL.match(text)
    if url is not None and url[1].lower() not in ("postgresql", "postgres"):
        raise ArchiveConfigError(
            f"--dsn {describe_dsn(text)}: scheme must be postgresql:// (or key=value pairs)"
        )
    try:
        conninfo_to_dict(text)
    except Exception as exc:  # psycopg.ProgrammingError: libpq's own words
        detail = scrub(one_line(exc), text)
        raise ArchiveConfigError(f"--dsn {describe_dsn(text)}: {detail}") from None
    return text


def describe_dsn(dsn: str) -> str:
    """The DSN without its password, for messages and logs: ``host:port/dbname`` when libpq can
    read it, else its start with every password replaced by ``***`` (:func:`redact_dsn`)."""
    try:
        from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415 - optional extra

        parts = conninfo_to_dict(dsn)
    except Exception:  # not readable: show what it looks like, never a password
        return repr(redact_dsn(dsn.strip())[:60])
    host = parts.get("host") or "localhost"
    port = parts.get("port") or "5432"
    name = parts.get("dbname") or parts.get("user") or ""
    return f"{host}:{port}/{name}"


# -- passwords never shown ----------------------------------------------------------------------

_URL: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_PRIVATE_NAME: Final = r"\w*(?:pass|pwd|secret|key)\w*"
"""Parameter names whose value is (or may be) secret: ``password``, ``sslpassword``,
``oauth_client_secret``, and what a person may write by mistake (``PGPASSWORD=…``)."""
_QUERY_SECRET: Final = re.compile(rf"(?i)([?&]{_PRIVATE_NAME}=)([^&#]*)")
_QUOTED: Final = re.compile(r'"[^"]*"')
_HIDDEN: Final = "***"


@functools.cache
def _kv_secret() -> re.Pattern[str]:
    """A secret ``key=value`` parameter and its value: quoted, or every word up to the next
    libpq keyword (an unquoted password with a space still counts as the password)."""
    try:
        from psycopg import pq  # noqa: PLC0415 - optional extra

        names = sorted(o.keyword.decode() for o in pq.Conninfo.get_defaults())
    except Exception:  # pragma: no cover - without libpq a DSN is not read at all
        names = ["host", "port", "dbname", "user"]
    keyword = "|".join(map(re.escape, names))
    return re.compile(
        rf"(?i)(\b{_PRIVATE_NAME}\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*(?:\s+(?!(?:{keyword})\s*=)\S+)*)"
    )


def _redacted(dsn: str) -> tuple[str, list[str]]:
    """``dsn`` with its passwords replaced, and the secrets it held (for :func:`scrub`)."""
    secrets: list[str] = []

    def hide(found: re.Match[str]) -> str:
        secrets.append(found[2])
        return found[1] + _HIDDEN

    url = _URL.match(dsn)
    if url is None:
        return _kv_secret().sub(hide, dsn), secrets
    head, rest = dsn[: url.end()], dsn[url.end() :]
    user, at, after = rest.rpartition("@")
    if at:  # user[:password]@…: everything before the last @ may be the password
        name, colon, password = user.partition(":")
        if colon:
            secrets.append(password)
            user = name + colon + _HIDDEN
        rest = user + at + after
    return head + _QUERY_SECRET.sub(hide, rest), secrets


def redact_dsn(dsn: str) -> str:
    """``dsn`` with every password replaced by ``***``: a URL's ``user:PASSWORD@``, its
    ``?password=`` (and ``sslpassword``, …), a ``key=value`` string's ``password=`` even
    unquoted with spaces, and ``PGPASSWORD=``-like parameters written by mistake."""
    return _redacted(dsn)[0]


def scrub(text: str, dsn: str) -> str:
    """``text`` (libpq's words about ``dsn``) without any of ``dsn``'s passwords: libpq quotes the
    whole URL, a parameter's value, or the word after an unquoted password's space."""
    redacted, secrets = _redacted(dsn.strip())
    if dsn.strip():
        text = text.replace(dsn.strip(), redacted)
    words = {w for s in secrets for v in (s, unquote(s), s.strip("'")) for w in (v, *v.split())}
    words.discard("")
    if not words:
        return text
    text = _QUOTED.sub(lambda q: '"***"' if any(w in q[0] for w in words) else q[0], text)
    for word in sorted(words, key=len, reverse=True):
        if len(word) >= 4:
            text = text.replace(word, _HIDDEN)
    return text


def one_line(exc: BaseException) -> str:
    """The first line of an error's message (libpq's run over several), or its type's name."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def connect(dsn: str, *, autocommit: bool = False) -> psycopg.Connection[tuple[object, ...]]:
    """A (synchronous) connection to the archive."""
    check_dsn(dsn)
    import psycopg  # noqa: PLC0415 - optional extra

    try:
        return psycopg.connect(dsn, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as exc:
        raise ArchiveUnavailableError(
            f"PostgreSQL {describe_dsn(dsn)}: {scrub(one_line(exc), dsn)}"
        ) from None


async def connect_async(
    dsn: str, *, autocommit: bool = False
) -> psycopg.AsyncConnection[tuple[object, ...]]:
    """An asynchronous connection to the archive (the archiver's)."""
    check_dsn(dsn)
    import psycopg  # noqa: PLC0415 - optional extra

    try:
        return await psycopg.AsyncConnection.connect(
            dsn, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT
        )
    except psycopg.Error as exc:
        raise ArchiveUnavailableError(
            f"PostgreSQL {describe_dsn(dsn)}: {scrub(one_line(exc), dsn)}"
        ) from None


def lost_errors() -> tuple[type[Exception], ...]:
    """What psycopg raises when the connection, not the statement, failed."""
    try:
        import psycopg  # noqa: PLC0415 - optional extra
    except ImportError:  # pragma: no cover - the CLI says how to install it first
        return ()
    return (psycopg.OperationalError, psycopg.InterfaceError)


class Connections:
    """The archiver's named connections, each reconnected with backoff (up to 10 s apart) for as
    long as the server is away; ``on_change`` hears of each attempt, loss and reconnection."""

    MAX_DELAY: Final = 10.0

    def __init__(self, dsn: str, on_change: Callable[[bool, str], None]) -> None:
        self._dsn = dsn
        self._on_change = on_change
        self._conns: dict[str, psycopg.AsyncConnection[tuple[Any, ...]]] = {}

    async def get(
        self, which: str, *, at_start: bool = False
    ) -> psycopg.AsyncConnection[tuple[Any, ...]]:
        """The named connection, (re)connected while the server is away (``at_start``: it must be
        there)."""
        conn = self._conns.get(which)
        if conn is not None and not conn.closed:
            return conn
        backoff = Backoff(0.2, self.MAX_DELAY)
        while True:
            try:
                conn = await connect_async(self._dsn)
            except ArchiveUnavailableError as exc:
                if at_start:
                    raise
                self._on_change(False, str(exc))
                await asyncio.sleep(backoff.next())
                continue
            self._conns[which] = conn
            self._on_change(True, "connected")
            return conn

    async def lost(self, which: str, exc: BaseException) -> None:
        """Drop the named connection after ``exc`` (the next :meth:`get` reconnects)."""
        log.warning("archive_db_lost", connection=which, error=one_line(exc))
        self._on_change(False, one_line(exc))
        conn = self._conns.pop(which, None)
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
        await asyncio.sleep(0.2)

    async def close(self) -> None:
        """Close every connection (at the end)."""
        for conn in self._conns.values():
            with contextlib.suppress(Exception):
                await conn.close()
        self._conns.clear()
