"""A small file system to fill: the journal's disk running full, for real (needs root).

Why a tmpfs and not a mock: what is under test is what SQLite, the journal and the runner do when
the kernel says ENOSPC, in the middle of a WAL write or a checkpoint; only a real file system
says it the way a real disk does.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["fill", "small_disk"]


@contextlib.contextmanager
def small_disk(where: Path, size: str = "8m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where``; skips the test where it cannot be mounted."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root")
    where.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def fill(disk: Path) -> Path:
    """Write a filler file until the file system refuses (ENOSPC); delete it to free the disk."""
    filler = disk / "filler"
    block = b"\0" * 65536
    for size in (len(block), 512, 1):  # big blocks, then the last partial ones
        with contextlib.suppress(OSError), filler.open("ab") as out:
            while True:
                out.write(block[:size])
                out.flush()
    return filler
