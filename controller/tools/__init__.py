"""The command line: ``tablectl`` and its tools (watch, replay, export, cmd, diag)."""
