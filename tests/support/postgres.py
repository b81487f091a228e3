"""A real PostgreSQL server on a free port, for tests of the floor's archive (docs/fleet.md).

Why a private server and not the machine's: every test session owns its cluster (``initdb`` in
a temporary directory, TCP on a free loopback port, no Unix socket), so tests neither need nor
touch a configured database, run side by side under xdist, and may stop, restart or kill the
server the way a production outage looks. Debian's ``postgresql`` package provides the binaries
(CI installs it); without them the tests that need a server skip with the reason.

``initdb`` and ``postgres`` refuse to run as root: as root, both run as the ``postgres`` user
(``runuser -u postgres --``) in a directory chowned to it; otherwise they run directly.

The API kept deliberately small (the fixtures are in ``tests/conftest.py``):

* ``postgres_dsn`` — a DSN of a fresh, empty database (``CREATE DATABASE … TEMPLATE template0``)
  on the worker's session server;
* :class:`PostgresServer` — a server of a test's own (``start``, ``stop``, ``restart``,
  ``kill``, ``new_database``), for tests that take the server down.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.mosquitto import free_port
from tests.support.processes import ServerProcess

__all__ = ["PostgresServer", "find_postgres_bindir", "postgres_unavailable"]

_SERVICE_USER = "postgres"
_SUPERUSER = "postgres"


def find_postgres_bindir() -> Path | None:
    """The directory holding ``initdb``, ``pg_ctl`` and ``postgres``, or ``None``.

    ``pg_config --bindir`` first (it names the server's directory when the server package is
    installed), then Debian's ``/usr/lib/postgresql/*/bin`` (the newest version).
    """
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True
            ).stdout.strip()
            if out and (Path(out) / "initdb").is_file():
                return Path(out)
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    return Path(found[-1]).parent if found else None


def postgres_unavailable() -> str | None:
    """Why no server can be started here (a skip reason), or ``None`` when one can."""
    if find_postgres_bindir() is None:
        return "PostgreSQL server binaries not found (apt-get install postgresql)"
    try:
        import psycopg  # noqa: F401, PLC0415 - only checking the archive extra is installed
    except ImportError:
        return "psycopg not installed (pip install 'tablectl[archive]')"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(_SERVICE_USER)
        except KeyError:
            return "running as root without a 'postgres' user to run the server as"
    return None


class PostgresServer(ServerProcess):
    """One PostgreSQL cluster in a temporary directory, on a fixed loopback port.

    ``fsync = off``: a test server need not survive a power cut, and a test must not wait for the
    disk; every commit is still synchronous (``synchronous_commit`` stays on), so a commit the
    archiver saw acknowledged survives a kill -9 of the server (the OS keeps the written pages).

    Args:
        port: fixed port, or ``None`` to pick a free one once (kept across restarts).
    """

    def __init__(self, port: int | None = None) -> None:
        bindir = find_postgres_bindir()
        if bindir is None:
            raise FileNotFoundError("PostgreSQL server binaries not found")
        self.bindir = bindir
        self.host = "127.0.0.1"
        self.port = port or free_port(self.host)
        # Not under pytest's tmp_path: its parents are root's (mode 0700), which the postgres
        # user could not traverse.
        self.workdir = Path(tempfile.mkdtemp(prefix="tablectl-pg-"))
        self.datadir = self.workdir / "data"
        self.log_path = self.workdir / "postgres.log"
        self._as_root = os.geteuid() == 0
        self._initialised = False
        self._names = itertools.count(1)
        if self._as_root:
            user = pwd.getpwnam(_SERVICE_USER)
            os.chown(self.workdir, user.pw_uid, user.pw_gid)

    # -- the URL -----------------------------------------------------------------------------

    def dsn(self, dbname: str = "postgres") -> str:
        """``postgresql://postgres@127.0.0.1:PORT/dbname`` (trust authentication, loopback)."""
        return f"postgresql://{_SUPERUSER}@{self.host}:{self.port}/{dbname}"

    # -- lifecycle ---------------------------------------------------------------------------

    def _command(self, args: list[str]) -> list[str]:
        binary = str(self.bindir / args[0])
        return (
            ["runuser", "-u", _SERVICE_USER, "--", binary, *args[1:]]
            if self._as_root
            else [
                binary,
                *args[1:],
            ]
        )

    def _run(self, args: list[str], timeout: float = 60.0) -> None:
        done = subprocess.run(
            self._command(args),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd=self.workdir,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"{args[0]} failed ({done.returncode}): {done.stderr.strip()[-1500:]}\n"
                f"{self._log_tail()}"
            )

    def _init(self) -> None:
        self._run(
            [
                "initdb",
                "-D",
                str(self.datadir),
                "-U",
                _SUPERUSER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions",
            ]
        )
        settings = {
            "listen_addresses": f"'{self.host}'",
            "port": str(self.port),
            "unix_socket_directories": "''",
            "fsync": "off",
            "full_page_writes": "off",
            "shared_buffers": "'32MB'",
            "max_connections": "50",
            "log_min_messages": "warning",
        }
        with (self.datadir / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.write("\n# tests/support/postgres.py\n")
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())
        self._initialised = True

    @property
    def running(self) -> bool:
        """Whether the server accepts TCP connections on its port."""
        with contextlib.suppress(OSError):
            socket.create_connection((self.host, self.port), timeout=0.2).close()
            return True
        return False

    def start(self, timeout: float = 30.0) -> None:
        """``initdb`` once, then ``pg_ctl start``; returns once it accepts connections."""
        if not self._initialised:
            self._init()
        self._run(
            [
                "pg_ctl",
                "start",
                "-D",
                str(self.datadir),
                "-l",
                str(self.log_path),
                "-w",
                "-t",
                str(int(timeout)),
            ],
            timeout=timeout + 10,
        )
        self._wait_ready(timeout)

    def _wait_ready(self, timeout: float) -> None:
        import psycopg  # noqa: PLC0415 - the archive extra, checked by postgres_unavailable

        deadline = time.monotonic() + timeout
        while True:
            try:
                with psycopg.connect(self.dsn(), connect_timeout=2):
                    return
            except psycopg.OperationalError as exc:
                if time.monotonic() >= deadline:
                    raise RuntimeError(f"PostgreSQL not ready: {exc}\n{self._log_tail()}") from None
            time.sleep(0.05)

    def stop(self, mode: str = "fast") -> None:
        """``pg_ctl stop -m fast`` (``immediate``: a crash without checkpoint). Idempotent."""
        if not (self.datadir / "postmaster.pid").exists():
            return
        self._run(["pg_ctl", "stop", "-D", str(self.datadir), "-m", mode, "-w"], timeout=60)

    def restart(self, mode: str = "fast") -> None:
        """Stop (``mode``) and start again on the same port; connections are cut."""
        self.stop(mode)
        self.start()

    def kill(self) -> None:
        """SIGKILL the postmaster (its backends exit when they notice): the harshest outage.

        The next :meth:`start` runs crash recovery from the WAL.
        """
        pid_file = self.datadir / "postmaster.pid"
        with contextlib.suppress(OSError, ValueError, IndexError):
            pid = int(pid_file.read_text(encoding="utf-8").splitlines()[0])
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.running:
                time.sleep(0.05)

    def new_database(self) -> str:
        """A fresh, empty database (``TEMPLATE template0``): its DSN."""
        import psycopg  # noqa: PLC0415 - the archive extra, checked by postgres_unavailable

        name = f"t{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return self.dsn(name)

    def drop_database(self, dsn: str) -> None:
        """Drop a database made by :meth:`new_database` (best effort: a test may hold it open)."""
        import psycopg  # noqa: PLC0415 - the archive extra, checked by postgres_unavailable

        name = dsn.rsplit("/", 1)[-1]
        with (
            contextlib.suppress(psycopg.Error),
            psycopg.connect(self.dsn(), autocommit=True) as conn,
        ):
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def close(self) -> None:
        """Stop the server and remove its directory."""
        with contextlib.suppress(RuntimeError, subprocess.SubprocessError):
            self.stop("immediate")
        shutil.rmtree(self.workdir, ignore_errors=True)


@contextlib.contextmanager
def private_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL of the caller's own, started and closed around the block; the test is skipped
    (with the reason) where the server binaries or psycopg are missing. The fixtures take it."""
    reason = postgres_unavailable()
    if reason is not None:
        pytest.skip(reason)
    with PostgresServer() as server:
        yield server
