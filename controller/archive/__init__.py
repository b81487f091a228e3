"""The floor's central archive: every table's published records, once, in PostgreSQL.

A table keeps its journal for months (R19); regulators ask for years (NJ R13, UKGC R15). ``tablectl
archive`` subscribes to every table's ``events`` and ``anchor``, stores each record once in
``records`` (``(table_id, seq)`` unique), checks each chain as it grows, and asks a table to resend
(``cmd/resend``) what it missed. Design and operation: docs/fleet.md.

Archiver: ``db`` (connections, errors that never show a DSN's password), ``schema`` (tables,
migrations, partitions), ``chains`` (pure per-table verification), ``gate`` (``admission``, the one
gate between the broker and ``records``; ``quarantine``; ``options``), ``ingest`` (batched
idempotent inserts), ``verifier``, ``status``, ``consumer`` (MQTT, acknowledged after commit),
``upkeep`` (passes, resends, probes). Read side: ``reader``, ``partitions``, ``audit``, ``admin``.

Layer: imports only ``controller.archive``, ``controller.mqtt`` (topics, broker link, the outbox's
withholding rule), ``controller.journal``, ``controller.config``, ``controller.secrets`` and
``core`` (tests/test_layering.py); the CLI is in ``controller.tools``.
"""
