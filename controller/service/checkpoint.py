"""Recovery checkpoints: a restart replays the journal from the last checkpoint, not from the start.

90 days of journal (R19) replayed in full (contracts §3) would outlast systemd's
``TimeoutStartSec``. A checkpoint never says more than the journal does: used only if the record
at its ``seq`` has its hash and the code and rules fingerprint matches; unpickled only into the
game packages; any doubt is ``checkpoint_ignored`` and a full replay. Deleting it is always safe
(docs/journal.md).
"""

from __future__ import annotations

import collections
import datetime as dt
import decimal
import functools
import hashlib
import importlib
import io
import json
import os
import pickle
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import structlog

from tablectl.controller.core.errors import ControllerError
from tablectl.controller.journal import Journal, canonical_json, fsync_dir
from tablectl.controller.service.recovery import JournalScan

log = structlog.get_logger("tablectl.checkpoint")

CHECKPOINT_EVERY: Final = 10_000
"""Records between checkpoints: bounds a restart's replay (about 0.2 s of it) after a crash."""

SCHEMA: Final = 1
"""The checkpoint file's format: a canonical-JSON header line, then the pickled state. A change of
the header or of what :class:`RecoveryState` holds is a new version (and new corpus files: see
``docs/journal.md``). What the engines keep inside the state is covered by the fingerprint."""

SOURCE_PACKAGES: Final = ("tablectl.controller", "tablectl.drivers")
"""The packages whose code builds a table's state: the fingerprint covers all their sources."""

_ALLOWED_MODULES: Final = (
    "tablectl.controller.engines.",
    "tablectl.controller.games.",
    "tablectl.drivers.cards",
)
"""Where the pickled game state's classes live (plus the exact modules below)."""
_ALLOWED_EXACT: Final = frozenset(
    {
        "tablectl.controller.core.statemachine",
        "tablectl.controller.core.crew",
        "tablectl.controller.core.events",
        "tablectl.controller.core.outcomes",
        "tablectl.controller.service.recovery",
        "tablectl.controller.service.checkpoint",
    }
)
_STDLIB: Final[Mapping[tuple[str, str], Any]] = {
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("collections", "Counter"): collections.Counter,
    ("collections", "deque"): collections.deque,
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("collections", "defaultdict"): collections.defaultdict,
    ("functools", "partial"): functools.partial,
    ("datetime", "datetime"): dt.datetime,
    ("datetime", "date"): dt.date,
    ("datetime", "timedelta"): dt.timedelta,
    ("datetime", "timezone"): dt.timezone,
    ("decimal", "Decimal"): decimal.Decimal,
}


@dataclass
class RecoveryState:
    """What :meth:`Restart.recover` rebuilds from the journal."""

    engine: Any
    scan: JournalScan
    latched: dict[str, set[str]]


def checkpoint_path(journal_path: Path) -> Path:
    """``JOURNAL.checkpoint`` beside the live journal file."""
    return journal_path.with_name(journal_path.name + ".checkpoint")


class SourcesNotFoundError(ControllerError):
    """The running code's sources cannot be found: it cannot be fingerprinted (checkpoints off)."""


def source_roots() -> dict[str, Path]:
    """The folder of each of :data:`SOURCE_PACKAGES`, where it was imported from (a source tree, an
    editable install or a wheel alike); :class:`SourcesNotFoundError` when the digest would not
    cover the running code."""
    roots: dict[str, Path] = {}
    for name in SOURCE_PACKAGES:
        module = importlib.import_module(name)
        file = getattr(module, "__file__", None)
        if not file:
            raise SourcesNotFoundError(f"{name} has no __file__: its code cannot be fingerprinted")
        roots[name] = Path(file).resolve().parent
    here = Path(__file__).resolve()
    if not here.is_relative_to(roots[SOURCE_PACKAGES[0]]):
        raise SourcesNotFoundError(
            f"{here} is not inside {roots[SOURCE_PACKAGES[0]]}: the digest would miss this code"
        )
    return roots


def source_digest(roots: Mapping[str, Path]) -> str:
    """SHA-256 over every ``.py`` file below each root, never the digest of nothing."""
    digest = hashlib.sha256()
    for name, root in sorted(roots.items()):
        files = sorted(
            (path.relative_to(root).as_posix(), path)
            for path in root.rglob("*.py")
            if "__pycache__" not in path.parts
        )
        if not files:
            raise SourcesNotFoundError(f"no Python sources under {root} ({name})")
        for relative, path in files:
            data = path.read_bytes()
            digest.update(f"{name}/{relative}\0{len(data)}\0".encode())
            digest.update(data)
    return digest.hexdigest()


@functools.cache
def _code_digest() -> str:
    """:func:`source_digest` of the running code, once per process (raises as it does)."""
    return source_digest(source_roots())


def fingerprint(*, table: str, game: str, rules: Mapping[str, Any]) -> str | None:
    """Code + table rules: a checkpoint is only valid for exactly what wrote it. ``None`` when the
    sources cannot be found: then no checkpoints at all, rather than trusting every version's."""
    try:
        code = _code_digest()
    except (OSError, ImportError, SourcesNotFoundError) as exc:
        log.error("checkpoints_off", table=table, reason=str(exc))
        return None
    # repr for what JSON lacks (a TOML date in [rules]): stable for the same config.
    config = json.dumps(
        {"table": table, "game": game, "rules": dict(rules)}, sort_keys=True, default=repr
    )
    return hashlib.sha256(f"{code}\n{config}".encode()).hexdigest()


_PROBE_ITEMS: Final = 64
"""Items of a container compared by :func:`state_mismatch` (a class's shape shows in any one)."""


def _attribute_names(obj: object) -> set[str]:
    """The instance attributes ``obj`` holds: its ``__dict__`` and its filled slots."""
    names = set(getattr(obj, "__dict__", {}) or {})
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot not in {"__dict__", "__weakref__"} and hasattr(obj, slot):
                names.add(slot)
    return names


def _missing(restored: object, fresh: object, path: str, seen: set[int]) -> str | None:
    """The first attribute ``fresh`` holds and ``restored`` lacks, along the same path."""
    if type(restored) is not type(fresh) or id(fresh) in seen or len(seen) > 10_000:
        return None
    pairs: list[tuple[object, object, str]] = []
    if isinstance(fresh, dict) and isinstance(restored, dict):
        keys = [key for key in list(fresh)[:_PROBE_ITEMS] if key in restored]
        pairs = [(restored[key], fresh[key], f"{path}[{key!r}]") for key in keys]
    elif isinstance(fresh, list | tuple | collections.deque) and isinstance(
        restored, list | tuple | collections.deque
    ):
        pairs = [
            (old, new, f"{path}[{index}]")
            for index, (old, new) in enumerate(zip(restored, fresh, strict=False))
            if index < _PROBE_ITEMS
        ]
    elif _allowed_module(type(fresh).__module__):
        seen.add(id(fresh))
        have, want = _attribute_names(restored), _attribute_names(fresh)
        lacking = sorted(want - have)
        if lacking:
            return f"{path} ({type(fresh).__name__}) has no {lacking[0]}"
        pairs = [
            (getattr(restored, name), getattr(fresh, name), f"{path}.{name}")
            for name in sorted(want)
        ]
    for old, new, where in pairs:
        found = _missing(old, new, where, seen)
        if found is not None:
            return found
    return None


def state_mismatch(state: RecoveryState, engine: object) -> str | None:
    """What a loaded state lacks that the current code's fresh objects hold, or ``None``.

    Catches what the fingerprint cannot: a pickle of an older class whose new attributes were never
    set (an ``AttributeError`` on first use, or a silently different rule).
    """
    if type(state.engine) is not type(engine):
        return (
            f"the engine is a {type(state.engine).__name__}, the table's a {type(engine).__name__}"
        )
    seen: set[int] = set()
    return _missing(state.engine, engine, "engine", seen) or _missing(
        state.scan, JournalScan(), "scan", seen
    )


def _allowed_module(module: str) -> bool:
    return module in _ALLOWED_EXACT or module.startswith(_ALLOWED_MODULES)


def _bound_method(obj: object, name: str) -> Any:
    """``getattr`` for pickled bound methods (an engine's handler table), and nothing else."""
    method = getattr(obj, name, None)
    func = getattr(method, "__func__", None)
    if (
        getattr(method, "__self__", None) is not obj
        or func is None
        or not _allowed_module(getattr(func, "__module__", ""))
    ):
        raise pickle.UnpicklingError(f"not a game method: {type(obj).__name__}.{name}")
    return method


class _GameStateUnpickler(pickle.Unpickler):
    """Resolves only game-state classes and functions (see the module docstring)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("builtins", "getattr"):
            return _bound_method
        if (module, name) in _STDLIB:
            return _STDLIB[module, name]
        # A plain name (no "os.popen" through a module's imports), defined in a game module
        # itself (not imported into one), and a class or a Python function.
        if _allowed_module(module) and name.isidentifier() and not name.startswith("__"):
            found = super().find_class(module, name)
            if _allowed_module(getattr(found, "__module__", "") or "") and (
                isinstance(found, type) or (callable(found) and hasattr(found, "__code__"))
            ):
                return found
        raise pickle.UnpicklingError(f"not allowed in a checkpoint: {module}.{name}")


class CheckpointIgnoredError(ControllerError):
    """Internal: why a checkpoint is not used (logged, never raised to callers)."""


class Checkpoints:
    """The checkpoint file of one table's journal, beside it (``fingerprint`` ``None``: neither used
    nor written)."""

    def __init__(self, journal_path: Path, table: str, fingerprint: str | None) -> None:
        self.path = checkpoint_path(journal_path)
        self.table = table
        self.fingerprint = fingerprint
        self.seq = 0
        """``seq`` of the newest checkpoint written or loaded (0: none)."""
        self.ignored: str | None = None
        """Why the last :meth:`load` did not use the file, or why :meth:`discard` dropped it
        (``None``: used, or no file)."""

    def load(self, journal: Journal) -> tuple[int, RecoveryState] | None:
        """The state as of the checkpoint's ``seq``, or ``None`` (replay from the start)."""
        self.ignored = None
        try:
            seq, state = self._read(journal)
        except FileNotFoundError:
            return None
        except CheckpointIgnoredError as exc:
            self.ignored = str(exc)
        except Exception as exc:  # any damage means "replay in full", never a crash
            self.ignored = f"unreadable: {exc!r}"
        if self.ignored is not None:
            log.warning("checkpoint_ignored", path=str(self.path), reason=self.ignored)
            return None
        self.seq = seq
        log.info("checkpoint_loaded", seq=seq)
        return seq, state

    def discard(self, reason: str) -> None:
        """Drop a loaded checkpoint that could not be used (logged as ``checkpoint_ignored``):
        the file is deleted, so a start that is killed during the full replay that follows does
        not load it again, and the next checkpoint is written whatever its ``seq``."""
        self.ignored = reason
        log.warning("checkpoint_ignored", path=str(self.path), reason=reason)
        self.seq = 0
        try:
            self.path.unlink(missing_ok=True)
        except OSError as exc:  # the next write replaces it; a read checks it again
            log.warning("checkpoint_not_deleted", path=str(self.path), error=repr(exc))

    def _read(self, journal: Journal) -> tuple[int, RecoveryState]:
        data = self.path.read_bytes()
        if self.fingerprint is None:
            raise CheckpointIgnoredError("the running code has no fingerprint (checkpoints_off)")
        head, sep, payload = data.partition(b"\n")
        if not sep:
            raise CheckpointIgnoredError("no header")
        header = json.loads(head)
        if not isinstance(header, dict) or header.get("schema") != SCHEMA:
            raise CheckpointIgnoredError("unknown format")
        if header.get("table") != self.table:
            raise CheckpointIgnoredError(f"written for table {header.get('table')!r}")
        if header.get("fingerprint") != self.fingerprint:
            raise CheckpointIgnoredError("written by other code or rules")
        if hashlib.sha256(payload).hexdigest() != header.get("sha256"):
            raise CheckpointIgnoredError("state does not match its digest (torn write?)")
        seq = header.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
            raise CheckpointIgnoredError("no seq")
        if seq > journal.last_seq:
            raise CheckpointIgnoredError(f"seq {seq} is past the journal's end {journal.last_seq}")
        record = next(journal.records(seq - 1), None)
        if record is None or record.get("seq") != seq:
            raise CheckpointIgnoredError(f"record {seq} is no longer in the journal")
        if record.get("hash") != header.get("hash"):
            raise CheckpointIgnoredError(f"record {seq} has another hash: another history")
        state = _GameStateUnpickler(io.BytesIO(payload)).load()
        if not isinstance(state, RecoveryState):
            raise CheckpointIgnoredError("not a recovery state")
        return seq, state

    def save(self, seq: int, record_hash: str, state: RecoveryState) -> bool:
        """Write the state as of record ``seq`` (whose hash is ``record_hash``). Never raises:
        a checkpoint that cannot be written only makes the next start slower."""
        payload = self.encode(seq, state)
        return payload is not None and self.write(seq, record_hash, payload)

    def encode(self, seq: int, state: RecoveryState) -> bytes | None:
        """The state as bytes, taken now (on the loop, where the state lives); ``None`` (logged)
        when it cannot be pickled. :meth:`write` may then run on another thread."""
        if self.fingerprint is None:
            return None  # checkpoints_off: logged once, when the fingerprint was taken
        try:
            return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # see save()
            log.warning("checkpoint_failed", path=str(self.path), seq=seq, error=repr(exc))
            return None

    def write(self, seq: int, record_hash: str, payload: bytes) -> bool:
        """Write :meth:`encode`'s bytes as the checkpoint of record ``seq`` (two fsyncs: the
        file and its directory). Never raises (see :meth:`save`)."""
        if self.fingerprint is None:
            return False
        try:
            header = {
                "schema": SCHEMA,
                "table": self.table,
                "seq": seq,
                "hash": record_hash,
                "fingerprint": self.fingerprint,
                "sha256": hashlib.sha256(payload).hexdigest(),
            }
            temp = self.path.with_name(self.path.name + ".tmp")
            with temp.open("wb") as handle:
                handle.write(canonical_json(header).encode() + b"\n" + payload)
                handle.flush()
                os.fsync(handle.fileno())
            temp.replace(self.path)
            fsync_dir(self.path.parent)
        except Exception as exc:  # see save()
            log.warning("checkpoint_failed", path=str(self.path), seq=seq, error=repr(exc))
            return False
        self.seq = seq
        return True
