"""Simulated table devices that speak the production wire protocols (reusing ``drivers``' codecs).

The models are I/O-free and driven by time passed in; :mod:`tablectl.simulators.serve` puts one on a
pty or a TCP port, and :mod:`tablectl.simulators.cli.ss2` is ``tablectl simulate``. Every model
scripts its faults (``KIND@N[=VALUE]``) through the one parser of :mod:`tablectl.simulators.faults`,
and :mod:`tablectl.simulators.scenario` reads scenario files (``config/scenarios/*.toml``).
"""

from __future__ import annotations

from tablectl.simulators.ss2 import FaultSpec, SimSS2

__all__ = ["FaultSpec", "SimSS2"]
