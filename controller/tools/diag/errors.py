"""Diagnostics errors: a branch of the one tree (:class:`tablectl.drivers.errors.TablectlError`).

    ControllerError
    └── DiagError                 a diagnostic that cannot run (no such device, no reply, …)
        ├── PortHeldError         another process (normally the table service) holds the port
        └── UnsupportedError      the device's driver has no such diagnostic (yet)

``tablectl diag`` turns each of these into one line on stderr and a non-zero exit.
"""

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
