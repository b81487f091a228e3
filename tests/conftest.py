"""Shared fixtures. Brokers are always our own, on a free port: never the system's 1883."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.mosquitto import MosquittoProcess, find_mosquitto
from tests.support.postgres import PostgresServer, private_postgres


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[MosquittoProcess]:
    """A running Mosquitto on a free loopback port; ``stop()``/``start()`` keep the port.

    Skips the test when no mosquitto binary is installed.
    """
    binary = find_mosquitto()
    if binary is None:
        pytest.skip("mosquitto binary not found (apt-get install mosquitto)")
    broker = MosquittoProcess(tmp_path / "mosquitto", binary=binary)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One private PostgreSQL per test session (per xdist worker): ``initdb`` on a free port.

    Skips when the server binaries or psycopg are missing. Tests that take the server down start
    a :class:`PostgresServer` of their own instead.
    """
    with private_postgres() as server:
        yield server


@pytest.fixture
def postgres_dsn(postgres_server: PostgresServer) -> Iterator[str]:
    """The DSN of a fresh, empty database on the session's PostgreSQL (dropped afterwards)."""
    dsn = postgres_server.new_database()
    try:
        yield dsn
    finally:
        postgres_server.drop_database(dsn)
