"""Real journal records, as a table publishes them: the archive tests' input.

Written by the journal itself (hash chain, keyed anchors) and turned into the published bytes by
the outbox's own function (a face-down card withheld), so the archive is tested against exactly
what tables send.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tablectl.controller.journal import Journal, KeyedAnchors, canonical_json
from tablectl.controller.mqtt.outbound import published_payload

KEY = b"k" * 32
"""The journal key of the keyed test tables."""


@dataclass(frozen=True)
class Published:
    """One published record: its table, seq and the bytes on ``events``."""

    table: str
    seq: int
    type: str
    payload: bytes


def publish_journal(
    path: Path,
    table: str,
    rounds: int = 3,
    *,
    key: bytes | None = KEY,
    month: str = "2026-11",
) -> list[Published]:
    """A table's journal of ``rounds`` roulette-like rounds and one face-down card, published.

    With ``key``, an anchor every 5 records.
    """
    anchors = KeyedAnchors(key, every=5) if key is not None else None
    with Journal(path, table, anchors=anchors) as journal:
        for n in range(rounds):
            ts = f"{month}-30T10:{n:02d}:00.000000Z"
            journal.append(
                [
                    {"type": "round_open", "ts": ts, "round": f"{table}-{n + 1:06d}"},
                    {"type": "card", "ts": ts, "card": "QC", "face_down": True, "barcode": "x"},
                    {
                        "type": "outcome",
                        "ts": ts,
                        "round": f"{table}-{n + 1:06d}",
                        "status": "settled",
                        "result": {"number": n},
                    },
                ]
            )
        records = list(journal.records())
    return [
        Published(
            table,
            r.seq,
            r.type,
            published_payload(r.type, canonical_json(r.fields).encode("utf-8"), key),
        )
        for r in records
    ]
