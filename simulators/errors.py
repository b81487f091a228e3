"""Simulator errors: their branch of the one tree rooted at ``TablectlError``."""

from __future__ import annotations

from tablectl.drivers.errors import TablectlError


class SimulatorError(TablectlError, ValueError):
    """A simulator setting or fault spec that cannot be played (``--fault bogus@1``, a count out
    of range). A ``ValueError`` too: the simulators' command lines turn it into a usage error."""
