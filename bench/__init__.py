"""tablectl's benchmark harness: ``python -m bench [--quick] [--json PATH]`` (see bench/README.md).

One run measures this machine's floors (a pty line, a Mosquitto QoS 1 hop, an fsync'd SQLite
insert), then the whole path with real parts — an SS2 status line written to a pty → the
controller → the journal → a real Mosquitto → a subscriber — and reports every latency also as a
ratio to the floors of the same run, so figures from different machines and commits compare.

Not part of the installed distribution and not imported by the service.
"""

from __future__ import annotations
