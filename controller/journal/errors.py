"""The journal's own errors, below :class:`tablectl.controller.core.errors.JournalError`.

JournalError                       (core) cannot be opened, written or read
├── JournalWriteError              (core) an append failed: an outage
├── ChainBrokenError               (core) a hash-chain link does not verify, naming its seq
└── JournalIntegrityError          the file is altered outside the links
    └── KeyedEvidenceError         the keyed evidence does not vouch for the records
"""

from __future__ import annotations

from pathlib import Path

from tablectl.controller.core.errors import JournalError


class JournalIntegrityError(JournalError):
    """The journal file is damaged or altered outside the hash chain's links (SQLite structure,
    header, ``published`` flags, seal): the file is not what the journal wrote."""


class KeyedEvidenceError(JournalIntegrityError):
    """The keyed evidence does not vouch for the records (``verify --key``, R13/R15): an anchor's
    or the seal's mac does not match the chain head it names, or a closed file has no keyed
    seal. ``seq`` names the record concerned."""

    def __init__(self, path: Path, seq: int, why: str) -> None:
        super().__init__(f"{path}: seq {seq}: {why}")
        self.seq = seq
        self.why = why
