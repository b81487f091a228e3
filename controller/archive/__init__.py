"""The floor's central archive: every table's published records, once, in PostgreSQL.

A table keeps its journal for months (R19); regulators ask for years (NJ R13, UKGC R15). The
modules and the design: docs/fleet.md and docs/architecture.md; the CLI is in ``controller.tools``.
"""
