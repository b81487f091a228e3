"""Command lines of the simulators: ``tablectl simulate DEVICE`` and ``python -m
tablectl.simulators.cli.DEVICE``."""
