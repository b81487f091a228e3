"""A real pty pair for serial tests: the test writes the device's side, a driver opens the tty."""

from __future__ import annotations

import contextlib
import os
import tty
from collections.abc import Iterator

import pytest


class Pty:
    """A pty in raw mode: ``path`` is the tty a driver opens, ``send`` writes as the device."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.master)
        self.path = os.ttyname(self.slave)

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)


@pytest.fixture(name="pty")
def pty_fixture() -> Iterator[Pty]:
    """A :class:`Pty`, closed after the test."""
    p = Pty()
    try:
        yield p
    finally:
        p.close()
