"""``python -m bench archive [--quick] [--json PATH] [--keep]``: the floor's archive, sized.

A floor of 2,000 tables averages 1–4k records/s (issue 17). What one archiver ingests and how
late a record lands in PostgreSQL are measured on real parts: a private PostgreSQL (``initdb`` on
a free port, ``fsync`` on as in production), a private Mosquitto, the archiver as ``python -m
tablectl archive``, and tables as real fsync'd journals drained by the real publisher (``python -m
bench.archive tables``, a process of its own).

* **floors**: a bare INSERT committed (p50), a bare COPY of the rows into an unindexed table
  (rows/s), one MQTT QoS 1 hop (p50);
* **ingest**: the same chained records stored by the archive's ingest (COPY into a temporary
  table, one ``INSERT … SELECT … ON CONFLICT``) and by a multi-row ``INSERT … ON CONFLICT``, in
  batches of 500, one transaction each: rows/s, their ratio, each against the bare COPY (the
  same rows, COPY text made beforehand, into an unindexed table: the server's own pace); best
  of three, interleaved;
* **drain**: the archiver offline, the tables publish a backlog (the broker queues it in the
  archiver's persistent session); the archiver started again: the records/s it stores (from the
  rows' own ``archived_at``: its pace, not its start-up's);
* **lag**: tables append at a steady rate while the archiver runs: ``archived_at − ts`` (the
  record's journal time to the start of the ingest transaction that stored it; the row is
  visible one commit later) at p50/p99, against the floor (hop + committed INSERT).

Every figure is also a ratio to a floor measured in the same run, so runs on other machines
compare; the verdicts are against the floor's needs (:data:`TARGETS`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import psycopg

from bench.floors import mqtt_hop
from bench.mqtt import Subscriber
from bench.support import (
    REPO,
    Broker,
    load_average,
    machine_info,
    proc_cpu_seconds,
    proc_runqueue_wait_seconds,
    start_module,
    stop_process,
    summarize_ms,
)
from tablectl.controller.archive.ingest import Incoming, Ingest, parse_published
from tablectl.controller.archive.schema import migrate
from tablectl.controller.core.time import format_ts
from tablectl.controller.journal import canonical_json
from tablectl.controller.journal.records import GENESIS_HASH, chain_record, prepare_record
from tablectl.controller.mqtt.broker import free_port

PREFIX: Final = "bench-archive"
BATCH: Final = 500
TARGETS: Final = (
    # name, figure key, unit, op, limit, why
    ("archive ingest per archiver", "drain_records_per_s", "1/s", ">=", 4000.0),
    ("archive lag p99 (journal → row)", "lag_p99_ms", "ms", "<=", 1000.0),
)
"""One archiver takes a whole floor's upper average (4k records/s; more archivers share it with
``--share``); a record is in the archive within a second (the archive is no settlement path,
but a dispute or a regulator's query should see what a table just did)."""


# --- a private PostgreSQL (as tests/support/postgres.py, copied: bench needs no test tree) ------


class Postgres:
    """``initdb`` in a temporary folder and ``postgres`` on a free loopback port (as the
    ``postgres`` user when run as root: the server refuses root)."""

    def __init__(self) -> None:
        found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
        if not found:
            raise FileNotFoundError("PostgreSQL not found (apt-get install postgresql)")
        self.bindir = found[-1].parent
        self.port = free_port()
        self.workdir = Path(tempfile.mkdtemp(prefix="tablectl-bench-pg-"))
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as:
            user = pwd.getpwnam("postgres")
            os.chown(self.workdir, user.pw_uid, user.pw_gid)
        self._names = 0

    def _run(self, *args: str) -> None:
        subprocess.run(
            [*self._as, str(self.bindir / args[0]), *args[1:]],
            check=True,
            capture_output=True,
            timeout=120,
        )

    def __enter__(self) -> Postgres:
        data = self.workdir / "data"
        self._run("initdb", "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8")
        options = f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1"
        self._run(
            "pg_ctl", "-D", str(data), "-o", options, "-l", str(self.workdir / "log"), "-w", "start"
        )
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            self._run("pg_ctl", "-D", str(self.workdir / "data"), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.workdir, ignore_errors=True)

    def new_database(self) -> str:
        self._names += 1
        name = f"bench{self._names}"
        admin = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        dsn = f"postgresql://postgres@127.0.0.1:{self.port}/{name}"
        with psycopg.connect(dsn) as conn:
            migrate(conn)
        return dsn


# --- records: chained with the journal's own code -------------------------------------------------


def chained(table: str, count: int, *, first_ts: float | None = None) -> list[bytes]:
    """``count`` records of ``table`` as published: canonical JSON, chained from seq 1 with
    :func:`chain_record` (an outcome-sized wheel event each)."""
    out, prev = [], GENESIS_HASH
    at = first_ts if first_ts is not None else time.time()
    for seq in range(1, count + 1):
        rec = prepare_record(_event(seq, format_ts(at + seq * 0.001)), table)
        row = chain_record(rec, seq, prev)
        prev = row[5]
        out.append(canonical_json(rec).encode("utf-8"))
    return out


def _event(seq: int, ts: str) -> dict[str, Any]:
    return {
        "type": "winning_number",
        "ts": ts,
        "device": "wheel",
        "number": seq % 37,
        "revolutions": 7,
        "ball_direction": "ccw",
        "rotor_direction": "cw",
        "spin": seq,
        "status_number": seq % 37,
        "manual": False,
    }


def _batches(tables: int, per_table: int) -> list[list[Incoming]]:
    rows = [
        parse_published(f"ING-{t:03d}", raw)
        for t in range(tables)
        for raw in chained(f"ING-{t:03d}", per_table)
    ]
    rows.sort(key=lambda r: (r.seq, r.table_id))  # interleaved, as tables publish
    return [rows[i : i + BATCH] for i in range(0, len(rows), BATCH)]


# --- phases ---------------------------------------------------------------------------------------


async def _rate(dsn: str, batches: list[list[Incoming]], how: str) -> float:
    """Rows/s storing ``batches`` one transaction each: ``ingest`` (the archive's), ``insert``
    (multi-row INSERT … ON CONFLICT) or ``copy`` (bare COPY into an unindexed table)."""
    conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    ingest = Ingest()
    try:
        if how == "copy":
            await conn.execute("CREATE TABLE bare (LIKE records INCLUDING DEFAULTS)")
        await ingest.store(conn, batches[0][:1])  # partitions, temp table: not in the figure
        await conn.execute("DELETE FROM records")
        count = sum(len(b) for b in batches)
        # The floor is the server's: its COPY text is made before the clock starts.
        encoded = {id(b): b"".join(map(_copy_line, b)) for b in batches} if how == "copy" else {}
        started = time.perf_counter()
        for batch in batches:
            if how == "ingest":
                await ingest.store(conn, batch)
            elif how == "insert":
                await _insert(conn, batch)
            else:
                async with (
                    conn.transaction(),
                    conn.cursor() as cur,
                    cur.copy(f"COPY bare ({_COLUMNS}) FROM STDIN") as copy,
                ):
                    await copy.write(encoded[id(batch)])
        return count / (time.perf_counter() - started)
    finally:
        await conn.close()


_COLUMNS: Final = "table_id, seq, ts, type, round, hash, prev_hash, record, raw"


def _copy_text(value: str) -> str:
    return (
        value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    )


def _copy_line(r: Incoming) -> bytes:
    """One row in COPY's text format."""
    fields = [r.table_id, str(r.seq), r.ts.isoformat(), r.type, r.round, r.hash, r.prev_hash]
    text = [_copy_text(f) if f is not None else "\\N" for f in fields]
    text += [_copy_text(r.raw.decode()), "\\\\x" + r.raw.hex()]
    return ("\t".join(text) + "\n").encode()


def _values(r: Incoming) -> tuple[Any, ...]:
    return (r.table_id, r.seq, r.ts, r.type, r.round, r.hash, r.prev_hash, r.raw.decode(), r.raw)


async def _insert(conn: psycopg.AsyncConnection[Any], batch: list[Incoming]) -> None:
    marks = ",".join(["(%s,%s,%s,%s,%s,%s,%s,%s::jsonb,%s)"] * len(batch))
    params = [v for r in batch for v in _values(r)]
    statement = f"INSERT INTO records ({_COLUMNS}) VALUES {marks} ON CONFLICT DO NOTHING"  # noqa: S608 - placeholders only
    async with conn.transaction():
        await conn.execute(statement, params)


async def _insert_latency(dsn: str, rounds: int) -> list[int]:
    conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    try:
        await conn.execute("CREATE TABLE one (seq bigint PRIMARY KEY, body text)")
        samples = []
        for seq in range(rounds + 20):
            t0 = time.perf_counter_ns()
            await conn.execute("INSERT INTO one VALUES (%s, %s)", (seq, "x" * 320))
            if seq >= 20:
                samples.append(time.perf_counter_ns() - t0)
        return samples
    finally:
        await conn.close()


def _archiver(broker: Broker, dsn: str, log: Path) -> subprocess.Popen[bytes]:
    args = ["archive", "--url", broker.url, "--dsn", dsn, "--prefix", PREFIX, "--name", "bench-1"]
    args += ["--gap-timeout", "30", "--probe-after", "3600"]
    return start_module("tablectl", ["--log-format", "json", *args], log)


async def _until_online(broker: Broker, proc: subprocess.Popen[bytes]) -> None:
    online = asyncio.Event()

    def on_message(_topic: str, payload: bytes, _t: int) -> None:
        if json.loads(payload).get("state") == "online":
            online.set()

    async with Subscriber(
        broker.host, broker.port, [f"{PREFIX}/_archive/bench-1/status"], on_message
    ):
        deadline = time.monotonic() + 30
        while not online.is_set():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the archiver did not come online (see archiver.log)")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(online.wait(), 0.2)


def _count(dsn: str, like: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT count(*) FROM records WHERE table_id LIKE %s", (like,)
        ).fetchone()
        return int(row[0]) if row else 0


async def _until_stored(dsn: str, like: str, total: int, within: float) -> None:
    deadline = time.monotonic() + within
    while (n := await asyncio.to_thread(_count, dsn, like)) < total:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the archive holds {n} of {total} records after {within:g} s")
        await asyncio.sleep(0.05)


def _stored_rate(dsn: str, like: str) -> float:
    """Records/s the archiver stored, from the rows' own ``archived_at`` (each batch's
    transaction start): the records after the first batch over the time from the first batch
    to the last — the archiver's pace, not its start-up's."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE archived_at = (SELECT min(archived_at)"
            " FROM records WHERE table_id LIKE %s)),"
            " extract(epoch FROM max(archived_at) - min(archived_at))"
            " FROM records WHERE table_id LIKE %s",
            (like, like),
        ).fetchone()
    assert row is not None
    total, first, span = int(row[0]), int(row[1]), float(row[2])
    return (total - first) / span if span > 0 else float("nan")


def _tables(
    broker: Broker, workdir: Path, kind: str, tables: int, *extra: str
) -> subprocess.Popen[bytes]:
    args = ["tables", "--url", broker.url, "--dir", str(workdir / kind), "--kind", kind]
    return start_module(
        "bench.archive", [*args, "--tables", str(tables), *extra], workdir / f"{kind}.log"
    )


def _wait_line(proc: subprocess.Popen[bytes], word: str, timeout: float) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline().decode().strip()
        if line.startswith(word):
            return line
        if not line and proc.poll() is not None:
            break
    raise RuntimeError(f"the tables process did not say {word} (see its log)")


async def _floors_and_ingest(pg: Postgres, broker: Broker, plan: dict[str, int]) -> dict[str, Any]:
    step("floors")
    insert = summarize_ms(await _insert_latency(pg.new_database(), plan["floor_rounds"]))
    hop = summarize_ms(await mqtt_hop(broker, plan["floor_rounds"]))
    batches = _batches(plan["ingest_tables"], plan["ingest_per_table"])
    step("ingest: bare COPY, the archive's COPY, multi-row INSERT")
    best: dict[str, float] = {}
    for _ in range(plan["repeats"]):  # interleaved, best of each: a shared machine is noisy
        for how in ("copy", "ingest", "insert"):
            rate = await _rate(pg.new_database(), batches, how)
            best[how] = max(best.get(how, 0.0), rate)
    bare, copy, multi = best["copy"], best["ingest"], best["insert"]
    return {
        "floors": {
            "pg_insert_commit": insert,
            "mqtt_qos1_hop": hop,
            "pg_bare_copy_rows_per_s": round(bare),
        },
        "ingest": {
            "records": sum(len(b) for b in batches),
            "batch": BATCH,
            "copy_records_per_s": round(copy),
            "insert_records_per_s": round(multi),
            "copy_over_insert": round(copy / multi, 2),
            "copy_over_bare_copy": round(copy / bare, 3),
        },
    }


async def _through_mqtt(
    dsn: str, broker: Broker, workdir: Path, plan: dict[str, int]
) -> dict[str, Any]:
    """The drain and lag phases, through the broker into one ``tablectl archive`` process."""
    log = workdir / "archiver.log"
    step("drain: a queued backlog into one archiver")
    archiver = _archiver(broker, dsn, log)
    try:
        await _until_online(broker, archiver)
    finally:
        stop_process(archiver)  # its session stays on the broker: the backlog queues there
    tables, per_table = plan["drain_tables"], plan["drain_per_table"]
    backlog = _tables(broker, workdir, "DRN", tables, "--backlog", str(per_table))
    try:
        _wait_line(backlog, "DONE", 300)
    finally:
        stop_process(backlog)
    archiver = _archiver(broker, dsn, log)
    try:
        await _until_stored(dsn, "DRN-%", tables * per_table, 300)
        # On a shared machine check these before trusting the figure (bench/README.md).
        cpu = proc_cpu_seconds(archiver.pid)
        waited = proc_runqueue_wait_seconds(archiver.pid)
        step(f"lag: {plan['lag_tables']} tables × {plan['lag_rate']}/s, {plan['lag_seconds']} s")
        paced = ["--rate", str(plan["lag_rate"]), "--seconds", str(plan["lag_seconds"])]
        lag_tables = _tables(broker, workdir, "LAG", plan["lag_tables"], *paced)
        try:
            done = _wait_line(lag_tables, "DONE", 120 + plan["lag_seconds"])
        finally:
            stop_process(lag_tables)
        appended = int(done.split()[1])
        await _until_stored(dsn, "LAG-%", appended, 60)
    finally:
        stop_process(archiver)
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT extract(epoch FROM archived_at - ts) FROM records WHERE table_id LIKE 'LAG-%'"
        ).fetchall()
    return {
        "drain": {
            "records": tables * per_table,
            "tables": tables,
            "records_per_s": round(_stored_rate(dsn, "DRN-%")),
            "archiver_cpu_s": round(cpu, 2),
            "archiver_runqueue_wait_s": round(waited, 2),
        },
        "lag": {**summarize_ms([int(float(r[0]) * 1e9) for r in rows]), "records": appended},
    }


async def measure(plan: dict[str, int], workdir: Path) -> dict[str, Any]:
    """Every phase; the figures as a dict (JSON-ready), verdicts included."""
    with Postgres() as pg, Broker(workdir / "mosquitto") as broker:
        results = await _floors_and_ingest(pg, broker, plan)
        results |= await _through_mqtt(pg.new_database(), broker, workdir, plan)
    floors = results["floors"]
    results["lag"]["floor_ms"] = round(
        floors["mqtt_qos1_hop"]["p50_ms"] + floors["pg_insert_commit"]["p50_ms"], 3
    )
    figures = {
        "drain_records_per_s": results["drain"]["records_per_s"],
        "lag_p99_ms": results["lag"]["p99_ms"],
    }
    results["targets"] = [
        {
            "target": name,
            "value": figures[key],
            "unit": unit,
            "limit": f"{op} {limit:g}",
            "met": figures[key] >= limit if op == ">=" else figures[key] <= limit,
        }
        for name, key, unit, op, limit in TARGETS
    ]
    return results


def render(results: dict[str, Any]) -> str:
    """The figures table: value, ratio to its floor, verdict."""
    f, i, d, lag = results["floors"], results["ingest"], results["drain"], results["lag"]
    verdict = {
        t["target"]: f"{'met' if t['met'] else 'NOT MET'} ({t['limit']})"
        for t in results["targets"]
    }
    bare, floor = f["pg_bare_copy_rows_per_s"], lag["floor_ms"]

    def rate(value: float) -> tuple[str, str]:
        return f"{value:,.0f} records/s", f"{value / bare:.2f}×"

    rows = [
        (
            "floor: PostgreSQL INSERT committed (p50)",
            f"{f['pg_insert_commit']['p50_ms']:.3f} ms",
            "",
        ),
        ("floor: Mosquitto QoS 1 hop (p50)", f"{f['mqtt_qos1_hop']['p50_ms']:.3f} ms", ""),
        ("floor: bare COPY into an unindexed table", f"{bare:,} rows/s", "1.0×"),
        ("ingest: COPY + INSERT … SELECT (the archive's)", *rate(i["copy_records_per_s"])),
        ("ingest: multi-row INSERT … ON CONFLICT", *rate(i["insert_records_per_s"])),
        ("ingest: COPY / multi-row INSERT", f"{i['copy_over_insert']:.2f}×", ""),
        (f"archiver: {d['records']:,} queued via MQTT", *rate(d["records_per_s"])),
        (
            "lag journal → archive row p50",
            f"{lag['p50_ms']:.1f} ms",
            f"{lag['p50_ms'] / floor:.1f}×",
        ),
        (
            "lag journal → archive row p99",
            f"{lag['p99_ms']:.1f} ms",
            f"{lag['p99_ms'] / floor:.1f}×",
        ),
    ]
    verdicts = ["", "", "", "", "", "", verdict[TARGETS[0][0]], "", verdict[TARGETS[1][0]]]
    table = [("figure", "value", "× floor", "verdict")]
    table += [(*row, v) for row, v in zip(rows, verdicts, strict=True)]
    widths = [max(len(r[c]) for r in table) for c in range(4)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in table
    )


_STARTED = time.perf_counter()


def step(name: str) -> None:
    print(f"[{time.perf_counter() - _STARTED:6.1f} s] archive: {name}", file=sys.stderr, flush=True)


FULL: Final = {
    "floor_rounds": 500, "repeats": 3, "ingest_tables": 50, "ingest_per_table": 2000,
    "drain_tables": 8, "drain_per_table": 5000, "lag_tables": 8, "lag_rate": 50, "lag_seconds": 20,
}  # fmt: skip
QUICK: Final = {
    "floor_rounds": 100, "repeats": 1, "ingest_tables": 20, "ingest_per_table": 500,
    "drain_tables": 4, "drain_per_table": 1000, "lag_tables": 4, "lag_rate": 25, "lag_seconds": 3,
}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bench archive``: run every phase, print the table, write the JSON."""
    parser = argparse.ArgumentParser(
        prog="python -m bench archive", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: few samples, < 60 s")
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        help="figures (default: bench/results/archive-<UTC>.json)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="tablectl-bench-archive-"))
    plan = QUICK if args.quick else FULL
    try:
        results = asyncio.run(measure(plan, workdir))
    finally:
        if args.keep:
            print(f"work directory kept: {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    results |= {
        "schema": 1,
        "quick": args.quick,
        "plan": plan,
        "machine": machine_info(),
        "load_average": load_average(),
    }
    out = (
        args.json or REPO / "bench" / "results" / f"archive-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(render(results))
    print(f"figures written to {out}")
    return 0


# --- the tables' side: ``python -m bench.archive tables …`` ---------------------------------------


async def run_tables(args: argparse.Namespace) -> None:
    """Tables as the service runs them: a journal each (fsync'd), drained by the real publisher."""
    from tablectl.controller.config import MqttConfig  # noqa: PLC0415
    from tablectl.controller.journal import Journal  # noqa: PLC0415
    from tablectl.controller.mqtt.publisher import Publisher, broker_address  # noqa: PLC0415
    from tablectl.controller.mqtt.topics import Topics  # noqa: PLC0415

    host, port, _tls = broker_address(args.url)
    args.dir.mkdir(parents=True, exist_ok=True)
    names = [f"{args.kind}-{t:03d}" for t in range(args.tables)]
    journals = [Journal(args.dir / f"{name}.sqlite", name) for name in names]
    for journal in journals:
        for start in range(0, args.backlog, BATCH):
            count = min(BATCH, args.backlog - start)
            journal.append([_event(start + n, format_ts(time.time())) for n in range(count)])
    appended = args.backlog * len(journals)
    config = MqttConfig(url=args.url, topic_prefix=PREFIX)
    async with contextlib.AsyncExitStack() as stack:
        publishers = [
            await stack.enter_async_context(
                Publisher(config, Topics(PREFIX, name), journal, host=host, port=port)
            )
            for name, journal in zip(names, journals, strict=True)
        ]
        for publisher in publishers:
            await publisher.wait_connected()
        print("READY", flush=True)
        period = 1.0 / args.rate if args.rate else 0.0
        ticks = int(args.seconds * args.rate)
        begin = time.perf_counter()
        for tick in range(ticks):
            delay = begin + tick * period - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            for journal, publisher in zip(journals, publishers, strict=True):
                journal.append([_event(tick, format_ts(time.time()))])
                publisher.notify()
                appended += 1
        while any(j.unpublished(1) for j in journals):  # noqa: ASYNC110 - the outbox has no event
            await asyncio.sleep(0.02)
    for journal in journals:
        journal.close()
    print(f"DONE {appended}", flush=True)


def _tables_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.archive tables")
    parser.add_argument("--url", required=True)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--kind", default="TBL")
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--backlog", type=int, default=0)
    parser.add_argument("--rate", type=float, default=0.0, help="records/s per table")
    parser.add_argument("--seconds", type=float, default=0.0)
    asyncio.run(run_tables(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["tables"]:
        sys.exit(_tables_main(sys.argv[2:]))
    sys.exit(main(sys.argv[1:]))
