"""The fault suite's machinery: tables as real processes, a collector, the invariant checks.

Why real processes: the promises under test ("kill -9 at any point", "broker down", "disk full")
are about what survives a dead process and a half-written file, which no in-process test can fake.
A :class:`Lane` is one table: ``tablectl simulate ss2`` (the wheel) + ``tablectl run`` (the
controller, restarted by the harness the way systemd's ``Restart=on-failure`` would) with its own
journal and table id, so several lanes share one broker and run in parallel on two cores.

The :class:`Collector` is the consumer: one MQTT session on the real broker that sees every table's
``events``. Controllers reach the broker through a :class:`~tests.support.mqtt.TcpProxy` where an
outage must not cut the collector too, and a real broker restart reconnects the collector before
the proxies let the controllers back in, so the collector misses nothing it should see.

:func:`check_lane` is the contract (contracts §3, §7; issue 5): the journal's ``seq`` is contiguous
and its hash chain verifies; every journaled record is published; every published payload is byte
for byte the journal's record for that ``seq`` (so no seq is published with two contents, and
nothing is published that was never journaled); no round has two outcomes. A journal that rotated
(a clock stepped by days: ``rotate_days``) is read across its files (:func:`read_journal`).

Clocks (the clock-step lane): :func:`faketime_env` runs a controller under libfaketime with its
wall-clock offset read from a file the test rewrites — across restarts or while it runs — and
``CLOCK_BOOTTIME`` left real, so the controller's clock watch sees a stepped clock as a machine
would.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiomqtt

from tablectl.controller.journal import GENESIS_HASH, Journal, record_hash
from tablectl.controller.journal.files import list_archives
from tablectl.simulators.ss2 import DEFAULT_MODE
from tests.support.live_journal import read_rows
from tests.support.processes import REPO, end_process, log_tail, write_config

__all__ = [
    "BACK",
    "PREFIX",
    "Collector",
    "FaultReport",
    "GarbageRelay",
    "Lane",
    "alive",
    "check_lane",
    "check_roulette_rounds",
    "faketime_env",
    "faketime_library",
    "power_ons",
    "progress",
    "read_journal",
    "round_in_play",
    "set_clock_offset",
    "split_rounds",
    "wait_power_on",
]

PREFIX = "it"
"""The topic prefix :func:`tests.support.processes.write_config` gives every table."""


# --- the report --------------------------------------------------------------------------------


@dataclass
class FaultReport:
    """What was injected and what was checked, for the end-of-run table."""

    injected: Counter[str] = field(default_factory=Counter)
    checked: Counter[str] = field(default_factory=Counter)
    observed: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def inject(self, kind: str, n: int = 1) -> None:
        self.injected[kind] += n

    def check(self, what: str, n: int = 1) -> None:
        self.checked[what] += n

    def observe(self, what: str, n: int = 1) -> None:
        self.observed[what] += n

    @property
    def total_injected(self) -> int:
        return sum(self.injected.values())

    def lines(self) -> list[str]:
        width = max([len(k) for k in (*self.injected, *self.checked, *self.observed)] + [30])
        out = [f"{'injected':<{width}}  count"]
        out += [f"  {k:<{width - 2}}  {v:>5}" for k, v in sorted(self.injected.items())]
        out.append(f"  {'TOTAL crashes/outages':<{width - 2}}  {self.total_injected:>5}")
        out.append(f"{'invariant checked':<{width}}  times")
        out += [f"  {k:<{width - 2}}  {v:>5}" for k, v in sorted(self.checked.items())]
        if self.observed:
            out.append(f"{'observed':<{width}}  count")
            out += [f"  {k:<{width - 2}}  {v:>5}" for k, v in sorted(self.observed.items())]
        if self.seconds:
            out.append("wall time: " + ", ".join(f"{k} {v:.0f}s" for k, v in self.seconds.items()))
        verdict = "ALL INVARIANTS OK" if not self.failures else f"{len(self.failures)} FAILED"
        out.append(verdict)
        out += [f"  FAILED: {f}" for f in self.failures]
        return out


# --- the consumer ------------------------------------------------------------------------------


class Collector:
    """Every payload seen on ``{PREFIX}/+/events``, per table and ``seq`` (duplicates kept)."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.events: dict[str, dict[int, list[bytes]]] = defaultdict(lambda: defaultdict(list))
        self.other: dict[str, list[tuple[str, bytes]]] = defaultdict(list)
        self.arrivals: list[tuple[str, str, bytes]] = []
        """Every message as ``(table, topic below the table, payload)``, in arrival order (across
        topics, which ``events`` and ``other`` do not keep)."""
        self._client: aiomqtt.Client | None = None
        self._reader: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        self.lost: str | None = None
        """Why the collector's own connection ended when nobody disconnected it: what it then
        misses is the harness's loss, not the controllers' (named by :meth:`wait`)."""

    async def connect(self) -> None:
        client = aiomqtt.Client(self.host, self.port, identifier="fault-collector", timeout=5)
        await client.__aenter__()
        await client.subscribe(f"{PREFIX}/#", qos=1)
        self._client, self.lost = client, None
        self._reader = asyncio.create_task(self._read(client), name="fault-collector")

    async def disconnect(self) -> None:
        reader, client = self._reader, self._client
        self._reader = self._client = None
        if reader is not None:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        if client is not None:
            with contextlib.suppress(aiomqtt.MqttError):
                await client.__aexit__(None, None, None)

    async def _read(self, client: aiomqtt.Client) -> None:
        try:
            await self._receive(client)
        except aiomqtt.MqttError as exc:
            self.lost = str(exc) or type(exc).__name__
            self._changed.set()

    async def _receive(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            topic = message.topic.value
            raw = message.payload
            data = raw if isinstance(raw, bytes) else str(raw).encode()
            parts = topic.split("/")
            if len(parts) >= 3:
                self.arrivals.append((parts[1], "/".join(parts[2:]), data))
            if len(parts) == 3 and parts[2] == "events":
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    self.events[parts[1]][int(json.loads(data)["seq"])].append(data)
            elif len(parts) >= 3:
                self.other[parts[1]].append(("/".join(parts[2:]), data))
            self._changed.set()

    def seqs(self, table: str) -> set[int]:
        return set(self.events[table])

    async def wait(self, predicate: Any, timeout: float, what: str) -> None:  # noqa: ASYNC109
        """Wait until ``predicate()`` holds (re-checked on every message and every 50 ms)."""
        deadline = time.monotonic() + timeout
        while not predicate():
            left = deadline - time.monotonic()
            if left <= 0:
                lost = (
                    f" (the collector's own connection was lost: {self.lost})" if self.lost else ""
                )
                raise AssertionError(f"timed out after {timeout}s waiting for {what}{lost}")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(left, 0.05))

    async def quiet(self, seconds: float, timeout: float = 10.0) -> None:  # noqa: ASYNC109
        """Wait until no message has arrived for ``seconds`` (bounded by ``timeout``).

        The broker forwards a publish to its subscribers as it acknowledges it, so once the
        publishers are cut off and the stream has gone quiet, everything the broker accepted has
        reached this consumer: stopping the broker then loses nothing the controllers consider
        delivered.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), seconds)
            except TimeoutError:
                return
        raise AssertionError(f"messages still arriving {timeout}s after the publishers were cut")

    def settled_after(self, table: str, seq: int) -> bool:
        for s, payloads in self.events[table].items():
            if s > seq and any(b'"status":"settled"' in p for p in payloads):
                return True
        return False


# --- the journal -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    seq: int
    body: bytes
    prev_hash: str
    hash: str


def read_journal(path: Path) -> list[Row]:
    """Every row of the journal whose live file is ``path``, its rotated files first, read beside
    a live writer (WAL readers never block it). A rotation between listing the rotated files and
    reading the live one is read again."""
    for _ in range(10):
        archives = [a.path for a in list_archives(path)]
        try:
            rows = [row for file in [*archives, path] for row in _read_file(file)]
        except sqlite3.DatabaseError:
            # The live file renamed under the reader (a rotation): "disk I/O error", or the old
            # file read with the new one's WAL: "malformed". Again.
            time.sleep(0.05)
            continue
        if [a.path for a in list_archives(path)] == archives:
            return rows
    raise AssertionError(f"{path}: rotating while read, ten times over")


def _read_file(path: Path) -> list[Row]:
    """Every row of one journal file (``[]`` when it does not exist yet, or was just rotated
    away), read-only (:mod:`tests.support.live_journal` says why)."""
    rows = read_rows(path, "SELECT seq, body, prev_hash, hash FROM records ORDER BY seq")
    return [Row(int(s), str(b).encode("utf-8"), str(p), str(h)) for s, b, p, h in rows]


def records(rows: Iterable[Row]) -> Iterator[dict[str, Any]]:
    for row in rows:
        record: dict[str, Any] = json.loads(row.body)
        yield record


def check_journal(rows: list[Row], report: FaultReport) -> None:
    """``seq`` is 1..n without a gap; each record links to the previous one and hashes right."""
    seqs = [r.seq for r in rows]
    assert seqs == list(range(1, len(rows) + 1)), f"seq not contiguous: {_gaps(seqs)}"
    report.check("journal seq contiguous")
    prev = GENESIS_HASH
    for row in rows:
        record = json.loads(row.body)
        assert record["prev_hash"] == row.prev_hash == prev, f"broken link at seq {row.seq}"
        assert record_hash(prev, record) == row.hash == record["hash"], f"bad hash at {row.seq}"
        prev = row.hash
    report.check("hash chain verifies")


def _gaps(seqs: list[int]) -> str:
    missing = sorted(set(range(1, max(seqs, default=0) + 1)) - set(seqs))
    return f"missing {missing[:10]}, {len(seqs)} rows"


async def check_lane(
    lane: Lane,
    collector: Collector,
    report: FaultReport,
    *,
    timeout: float = 20.0,  # noqa: ASYNC109 - a bound on one wait, named in the failure
) -> list[Row]:
    """The invariants for one table after an injection (the controller must be running)."""
    rows = read_journal(lane.journal)
    check_journal(rows, report)
    wanted = {r.seq for r in rows}
    try:
        await collector.wait(
            lambda: wanted <= collector.seqs(lane.table),
            timeout,
            f"{lane.table}: journal seqs published",
        )
    except AssertionError:
        missing = sorted(wanted - collector.seqs(lane.table))
        raise AssertionError(
            f"{lane.table}: journaled but not published: {missing[:20]} "
            f"(of {len(missing)})\n{lane.log_tail()}"
        ) from None
    report.check("every journaled record published")
    check_published(lane, collector, report, rows)
    return rows


def check_published(lane: Lane, collector: Collector, report: FaultReport, rows: list[Row]) -> None:
    """Each published payload is exactly the journal's record for its seq; one outcome a round."""
    by_seq = {r.seq: r.body for r in rows}
    for seq, payloads in collector.events[lane.table].items():
        if seq not in by_seq:
            # Published after ``rows`` was read: check it against a fresh read.
            by_seq = {r.seq: r.body for r in read_journal(lane.journal)}
        assert seq in by_seq, f"{lane.table}: seq {seq} published but never journaled"
        for payload in payloads:
            assert payload == by_seq[seq], (
                f"{lane.table}: seq {seq} published as {payload[:120]!r}, "
                f"journaled as {by_seq[seq][:120]!r}"
            )
    report.check("published == journaled (same seq, same bytes, same hash)")
    outcomes = Counter(r["round"] for r in records(rows) if r["type"] == "outcome")
    twice = [k for k, n in outcomes.items() if n > 1]
    assert not twice, f"{lane.table}: rounds with two outcomes: {twice}"
    report.check("one outcome per round")


def split_rounds(
    found: Iterable[dict[str, Any]],
) -> tuple[list[tuple[dict[str, Any], list[dict[str, Any]]]], list[dict[str, Any]]]:
    """The journal cut into rounds: ``(outcome, the round's records)`` for each outcome, and the
    records of the round still in play after the last one (with what else followed it).

    A round runs from the end of the previous one to its outcome. The end is not the previous
    ``outcome`` record itself: a group commit journals a batch's events before their
    conclusions, so ``winning_number``, the next ``round_open``, then the first round's
    ``outcome`` is a normal order. A round ends at the event its outcome concludes (the last
    record before the outcome with the outcome's ``ts``); what follows belongs to the next round.
    Events read together share a ``ts``, so that alone cannot tell the ending event from the next
    round's ``round_open`` read with it: a ``round_open`` after the ending event opens the next
    round (and the one that abandons a round, ``round_abandoned``, is the next round's own).
    """
    done: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    pending: list[dict[str, Any]] = []
    for record in found:
        kind = record["type"]
        if kind == "power_on" and record.get("interrupted") is None:
            pending = []  # nothing in play at the restart: whatever was half-journaled is gone
        if kind != "outcome":
            pending.append(record)
            continue
        same = [i for i, r in enumerate(pending) if r.get("ts") == record.get("ts")]
        end = same[-1] + 1 if same else len(pending)
        past_the_end = record.get("reason") == "round_abandoned"
        for index in same:
            if pending[index]["type"] != "round_open":
                past_the_end = True
            elif past_the_end:
                end = index
                break
        done.append((record, pending[:end]))
        pending = pending[end:]
    return done, pending


def round_in_play(found: Iterable[dict[str, Any]]) -> bool:
    """Whether these records leave a round open (a ``round_open`` after the last round ended)."""
    _, pending = split_rounds(found)
    return any(r["type"] == "round_open" for r in pending)


def check_roulette_rounds(rows: Iterable[Row], report: FaultReport) -> None:
    """Each settled roulette round was played on one spin, journaled from its open to its result.

    A round (:func:`split_rounds`): its own ``round_open`` is the first one after the previous
    round ended (any later one was refused while it was in play). A settled outcome needs that
    ``round_open``, a ``ball_launched`` and a ``winning_number`` in the round, all of the
    outcome's spin (``result.wheel_spin``) wherever the records carry one. And no journal outage
    (a ``journal_unavailable`` fault) lies between its open and its outcome: the round that was
    in play when the journal stopped writing must never settle on a later spin's result (the
    spins the journal missed were never seen by the table), it is voided ``journal_outage`` when
    writing resumes.
    """
    settled = 0
    for record, ended in split_rounds(records(rows))[0]:
        if record.get("status") != "settled" or record.get("game") != "roulette":
            continue
        result = record.get("result") or {}
        spin = result.get("wheel_spin")
        where = (
            f"{record.get('table')}: round {record.get('round')} (seq {record['seq']}; the round's "
            f"records: {_brief(ended)})"
        )
        opens = [r for r in ended if r["type"] == "round_open"]
        assert opens, f"{where} settled without a round_open journaled in it"
        opened = opens[0]
        assert _same_spin(opened, spin), (
            f"{where} settled with spin {spin}'s result but opened at spin {opened.get('spin')} "
            f"(round_open seq {opened['seq']})"
        )
        after_open = [r for r in ended if r["seq"] > opened["seq"]]
        assert any(r["type"] == "ball_launched" and _same_spin(r, spin) for r in after_open), (
            f"{where} settled on spin {spin} without that spin's ball_launched journaled"
        )
        numbers = [r for r in after_open if r["type"] == "winning_number" and _same_spin(r, spin)]
        assert any(r.get("number") == result.get("number") for r in numbers), (
            f"{where} settled on {result.get('number')} (spin {spin}) without that "
            f"winning_number journaled in the round"
        )
        outages = [
            r["seq"]
            for r in after_open
            if r["type"] == "fault" and r.get("code") == "journal_unavailable"
        ]
        assert not outages, (
            f"{where} opened at seq {opened['seq']} before a journal outage (fault at seq "
            f"{outages[0]}) and settled after it"
        )
        settled += 1
    report.check("settled round: own round_open, launch and result, one spin", settled)
    report.check("no round open across a journal outage settled")


def _brief(found: list[dict[str, Any]]) -> str:
    """``seq:type[@spin]`` of each record, for a failure message."""
    return " ".join(
        f"{r['seq']}:{r['type']}" + (f"@{r['spin']}" if r.get("spin") is not None else "")
        for r in found[-30:]
    )


def _same_spin(record: dict[str, Any], spin: object) -> bool:
    """The record is of ``spin``, or one of them does not say (a device without spin numbers)."""
    theirs = record.get("spin")
    return spin is None or theirs is None or theirs == spin


# --- play goes on ---------------------------------------------------------------------------

BACK = "service back without a human (new settled round)"


async def progress(
    lane: Lane,
    collector: Collector,
    report: FaultReport,
    timeout: float = 30,  # noqa: ASYNC109
) -> None:
    """The table plays again: a round settles after everything journaled so far."""
    rows = read_journal(lane.journal)
    last = rows[-1].seq if rows else 0
    try:
        await collector.wait(lambda: collector.settled_after(lane.table, last), timeout, BACK)
    except AssertionError as exc:
        raise AssertionError(f"{lane.table}: {exc}\n{lane.log_tail()}") from None
    report.check(BACK)


def alive(lane: Lane, report: FaultReport) -> None:
    """The controller is still running (did not exit by itself)."""
    assert lane.ctl is not None
    code = lane.ctl.poll()
    assert code is None, f"{lane.table}: controller exited by itself ({code})\n{lane.log_tail()}"
    report.check("controller process survived the injection")


def power_ons(lane: Lane) -> int:
    """``power_on`` records in the lane's journal (one per start that got that far)."""
    return sum(1 for r in records(read_journal(lane.journal)) if r["type"] == "power_on")


async def wait_power_on(lane: Lane, before: int, timeout: float = 20) -> None:  # noqa: ASYNC109
    """Wait for the controller's ``power_on`` (more than ``before`` of them)."""
    deadline = time.monotonic() + timeout
    while power_ons(lane) <= before:
        if lane.ctl is not None and lane.ctl.poll() is not None:
            raise AssertionError(f"{lane.table}: controller died at start\n{lane.log_tail()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{lane.table}: no power_on within {timeout}s\n{lane.log_tail()}")
        await asyncio.sleep(0.05)


# --- processes ---------------------------------------------------------------------------------


_CONTROLLER = (sys.executable, "-m", "tablectl")


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    extra = dict(extra or {})
    paths = [str(REPO), extra.pop("PYTHONPATH", ""), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


_FAKETIME_LIBRARIES = (
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
    "/usr/lib/faketime/libfaketimeMT.so.1",
    "/usr/local/lib/faketime/libfaketimeMT.so.1",
)


def faketime_library() -> str | None:
    """libfaketime's multi-threaded preload library (Debian's ``libfaketime``), or ``None``."""
    found = [p for p in _FAKETIME_LIBRARIES if Path(p).is_file()]
    found += sorted(str(p) for p in Path("/usr/lib").glob("*/faketime/libfaketimeMT.so.1"))
    return found[0] if found else None


def faketime_env(offset_file: Path) -> dict[str, str]:
    """The environment that runs a process under libfaketime, its wall-clock offset read from
    ``offset_file`` (``+0``, ``-3d``, ``+100d``, ``+90``: seconds) at every reading of the clock
    (``FAKETIME_NO_CACHE``: about 2 µs a call) — so a test steps the clock of a running
    controller by rewriting the file, and the step is seen at once.

    ``CLOCK_MONOTONIC`` and ``CLOCK_BOOTTIME`` stay real (``FAKETIME_DONT_FAKE_MONOTONIC``): the
    clock watch (tablectl.controller.service.clock) must see a step, as on a real machine. (In
    libfaketime 0.9.10 ``time.sleep`` then fails with EINVAL — an absolute monotonic
    ``clock_nanosleep`` — which the controller never calls: it sleeps on its event loop.)

    Raises:
        AssertionError: libfaketime is not installed (the callers skip first).
    """
    library = faketime_library()
    assert library is not None, "libfaketime is not installed (Debian: apt-get install faketime)"
    return {
        "LD_PRELOAD": library,
        "FAKETIME_TIMESTAMP_FILE": str(offset_file),
        "FAKETIME_NO_CACHE": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }


class Lane:
    """One table: a simulated wheel and a controller that the test kills and restarts.

    Args:
        name: the table id suffix (``FT-{name}``).
        workdir: config, logs, and (unless ``journal`` is given) the journal.
        broker_url: where the controller connects (a proxy's port for outage tests).
        sim_args: extra ``simulate ss2`` arguments (faults, seed).
        tcp: serve the wheel on TCP (``socket://``) instead of a pty with a stable link.
        journal: journal path (a small filesystem for disk-full tests).
        device_options: more ``[[devices]]`` lines for the wheel (``sensor_stream = true``).
        extra_config: TOML appended to the config file (a ``[metrics]`` section).
        security: the ``[security]`` section's body (default: a lab's unsigned commands).
        env: more environment for the controller (:func:`faketime_env`, a plugin's folder on
            ``PYTHONPATH``); read at each start, so a test may change it between starts.
    """

    def __init__(
        self,
        name: str,
        workdir: Path,
        broker_url: str,
        *,
        sim_args: Iterable[str] = (),
        speed: str = "50",
        tcp: bool = False,
        journal: Path | None = None,
        port_override: str | None = None,
        verbose: bool = False,
        device_options: str = "",
        extra_config: str = "",
        security: str = "insecure_commands = true",
        env: dict[str, str] | None = None,
    ) -> None:
        self.table = f"FT-{name}"
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.link = workdir / "wheel"
        self.journal = journal or workdir / "journal.sqlite"
        self.sim_args = ["--speed", speed, *sim_args]
        self.tcp = tcp
        self.sim: subprocess.Popen[bytes] | None = None
        self.sim_where = ""
        self.ctl: subprocess.Popen[bytes] | None = None
        self.ctl_log = workdir / "controller.log"
        self.sim_log = workdir / "simulator.log"
        self.broker_url = broker_url
        self.port_override = port_override
        self.starts = 0
        self.verbose = verbose
        self.device_options = device_options
        self.extra_config = extra_config
        self.security = security
        self.env = dict(env or {})

    # -- the wheel ---------------------------------------------------------------------------

    def start_sim(self, extra: Iterable[str] = ()) -> None:
        where = ["--tcp", "127.0.0.1:0"] if self.tcp else ["--pty", "--link", str(self.link)]
        args = [*where, *self.sim_args, *extra]
        with self.sim_log.open("ab") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "tablectl", "simulate", "ss2", *args],
                stdout=subprocess.PIPE,
                stderr=err,
                stdin=subprocess.DEVNULL,
                env=_env(),
                cwd=REPO,
            )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith(b"READY "):
            proc.kill()
            raise AssertionError(f"simulator not ready: {line!r}\n{log_tail(self.sim_log)}")
        self.sim = proc
        self.sim_where = line.decode().split(" ", 2)[2].strip()

    def kill_sim(self) -> None:
        """SIGKILL the wheel, then drop its pty link as its own exit would have: a killed
        simulator leaves the link at ``/dev/pts/N``, the kernel gives N to the next pty opened
        (another lane's wheel, a test's), and this lane's controller, reopening its link, took
        that wheel (seen: a roulette test's controller locked out of its own port for 5 s)."""
        _kill(self.sim, signal.SIGKILL)
        self.sim = None
        if self.link.is_symlink():
            self.link.unlink(missing_ok=True)

    # -- the controller ----------------------------------------------------------------------

    def write_config(self, port: str | None = None) -> Path:
        where = port or self.port_override or str(self.link)
        path = write_config(
            self.workdir / "table.toml",
            table=self.table,
            port=where,
            mqtt_url=self.broker_url,
            journal=self.journal,
            # The mode command on connect is also what releases a --wait-for-host wheel.
            device=f"operating_mode = {DEFAULT_MODE}\n{self.device_options}",
            # Checkpoints every few records, so a kill -9 restart resumes from one with a tail
            # to replay (the production default, 10,000, would never be reached here).
            journal_options="checkpoint_every = 7",
            security=self.security,
        )
        if self.extra_config:
            with path.open("a", encoding="utf-8") as out:
                out.write(f"\n{self.extra_config}\n")
        return path

    def start_ctl(self) -> None:
        """Start the controller (as systemd would after a crash)."""
        config = self.workdir / "table.toml"
        if not config.exists():
            self.write_config()
        with self.ctl_log.open("ab") as err:
            self.ctl = subprocess.Popen(
                [
                    *_CONTROLLER,
                    "--log-format",
                    "json",
                    *(["-v"] if self.verbose else []),
                    "run",
                    "--config",
                    str(config),
                ],
                stdout=subprocess.DEVNULL,
                stderr=err,
                stdin=subprocess.DEVNULL,
                env=_env(self.env),
                cwd=REPO,
            )
        self.starts += 1

    def kill_ctl(self, sig: int = signal.SIGKILL) -> int | None:
        code = _kill(self.ctl, sig)
        self.ctl = None
        return code

    async def stop_ctl(self) -> int | None:
        """SIGTERM, and wait for the orderly stop in a thread. Waiting on the test's own event
        loop would freeze what runs there — the TCP proxies between the controller and the
        broker, the collector — so the controller's final flush would get no PUBACK and its
        last records would reach the broker only after it had given up (found by the broker
        lanes: a record whose second PUBACK was pending at the signal held back ``power_off``).
        """
        return await asyncio.to_thread(self.kill_ctl, signal.SIGTERM)

    @property
    def ctl_alive(self) -> bool:
        return self.ctl is not None and self.ctl.poll() is None

    def log_tail(self) -> str:
        """The controller's last lines about MQTT, recovery and the journal (not every round)."""
        try:
            lines = self.ctl_log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return "(no log)"
        keep = [
            line[:300] for line in lines if "round_outcome" not in line and '"verdict"' not in line
        ]
        return f"--- {self.table} controller log:\n" + "\n".join(keep[-40:])

    def stop(self) -> None:
        self.kill_ctl(signal.SIGTERM)
        self.kill_sim()


def _kill(proc: subprocess.Popen[bytes] | None, sig: int) -> int | None:
    return None if proc is None else end_process(proc, sig)


def count_in_log(path: Path, needle: str) -> int:
    try:
        return path.read_text(encoding="utf-8", errors="replace").count(needle)
    except OSError:
        return 0


def set_clock_offset(offset_file: Path, offset: str | float) -> None:
    """Set the wall-clock offset a :func:`faketime_env` process reads: ``"-3d"`` or seconds.
    Written whole (a rename), so no reading of the clock ever finds half a file."""
    text = offset if isinstance(offset, str) else f"{round(offset):+d}"
    scratch = offset_file.with_name(offset_file.name + ".tmp")
    scratch.write_text(f"{text}\n", encoding="ascii")
    scratch.replace(offset_file)


# --- garbage on the device port ----------------------------------------------------------------

_NOISE = bytes(b for b in range(256) if b < 0x20 or b >= 0x7F or b in b"!\"#$%&'()+-./;<=>?@[]^_")
"""Line noise that can never decode as an SS2 message: no digits, letters, ``*``, ``:``, ``,`` or
line ends (a checksum-less ASCII protocol cannot tell a forged valid line from a real one, and the
suite tests robustness, not forgery)."""
_NOISE = bytes(b for b in _NOISE if b not in b"\r\n")


class GarbageRelay:
    """A TCP relay between the wheel (``socket://``) and the controller that floods garbage.

    A flood is queued and written to the controller between two whole lines of the wheel, so it
    never splices a real line into a different valid one.
    """

    def __init__(self, upstream: tuple[str, int], rng: random.Random) -> None:
        self.upstream = upstream
        self.rng = rng
        self.port = 0
        self.flooded = 0
        self._server: asyncio.Server | None = None
        self._pending: list[bytes] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    def flood(self) -> int:
        """Queue one burst: noise, a false packet start, an over-long line. Returns its size."""
        size = self.rng.randint(1024, 16384)
        noise = bytes(self.rng.choice(_NOISE) for _ in range(size))
        burst = noise[: size // 2] + b"\r\n*" + noise[size // 2 :] + b"\r\n"
        self._pending.append(burst)
        return len(burst)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            self._tasks.discard(task)
            return
        try:
            await asyncio.gather(self._down(up_reader, writer), _pipe(reader, up_writer))
        finally:
            writer.close()
            up_writer.close()
            self._tasks.discard(task)

    async def _down(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                writer.write(data)
                if self._pending and data.endswith(b"\n"):
                    for burst in self._pending:
                        writer.write(burst)
                        self.flooded += 1
                    self._pending.clear()
                await writer.drain()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()


def verify_with_journal(path: Path, table: str) -> int:
    """The project's own verifier over the whole file, once no process writes it."""
    with Journal(path, table) as journal:
        return journal.verify()
