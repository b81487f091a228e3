"""Tamper evidence: ``verify`` detects a single flipped byte anywhere in a journal file.

What is covered, and how:

* A flip inside a record (any column) breaks its link or disagrees with the hashed body, and
  the error names that record's ``seq``.
* A flip in SQLite's structure (page headers, cell pointers, the indexes, the schema text, the
  header fields with one valid value) fails SQLite's integrity check, the schema comparison or
  the header check.
* What no structural check can see — free space inside pages and the header fields that have no
  fixed value (change counter, schema cookie, SQLite version) — changes no record. Those bytes
  are covered by the **seal** that a clean close (and every rotation) writes: the sha256 of the
  whole file. So: with the seal, *every* flipped byte is detected; without it (a journal that is
  open, or was left by a crash), every flipped byte that changes what is read is detected, and
  this file proves both.

The sweep flips every byte that SQLite reads (header, page headers, cell pointer arrays, cell
contents) and every ``_STRIDE``-th byte of the unused gap inside each page, which keeps it to a
few seconds; ``TABLECTL_FLIP_EVERY_BYTE=1`` flips every single byte (about a minute).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import struct
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core.errors import ChainBrokenError, JournalError
from tablectl.controller.journal import (
    Journal,
    JournalIntegrityError,
    canonical_json,
    read_seal,
    record_hash,
    seal_path,
    verify_file,
    verify_journal_file,
)

TABLE = "ROU-01"
_STRIDE = 29
_RECORDS = 12
_EVERY_BYTE = os.environ.get("TABLECTL_FLIP_EVERY_BYTE") == "1"


def _records(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        ts = f"2026-11-30T10:{i // 60:02d}:{i % 60:02d}.000000Z"
        if i % 5 == 4:
            out.append(
                {
                    "type": "outcome",
                    "ts": ts,
                    "round": f"ROU-01-{i:06d}",
                    "status": "settled",
                    "result": {"number": i % 37, "spread": 1e20, "name": "é"},
                }
            )
        else:
            out.append({"type": "winning_number", "ts": ts, "device": "wheel", "number": i})
    return out


@pytest.fixture(scope="module")
def sealed_journal(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    """A closed journal (WAL checkpointed into the file) and its seal, as bytes."""
    path = tmp_path_factory.mktemp("flip") / "ROU-01.sqlite"
    with Journal(path, TABLE) as journal:
        for record in _records(_RECORDS):
            journal.append([record])
        journal.mark_published(7)
    assert not path.with_name(path.name + "-wal").exists()
    return path.read_bytes(), seal_path(path).read_bytes()


def _unused_gaps(data: bytes) -> list[range]:
    """Per b-tree page: the gap between its cell pointer array and its cell content (bytes
    SQLite never reads)."""
    page_size = struct.unpack(">H", data[16:18])[0]
    gaps: list[range] = []
    for base in range(0, len(data), page_size):
        header = base + (100 if base == 0 else 0)
        kind = data[header]
        if kind not in (0x02, 0x05, 0x0A, 0x0D):
            continue
        header_len = 12 if kind in (0x02, 0x05) else 8
        cells = struct.unpack(">H", data[header + 3 : header + 5])[0]
        content = struct.unpack(">H", data[header + 5 : header + 7])[0] or 65536
        gaps.append(range(header + header_len + 2 * cells, base + content))
    return gaps


def _positions(data: bytes) -> list[int]:
    if _EVERY_BYTE:
        return list(range(len(data)))
    gap = {p for r in _unused_gaps(data) for p in r}
    return [p for p in range(len(data)) if p not in gap or p % _STRIDE == 0]


def _rows(path: Path) -> list[tuple[Any, ...]] | None:
    """Every record as SQLite returns it (bytes), or None when SQLite cannot read them."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error:
        return None
    conn.text_factory = bytes
    try:
        return list(conn.execute("SELECT * FROM records ORDER BY seq").fetchall())
    except (sqlite3.Error, UnicodeDecodeError):
        return None
    finally:
        conn.close()


def test_every_flipped_byte_is_detected(
    sealed_journal: tuple[bytes, bytes], tmp_path: Path
) -> None:
    """Each flip is verified without the seal first (as a live or crashed journal would be):
    either it is detected, or what SQLite reads is unchanged — and then the seal catches it."""
    data, seal = sealed_journal
    target = tmp_path / "evidence.sqlite"
    original = _rows_of(data, tmp_path)
    positions = _positions(data)
    assert len(positions) > 2000  # dense: at least every byte SQLite reads
    named: set[int] = set()
    structural = seal_only = 0
    unseen_but_changed: list[int] = []
    undetected: list[int] = []
    target.write_bytes(data)
    with target.open("r+b") as stream:
        for position in positions:
            stream.seek(position)
            stream.write(bytes([data[position] ^ 0xFF]))
            stream.flush()
            try:
                verify_file(target)
            except ChainBrokenError as exc:
                named.add(exc.seq)
            except JournalError:
                structural += 1
            else:
                if _rows(target) != original:
                    unseen_but_changed.append(position)
                seal_path(target).write_bytes(seal)
                try:
                    verify_file(target)
                except JournalIntegrityError:
                    seal_only += 1
                else:
                    undetected.append(position)
                seal_path(target).unlink()
            stream.seek(position)
            stream.write(bytes([data[position]]))
            stream.flush()
    assert undetected == []
    assert unseen_but_changed == []
    # Flips inside records are named by their seq: every record was hit and named.
    assert set(range(1, _RECORDS + 1)) <= named
    assert structural > 0
    assert seal_only > 0


def _rows_of(data: bytes, folder: Path) -> list[tuple[Any, ...]] | None:
    path = folder / "original.sqlite"
    path.write_bytes(data)
    return _rows(path)


# -- specific alterations, each named -----------------------------------------------------------


@pytest.fixture
def journal_file(tmp_path: Path) -> Path:
    path = tmp_path / "ROU-01.sqlite"
    with Journal(path, TABLE) as journal:
        journal.append(_records(10))
        journal.mark_published(6)
    return path


def _sql(path: Path, statement: str, *params: Any) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(statement, params)
    conn.close()


def _fails_at(path: Path) -> ChainBrokenError:
    with pytest.raises(ChainBrokenError) as info:
        verify_file(path)
    return info.value


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [
        ("ts", "2026-11-30T10:00:03.000001Z", "ts column"),
        ("type", "no_spin", "type column"),
        ("prev_hash", "0" * 64, "prev_hash"),
        ("hash", "f" * 64, "hash column"),
    ],
)
def test_a_column_that_disagrees_with_the_body_names_the_record(
    journal_file: Path, column: str, value: str, why: str
) -> None:
    _sql(journal_file, f"UPDATE records SET {column} = ? WHERE seq = 4", value)  # noqa: S608
    error = _fails_at(journal_file)
    assert error.seq == 4
    assert why in error.why


def test_a_non_canonical_body_that_decodes_alike_is_detected(journal_file: Path) -> None:
    # 1e+20 → 1E+20 is one flipped bit (0x65 → 0x45) and decodes to the same float: the
    # hash of the decoded record still matches, only the canonical check sees it.
    conn = sqlite3.connect(journal_file)
    body = conn.execute("SELECT body FROM records WHERE seq = 5").fetchone()[0]
    conn.close()
    assert "1e+20" in body
    assert json.loads(body.replace("1e+20", "1E+20")) == json.loads(body)
    _sql(journal_file, "UPDATE records SET body = ? WHERE seq = 5", body.replace("1e+20", "1E+20"))
    error = _fails_at(journal_file)
    assert (error.seq, error.why) == (5, "body is not in canonical form")


def test_invalid_utf8_and_null_columns_are_named_not_crashes(journal_file: Path) -> None:
    _sql(journal_file, "UPDATE records SET body = CAST(x'7b22ff' AS TEXT) WHERE seq = 2")
    error = _fails_at(journal_file)
    assert (error.seq, error.why) == (2, "body column is not valid UTF-8")


def test_a_record_forged_with_its_own_hash_breaks_the_next_link(journal_file: Path) -> None:
    conn = sqlite3.connect(journal_file)
    body = conn.execute("SELECT body FROM records WHERE seq = 3").fetchone()[0]
    conn.close()
    forged = {**json.loads(body), "number": 17}
    forged["hash"] = record_hash(forged["prev_hash"], forged)
    _sql(
        journal_file,
        "UPDATE records SET body = ?, hash = ? WHERE seq = 3",
        canonical_json(forged),
        forged["hash"],
    )
    assert _fails_at(journal_file).seq == 4


def test_published_flags_must_be_a_prefix(journal_file: Path) -> None:
    _sql(journal_file, "UPDATE records SET published = 0 WHERE seq = 3")
    with pytest.raises(JournalIntegrityError, match="seq 4 is marked published after"):
        verify_file(journal_file)


def test_an_altered_schema_is_detected(journal_file: Path) -> None:
    _sql(journal_file, "CREATE TABLE shadow (x)")
    with pytest.raises(JournalIntegrityError, match=r"schema altered.*shadow"):
        verify_file(journal_file)


def test_deleting_the_first_records_is_a_missing_link(journal_file: Path) -> None:
    _sql(journal_file, "DELETE FROM records WHERE seq <= 2")
    error = _fails_at(journal_file)
    assert error.seq == 1
    assert "missing" in error.why


def test_truncating_the_tail_of_a_sealed_journal_is_detected(journal_file: Path) -> None:
    # A hash chain alone cannot tell a shorter journal from an older one; the seal can.
    _sql(journal_file, "DELETE FROM records WHERE seq >= 9")
    with pytest.raises(JournalIntegrityError, match="seal"):
        verify_file(journal_file)


def test_a_tampered_seal_is_detected(journal_file: Path) -> None:
    seal = seal_path(journal_file)
    text = seal.read_text(encoding="utf-8")
    seal.write_text(text.replace('"last_seq":10', '"last_seq":11'), encoding="utf-8")
    with pytest.raises(JournalIntegrityError, match="seal"):
        verify_file(journal_file)
    seal.write_text(text[:-2] + "\n", encoding="utf-8")
    with pytest.raises(JournalIntegrityError, match="seal is not JSON"):
        verify_file(journal_file)


def test_close_seals_and_open_unseals(journal_file: Path) -> None:
    summary = verify_journal_file(journal_file)
    assert summary.sealed
    seal = read_seal(journal_file)
    assert seal is not None
    assert (seal["last_seq"], seal["table"]) == (10, TABLE)
    with Journal(journal_file, TABLE) as journal:
        assert read_seal(journal_file) is None  # it is going to change
        journal.append(_records(1))
        assert not verify_journal_file(journal_file).sealed  # live: checked structurally
    assert verify_journal_file(journal_file).sealed


def test_another_tables_journal_keeps_its_seal(journal_file: Path) -> None:
    with pytest.raises(JournalError, match="belongs to table"):
        Journal(journal_file, "BAC-01")
    assert verify_journal_file(journal_file).sealed


def test_no_seal_while_another_reader_holds_the_wal(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    journal = Journal(path, TABLE)
    journal.append(_records(3))
    reader = sqlite3.connect(path)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM records").fetchone()  # holds a read snapshot
    journal.close()
    reader.close()
    assert read_seal(path) is None
    assert verify_file(path) == 3


def test_verify_leaves_no_files_next_to_the_evidence(journal_file: Path, tmp_path: Path) -> None:
    evidence = tmp_path / "evidence"
    evidence.mkdir()
    shutil.copy(journal_file, evidence / journal_file.name)
    shutil.copy(seal_path(journal_file), evidence)
    before = sorted(p.name for p in evidence.iterdir())
    assert verify_journal_file(evidence / journal_file.name).sealed
    assert sorted(p.name for p in evidence.iterdir()) == before


def test_live_verify_checks_columns_too(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, TABLE) as journal:
        journal.append(_records(4))
        journal._live.conn.execute("UPDATE records SET type = 'x' WHERE seq = 2")
        with pytest.raises(ChainBrokenError) as info:
            journal.verify()
        assert info.value.seq == 2
