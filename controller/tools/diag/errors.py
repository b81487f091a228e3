"""Diagnostics errors (``DiagError`` below ``ControllerError``); ``tablectl diag`` turns each into
one line on stderr and a non-zero exit."""

from __future__ import annotations

from tablectl.controller.core.errors import ControllerError


class DiagError(ControllerError):
    """A diagnostic could not run or could not finish."""


class PortHeldError(DiagError):
    """The port is locked by another process: the service opens serial ports exclusively."""

    def __init__(self, port: str) -> None:
        super().__init__(
            f"the table service is holding {port}; stop it or use `diag stats` on the journal"
        )
        self.port = port


class UnsupportedError(DiagError):
    """The driver registered for a device offers no such diagnostic."""
