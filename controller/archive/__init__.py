"""The floor's central archive: every table's published records, once, in PostgreSQL.

A table keeps its own journal for months (R19); regulators ask for years (NJ R13, UKGC R15).
``tablectl archive`` subscribes to every table's ``events`` and ``anchor`` on the floor's broker,
stores each record once in ``records`` (``(table_id, seq)`` unique, redelivery harmless), checks
each table's hash chain as it grows, and asks a table to resend (``cmd/resend``) what it missed.

The parts, one job each:

* ``db`` — connecting (the archiver's connections kept up), the archive's errors (one line
  each, never a DSN's password);
* ``schema`` — the tables (the contract others query) and their migrations, monthly partitions;
* ``chains`` — pure per-table verification: the one per-record check (link, body hash, anchor;
  the outbox's own withholding rule), the archiver's walk, gaps;
* ``gate`` — what of a broker message is stored and what is quarantined, and why: ``admission``,
  the one gate between the broker and ``records`` (size, depth, envelope, the ``seq`` and time
  windows; per-record authentication goes there too), ``quarantine`` (what was refused, kept
  bounded for forensics) and ``options`` (the command line's bounds and resend caps);
* ``ingest`` — a published message as a row, and batched idempotent inserts;
* ``verifier`` — the per-table verification pass over the stored rows, and the gaps it keeps;
* ``status`` — what the archive says about itself: counters, alarms, status payloads;
* ``consumer`` — the MQTT side: subscriptions, batches acknowledged after commit;
* ``upkeep`` — the archiver's verification passes, resends, probes of quiet tables, status.

Using it (the read side: ``export``, ``verify``, ``diag stats`` with ``--dsn``):

* ``reader`` — one table's records read back from the published bytes, every column checked;
* ``partitions`` — the months: create ahead, detach old ones to files with their manifest;
* ``audit`` — each table's chain across detached months' files and the database (``verify``);
* ``admin`` — ``verify --dsn``/``--archive-file`` and ``archive-admin``'s command lines.

Layer: imports only ``controller.archive``, ``controller.mqtt`` (the topics, the broker link and
the outbox's withholding rule), ``controller.journal``, ``controller.config``,
``controller.secrets`` and ``core`` (tests/test_layering.py); the CLI is in ``controller.tools``.
"""
