"""Technician diagnostics: ``tablectl diag ports | probe | sniff | selftest | stats``.

Nothing in this package writes to the journal or acts on a device on its own: it reads, and sends
only what the technician asked for. Layout: docs/architecture.md.
"""

from __future__ import annotations

__all__: list[str] = []
