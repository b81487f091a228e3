"""Simulated table devices that speak the production wire protocols (reusing ``drivers``' codecs).

Models, not replayed captures, because the host talks back. They are I/O-free and driven by time
passed in, so the same model runs in tests with any clock, behind a pty or TCP port
(:mod:`tablectl.simulators.serve`) and in the demo, with the same bytes for the same seed, script
and command timing. Every byte comes from the production encoder and every host command goes
through the production decoder, so a simulator cannot drift from its codec (STYLE practice 8).
Faults are scripted as ``KIND@N[=VALUE]`` (:mod:`tablectl.simulators.faults`); scenario files are
read by :mod:`tablectl.simulators.scenario`.
"""

from __future__ import annotations

from tablectl.simulators.ss2 import FaultSpec, SimSS2

__all__ = ["FaultSpec", "SimSS2"]
