"""What of the broker gets into the archive (issue 26: nothing on the broker is trusted).

* ``admission`` — the one gate between a broker message and ``records``: :func:`admit` says
  admitted or quarantined (a reason code), never raises; size, depth, envelope, the table's
  ``seq`` and time windows (and, to come, the per-record keyed MAC);
* ``quarantine`` — what was refused, kept bounded in ``archive_quarantine`` for forensics;
* ``options`` — ``tablectl archive``'s options for those bounds and the resend caps.
"""
