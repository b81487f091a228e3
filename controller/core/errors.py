"""Controller errors: a branch of the one tree rooted at
:class:`tablectl.drivers.errors.TablectlError`.

    ControllerError
    ├── ConfigError(ValueError)        a table config that cannot be used (names key and file)
    ├── EventFormatError(ValueError)   a normalized event that is malformed (replay, cmd/event)
    ├── TimeFormatError(ValueError)    a time from outside that is not ISO 8601 with a zone
    ├── MalformedError(ValueError)     a broker message that is no table's payload: a stable
    │                                  ``reason`` (too_large, not_json, too_deep, bad_number,
    │                                  not_object; a reader's own: bad_field, bad_topic)
    ├── RuleError(ValueError)          a game rule or statistic given a value outside its domain
    │                                  (a joker's rank, an unknown preset, too few cells)
    ├── JournalError                   the journal cannot be opened, written or verified
    │   ├── JournalWriteError          an append failed (disk full, I/O error): an outage
    │   ├── JournalRecordError(ValueError)  a record the journal refuses: a bug, not an outage
    │   ├── JournalConflictError       a batch decided for a ``seq`` another write took first
    │   └── ChainBrokenError           a hash-chain link does not verify
    ├── TransitionNotAllowedError      an engine was fed an event its state machine forbids
    └── InvalidDefinitionError(ValueError)  a state machine defined inconsistently (at import)

Game-rule violations are not here: they are verdict values with stable codes.
"""

from __future__ import annotations

from tablectl.drivers.errors import TablectlError


class ControllerError(TablectlError):
    """Something the controller cannot do."""


class ConfigError(ControllerError, ValueError):
    """A configuration file or value that cannot be used."""


class EventFormatError(ControllerError, ValueError):
    """A normalized event (JSON) that is malformed."""


class MalformedError(ControllerError, ValueError):
    """A message from the broker that is no payload of a table's (nothing there is trusted).

    ``reason`` is one of a few stable words: the bounded reader's
    (:data:`tablectl.controller.core.bounded_json.REASONS`) or a reader's own for a field or a
    topic (``bad_field``, ``bad_topic``); the dashboard counts by it, the archive maps it to its
    quarantine codes. ``detail`` says more, in one bounded line (a field's name, a size).
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason} ({detail})" if detail else reason)
        self.reason = reason
        self.detail = detail


class RuleError(ControllerError, ValueError):
    """A game rule or statistic given a value outside its domain (a programming or config error;
    a dealt card that breaks the rules is a verdict value, never this)."""


class TimeFormatError(ControllerError, ValueError):
    """A time given from outside that is not ISO 8601 with a zone (:mod:`.time`)."""


class JournalError(ControllerError):
    """The journal cannot be opened, written or read."""


class JournalWriteError(JournalError):
    """An append failed in the storage (disk full, I/O error, read-only file system).

    Unlike a record the journal refuses (a ``ValueError``), this says nothing about the record:
    the journal is unavailable, and the runner locks the table until a write succeeds again."""


class JournalRecordError(JournalError, ValueError):
    """A record the journal refuses (nothing written): a caller's bug, not an outage."""


class JournalConflictError(JournalError):
    """A batch decided for the ``seq`` after ``after_seq`` met a journal that another write had
    moved on (nothing written): the caller rolls back what it decided and decides again."""


class ChainBrokenError(JournalError):
    """A journal record's hash does not match its content or its predecessor."""

    def __init__(self, seq: int, why: str) -> None:
        super().__init__(f"hash chain broken at seq {seq}: {why}")
        self.seq = seq
        self.why = why


class TransitionNotAllowedError(ControllerError):
    """An engine's strict state machine was fed an event it does not accept in this state."""


class InvalidDefinitionError(ControllerError, ValueError):
    """A state-machine definition that is inconsistent (a programming error, raised at import)."""
