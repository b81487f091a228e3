"""The archive lane of the fault suite: the floor's archive through crashes and outages.

A floor in miniature: three keyed roulette tables publish to their host's Mosquitto, which is
bridged to the floor's central Mosquitto, where ``tablectl archive`` stores every record in a
PostgreSQL of the lane's own. Injected at random: kill -9 of the archiver (restarted as systemd
would), PostgreSQL restarts (fast, and immediate = a crash), bridge cuts (the central broker
killed while the archiver is held stopped, so records reach no one: gaps that only the tables'
resends can fill; or the host broker killed), and kill -9 of a table's controller.

After every injection the archive must catch up with the journals; at the end it must hold every
journaled record exactly once and byte for byte as published, each table's chain verified end to
end in the archive (anchors under the key), nothing open (gaps, conflicts, breaks), and the
archive's outcomes equal to a replay of the table's export from the archive.
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fault.conftest import scaled
from tests.fault.harness import FaultReport
from tests.support.archive import (
    ArchiverProcess,
    KeyedLane,
    archived_outcomes,
    check_archived,
    replayed_outcomes,
    same_outcomes,
    wait_archived,
    wait_played,
    write_key,
)
from tests.support.mosquitto import Bridge, MosquittoProcess
from tests.support.mqtt import Subscriber
from tests.support.postgres import PostgresServer, private_postgres

pytestmark = [pytest.mark.fault, pytest.mark.broker, pytest.mark.timeout(400)]

INJECTIONS = 16
"""Injections of the lane (× ``TABLECTL_FAULT_SCALE``), each kind at least once."""

_KINDS = (
    "kill -9 archiver",
    "PostgreSQL restart (fast)",
    "PostgreSQL crash (immediate) and restart",
    "bridge cut: central broker killed, records lost to the archiver",
    "bridge cut: table host's broker killed",
    "kill -9 table controller",
)

BRIDGED = (
    "it/+/events out 1",
    "it/+/anchor out 1",
    "it/+/cmd/resend/reply out 1",
    "it/+/cmd/resend in 1",
)


@pytest.fixture
def lane_postgres() -> Iterator[PostgresServer]:
    with private_postgres() as server:
        yield server


class _Floor:
    """The lane's parts, and one injection of each kind."""

    def __init__(
        self,
        tmp_path: Path,
        central: MosquittoProcess,
        postgres: PostgresServer,
        rng: random.Random,
    ) -> None:
        self.central = central
        self.host = MosquittoProcess(
            tmp_path / "host", bridge=Bridge(f"127.0.0.1:{central.port}", BRIDGED)
        )
        self.postgres = postgres
        self.dsn = postgres.new_database()
        key = write_key(tmp_path / "keys" / "journal.key")
        self.lanes = [
            KeyedLane(f"AR{i}", tmp_path / f"ar{i}", self.host.url, key_file=key) for i in range(3)
        ]
        self.archiver = ArchiverProcess(tmp_path, central.url, self.dsn, extra=["--key", str(key)])
        self.rng = rng
        self.held = False
        """The archiver is stopped on purpose (not restarted by the supervisor)."""

    @property
    def journals(self) -> dict[str, Path]:
        return {lane.table: lane.journal for lane in self.lanes}

    async def supervise(self) -> None:
        """systemd's ``Restart=on-failure`` for the archiver (it exits when PostgreSQL is not
        there at its start)."""
        while True:
            await asyncio.sleep(0.3)
            if not self.held and not self.archiver.alive:
                self.archiver.start()

    async def inject(self, kind: str) -> None:
        rng = self.rng
        if kind == "kill -9 archiver":
            self.held = True
            self.archiver.kill()
            await asyncio.sleep(rng.uniform(0.1, 1.0))
            self.archiver.start()
            self.held = False
        elif kind.startswith("PostgreSQL"):
            mode = "immediate" if "immediate" in kind else "fast"
            await asyncio.to_thread(self.postgres.restart, mode)
        elif kind.startswith("bridge cut: central"):
            proc = self.archiver.proc
            assert proc is not None
            self.held = True
            proc.send_signal(signal.SIGSTOP)
            try:
                self.central.kill()
                await asyncio.sleep(rng.uniform(0.3, 1.5))
                self.central.start()
                async with Subscriber(self.central.host, self.central.port, "it/+/events") as sub:
                    await sub.wait_for(lambda m: True, timeout=20)  # the bridge is back
            finally:
                proc.send_signal(signal.SIGCONT)
                self.held = False
        elif kind.startswith("bridge cut: table host"):
            self.host.kill()
            await asyncio.sleep(rng.uniform(0.3, 1.5))
            self.host.start()
        else:
            lane = rng.choice(self.lanes)
            lane.kill_ctl()
            await asyncio.sleep(rng.uniform(0.1, 0.6))
            lane.start_ctl()


async def test_archive_lane(
    tmp_path: Path,
    mosquitto: MosquittoProcess,
    lane_postgres: PostgresServer,
    fault_report: FaultReport,
) -> None:
    started = time.monotonic()
    report = fault_report
    floor = _Floor(tmp_path, mosquitto, lane_postgres, random.Random(2026))
    kinds = list(_KINDS)
    kinds += [floor.rng.choice(_KINDS) for _ in range(max(0, scaled(INJECTIONS) - len(kinds)))]
    floor.rng.shuffle(kinds)
    floor.host.start()
    supervisor: asyncio.Task[None] | None = None
    try:
        await asyncio.gather(
            *(
                asyncio.to_thread(lane.start_sim, ["--seed", str(seed)])
                for seed, lane in enumerate(floor.lanes, 500)
            )
        )
        for lane in floor.lanes:
            lane.start_ctl()
        floor.archiver.start()
        supervisor = asyncio.create_task(floor.supervise())
        await wait_played(floor.lanes, 1)
        for kind in kinds:
            await floor.inject(kind)
            report.inject(f"archive: {kind}")
            await wait_played(floor.lanes, 1)
            await wait_archived(floor.dsn, floor.journals, 60, archivers=[floor.archiver])
            report.check("archive: caught up with every journal after the injection", 3)
        for lane in floor.lanes:
            await lane.stop_ctl()
        await wait_archived(floor.dsn, floor.journals, 30, archivers=[floor.archiver])
        supervisor.cancel()
        floor.held = True
        assert floor.archiver.kill(signal.SIGTERM) == 0, floor.archiver.log_tail()
        report.check("archive: orderly stop after SIGTERM")
    finally:
        if supervisor is not None:
            supervisor.cancel()
        floor.archiver.kill()
        for lane in floor.lanes:
            lane.stop()
        floor.host.stop()
    for lane in floor.lanes:
        n = check_archived(floor.dsn, lane.table, lane.journal)
        report.check("archive: every journaled record exactly once, bytes as published")
        report.check("archive: chain verified end to end in the archive (keyed anchors)")
        report.observe("archive: records archived", n)
        archived = archived_outcomes(floor.dsn, lane.table)
        replayed = await asyncio.to_thread(
            replayed_outcomes, floor.dsn, lane.table, lane.workdir / "table.toml", tmp_path
        )
        assert same_outcomes(archived, replayed), lane.table
        report.check("archive: outcomes == replay of the table's export from the archive")
    report.seconds["archive"] = time.monotonic() - started
