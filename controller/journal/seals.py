"""Seals: ``FILE.seal``, the sha256 and size of a whole closed journal file and its chain ends.

A SQLite file has bytes no query reads (free space, header counters), so no structural check sees a
flip there. A keyed journal's seal also carries ``mac``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from tablectl.controller.core.errors import JournalError
from tablectl.controller.core.time import format_moment
from tablectl.controller.journal.anchors import mac_matches
from tablectl.controller.journal.errors import JournalIntegrityError, KeyedEvidenceError
from tablectl.controller.journal.files import file_digest, fsync_dir
from tablectl.controller.journal.records import HEX64, canonical_json


def seal_path(path: Path) -> Path:
    """Where the seal of journal file ``path`` lives: ``path`` + ``.seal``."""
    return path.with_name(path.name + ".seal")


def write_seal(
    path: Path,
    *,
    table: str | None,
    anchor_seq: int,
    anchor_hash: str,
    last_seq: int,
    last_hash: str,
    sealed_at: datetime,
    name: str | None = None,
    mac: str | None = None,
) -> Path:
    """Seal closed journal file ``path``: sha256 + size + chain ends, fsync'd (``name``: the name it
    is about to be renamed to)."""
    size, sha = file_digest(path)
    seal: dict[str, Any] = {
        "file": name or path.name,
        "size": size,
        "sha256": sha,
        "table": table,
        "anchor_seq": anchor_seq,
        "anchor_hash": anchor_hash,
        "last_seq": last_seq,
        "last_hash": last_hash,
        "sealed_at": format_moment(sealed_at, "seconds"),
    }
    if mac is not None:
        seal["mac"] = mac
    target = seal_path(path.with_name(name or path.name))
    tmp = target.with_name(target.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as stream:
        stream.write(canonical_json(seal) + "\n")
        stream.flush()
        os.fsync(stream.fileno())
    tmp.replace(target)
    fsync_dir(target.parent)
    return target


def unseal(path: Path) -> None:
    """Remove the seal of ``path`` (durably): the file is about to change."""
    seal = seal_path(path)
    if seal.exists():
        seal.unlink()
        fsync_dir(seal.parent)


def read_seal(path: Path) -> dict[str, Any] | None:
    """The seal of journal file ``path``, ``None`` when it has none."""
    seal = seal_path(path)
    try:
        raw = seal.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise JournalError(f"{seal}: cannot read seal: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
        obj = json.loads(text)
    except (UnicodeDecodeError, ValueError):
        raise JournalIntegrityError(f"{seal}: seal is not JSON (altered?)") from None
    if not isinstance(obj, dict) or text != canonical_json(obj) + "\n":
        raise JournalIntegrityError(f"{seal}: seal is not in canonical form (altered?)")
    ints = ("size", "anchor_seq", "last_seq")
    hashes = ("sha256", "anchor_hash", "last_hash")
    if (
        not all(type(obj.get(k)) is int for k in ints)
        or not all(isinstance(obj.get(k), str) and HEX64.fullmatch(obj[k]) for k in hashes)
        or not isinstance(obj.get("file"), str)
        or ("mac" in obj and not (isinstance(obj["mac"], str) and HEX64.fullmatch(obj["mac"])))
    ):
        raise JournalIntegrityError(f"{seal}: seal lacks a field or has a malformed one")
    return obj


def check_seal_mac(path: Path, seal: Mapping[str, Any], key: bytes) -> None:
    """The seal of ``path`` must carry a ``mac`` over its chain end that matches under ``key``."""
    last_seq, last_hash = seal["last_seq"], seal["last_hash"]
    if "mac" not in seal:
        raise KeyedEvidenceError(
            path,
            last_seq,
            "the seal has no mac (sealed without a key): the file's tail is not keyed",
        )
    if not mac_matches(key, seal["mac"], seal.get("table"), last_seq, last_hash):
        raise KeyedEvidenceError(
            path,
            last_seq,
            "the seal's mac does not match the chain head it names: the records are not the"
            " ones keyed (chain recomputed, seal rewritten?), or the key is not this journal's",
        )


def unkeyed_tail(path: Path, key: bytes, table: str, last_seq: int, last_hash: str) -> str | None:
    """Why the seal of ``path`` does not vouch, under ``key``, for a file ending at
    ``last_seq``/``last_hash``; ``None`` when it does (a keyed seal of the last clean close)."""
    try:
        seal = read_seal(path)
    except JournalError as exc:
        return str(exc)
    if seal is None:
        return "no seal (not closed cleanly)"
    if "mac" not in seal:
        return "the seal has no mac (sealed without a key)"
    if (seal["last_seq"], seal["last_hash"]) != (last_seq, last_hash):
        return f"the seal ends at seq {seal['last_seq']}, the file at seq {last_seq}"
    if not mac_matches(key, seal["mac"], table, last_seq, last_hash):
        return "the seal's mac does not match (another key, or altered)"
    return None
