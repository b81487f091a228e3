"""Write the compatibility corpus: journals and checkpoints written by an earlier version.

contracts §7: an upgrade or a rollback never takes a table down. A checkpoint is used only by the
code that wrote it, and a journal of every earlier version stays readable. The corpus under
``tests/data/compat/<commit>/`` holds what an earlier version left on a table's disk. For each
table there is its journal (``ID.sqlite``, with its ``.seal``), the checkpoint written at its
orderly stop (``ID.sqlite.checkpoint``), and the events that follow in the same stream
(``ID.continue.jsonl``), which the current code plays after it starts on that journal.
``manifest.json`` says which table, game and rules each journal belongs to.
``tests/compat/test_corpus.py`` starts the current code on every one of them.

Run this script with the OLD version's source tree and the current project's venv. It imports
nothing of the current tree, only its event streams in ``tests/data/replay/``. Example, for the
commit ``a857d59``::

    git worktree add --detach /tmp/old-a857d59 a857d59
    .venv/bin/python tests/compat/generate.py --tree /tmp/old-a857d59 \\
        --out tests/data/compat/a857d59
    git worktree remove /tmp/old-a857d59

When to add a version: a change to the journal's format (``JOURNAL_FORMAT``, its records or its
SQLite schema), to the checkpoint's format (``checkpoint.SCHEMA``), or to what an engine keeps
in its state. Once that change has landed, run this script on the commit before it and on the
commit that landed it. Commit the new folder beside the older ones (keep those), and add a line
to ``CHANGELOG.md``. See docs/journal.md, "Format versions and the compatibility corpus".

The script knows both layouts so far: the ``tablectl/`` namespace (``tablectl.controller.*``,
since c93e6a6) and the older top-level ``controller``/``drivers`` packages. A future layout adds
its module names to :data:`MODULES`, newest first.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import hashlib
import importlib
import inspect
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, Final

STREAMS = Path(__file__).resolve().parents[1] / "data" / "replay"

TABLES: list[dict[str, Any]] = [
    # Their engines' state changed after a857d59 (roulette's extras, the card engine's last
    # round, DrawRules, the wheel's bonus): those old pickles crashed the current code (issue 25).
    {"table": "ROU-01", "game": "roulette", "rules": {}, "stream": "roulette-rounds.jsonl"},
    {"table": "BAC-01", "game": "baccarat", "rules": {"decks": 8}, "stream": "baccarat-shoe.jsonl"},
    {"table": "L7-01", "game": "lucky7", "rules": {}, "stream": "lucky7.jsonl"},
    {"table": "DC-01", "game": "dream_catcher", "rules": {}, "stream": "dream-catcher.jsonl"},
]
"""One table per engine family that changed, each played from a stream of tests/data/replay."""

MODULES: dict[str, tuple[str, ...]] = {
    "events": ("tablectl.controller.core.events", "controller.events"),
    "engines": ("tablectl.controller.engines", "controller.engines"),
    "journal": ("tablectl.controller.journal", "controller.journal"),
    "runner": ("tablectl.controller.service.runner", "controller.runner"),
    "checkpoint": ("tablectl.controller.service.checkpoint", "controller.checkpoint"),
}
"""Where each piece lives, per layout, newest first."""


def _module(tree: Path, role: str) -> ModuleType:
    """The first of :data:`MODULES`' names for ``role`` that imports from ``tree``."""
    for name in MODULES[role]:
        if not (tree / name.partition(".")[0]).is_dir():
            continue  # another layout's package (it would import from the current install)
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if Path(module.__file__ or "").resolve().is_relative_to(tree):
            return module
    raise SystemExit(f"{tree}: none of {MODULES[role]} imports from this tree")


def _ts(value: str) -> float:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def _lines(name: str) -> list[str]:
    text = (STREAMS / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


def _outcomes(records: Any) -> int:
    return sum(1 for record in records if record.get("type") == "outcome")


class _Clock:
    """The runner's wall clock, set by the script (power_on before the first event, power_off
    after the last one played): a Clock (``now()``; since issue 27) and a callable (before).
    """

    def __init__(self, now: float) -> None:
        self.at = now

    def __call__(self) -> float:
        return self.at

    def now(self) -> float:
        return self.at

    def wall(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.at, dt.UTC)

    def monotonic(self) -> float:
        return self.at

    async def sleep(self, delay: float) -> None:
        await asyncio.sleep(delay)


def _play(tree: Path, out: Path, spec: dict[str, Any]) -> dict[str, Any]:
    modules = {role: _module(tree, role) for role in MODULES}
    events, engines = modules["events"], modules["engines"]
    journal_mod, runner_mod, cp = modules["journal"], modules["runner"], modules["checkpoint"]
    lines = _lines(spec["stream"])
    played = _played(modules, spec, lines)
    table, game, rules = spec["table"], spec["game"], spec["rules"]
    path = out / f"{table}.sqlite"
    clock = _Clock(_ts(json.loads(lines[0])["ts"]) - 60)
    extra, anchors = _life_records(runner_mod, journal_mod, clock)
    with journal_mod.Journal(path, table, **anchors) as journal:
        checkpoints = cp.Checkpoints(
            path, table, cp.fingerprint(table=table, game=game, rules=rules)
        )
        runner = runner_mod.TableRunner(
            table_id=table,
            engine=engines.build_engine(table, game, rules, source="compat"),
            journal=journal,
            clock=clock,
            checkpoints=checkpoints,
            **extra,
        )
        # Since issue 27 the runner's parts do this (restart, committer); before, the runner.
        restart = getattr(runner, "restart", runner)
        handle = runner.committer.handle if hasattr(runner, "committer") else runner.handle
        restart.recover()
        restart.power_on()
        outcomes = 0
        for line in lines[:played]:
            event = events.parse_event(json.loads(line))
            clock.at = _ts(event.ts)
            outcomes += _outcomes(handle(event))
        clock.at += 0.5
        restart.power_off("shutdown")
        records = journal.last_seq
    if not _checkpoint_path(path).exists():
        raise SystemExit(f"{path}: the old version wrote no checkpoint")
    (out / f"{table}.continue.jsonl").write_text(
        "".join(line + "\n" for line in lines[played:]), encoding="utf-8"
    )
    return {
        "table": table,
        "game": game,
        "rules": rules,
        "journal": path.name,
        "checkpoint": _checkpoint_path(path).name,
        "continue": f"{table}.continue.jsonl",
        "stream": spec["stream"],
        "events_played": played,
        "outcomes": outcomes,
        "records": records,
        "fingerprint": checkpoints.fingerprint,
    }


COMPAT_KEY: Final = b"tablectl-compatibility-corpus-key"
"""The journal key of a version that writes keyed records (``auth``, anchors): a test key,
published here on purpose (the corpus test verifies with it)."""


def _life_records(
    runner_mod: ModuleType, journal_mod: ModuleType, clock: _Clock
) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a version that has them needs to write its table's life records too: a clock watch
    on the script's clock (``clock`` readings on ``power_on``/``power_off``; issue 25) and a
    journal key (each record's ``auth`` and the anchors; issue 26). Older versions: nothing."""
    extra: dict[str, Any] = {}
    anchors: dict[str, Any] = {}
    if "clock_watch" in inspect.signature(runner_mod.TableRunner).parameters:
        clocks = importlib.import_module("tablectl.controller.service.clock")
        start = clock.at

        def read() -> Any:
            return clocks.ClockReading(wall=clock.at, boot=clock.at - start, boot_id="compat")

        extra["clock_watch"] = clocks.ClockWatch(max_step=120, read=read)
    if hasattr(journal_mod, "AUTH") and hasattr(journal_mod, "KeyedAnchors"):
        anchors["anchors"] = journal_mod.KeyedAnchors(COMPAT_KEY, every=20)
    return extra, anchors


def _checkpoint_path(journal: Path) -> Path:
    return journal.with_name(journal.name + ".checkpoint")


def _played(modules: dict[str, ModuleType], spec: dict[str, Any], lines: list[str]) -> int:
    """How many events to play: through the outcome of about half the stream's rounds, so the
    journal stops between two rounds and the rest of the stream has outcomes of its own."""
    events, engines = modules["events"], modules["engines"]
    engine = engines.build_engine(spec["table"], spec["game"], spec["rules"], source="compat")
    ends = []
    for index, line in enumerate(lines):
        outputs = engine.apply(events.parse_event(json.loads(line)))
        if any(type(output).__name__ == "Outcome" for output in outputs):
            ends.append(index + 1)
    if len(ends) < 2:
        raise SystemExit(f"{spec['stream']}: fewer than two outcomes")
    return ends[(len(ends) - 1) // 2]


def _rows(path: Path) -> Iterator[tuple[Any, ...]]:
    # immutable: a read-only connection to a WAL file would still leave -wal/-shm files.
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)) as conn:
        yield from conn.execute("SELECT seq, type FROM records ORDER BY seq")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--tree", type=Path, required=True, help="the old version's checkout")
    parser.add_argument("--out", type=Path, required=True, help="tests/data/compat/<commit>")
    args = parser.parse_args(argv)
    tree = args.tree.resolve()
    sys.path.insert(0, str(tree))
    commit = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    out: Path = args.out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    tables = [_play(tree, out, spec) for spec in TABLES]
    for leftover in [*out.glob("*-wal"), *out.glob("*-shm")]:
        raise SystemExit(f"{leftover}: the journal was not closed cleanly")
    manifest = {
        "commit": commit,
        "journal_schema": _module(tree, "journal").SCHEMA,
        "checkpoint_schema": _module(tree, "checkpoint").SCHEMA,
        "python": ".".join(map(str, sys.version_info[:3])),
        "generated_by": "tests/compat/generate.py",
        "tables": tables,
        "files": {
            path.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(out.iterdir())
        },
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    for spec in tables:
        kinds = [kind for _, kind in _rows(out / spec["journal"])]
        print(f"{spec['table']}: {len(kinds)} records, {spec['outcomes']} outcomes, {kinds[-1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
