"""Shared fixtures. Brokers are always our own, on a free port: never the system's 1883."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.mosquitto import MosquittoProcess, find_mosquitto


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
