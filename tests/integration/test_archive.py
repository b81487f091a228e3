"""The floor's archive with real parts only (issue 17, item 6): kill it, kill the tables, restart
PostgreSQL — the archive still ends with every journaled record exactly once.

Three roulette tables (``tablectl simulate ss2`` + ``tablectl run``, keyed journals) on a real
Mosquitto, ``tablectl archive`` as a real process, and a PostgreSQL of the test's own (``initdb``
on a free port, tests/support/postgres.py) that the test restarts. Afterwards the archive holds
every journaled record exactly once and byte for byte as published, each table's chain verifies
end to end (anchors under the key included), and the archive's outcomes equal a ``replay`` of the
table's export from the archive.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tablectl.controller.tools.cli import main as tablectl
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
from tests.support.mosquitto import MosquittoProcess
from tests.support.postgres import PostgresServer, private_postgres

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(110)]

INJECTIONS = 8


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL of this test's own: it is restarted mid-run."""
    with private_postgres() as server:
        yield server


@contextlib.asynccontextmanager
async def _supervised(archiver: ArchiverProcess) -> AsyncIterator[list[bool]]:
    """Restart the archiver when it exits by itself, as systemd's ``Restart=on-failure`` would
    (it exits with one line when PostgreSQL is not there at its start). Yields a pause flag."""
    paused = [False]

    async def watch() -> None:
        while True:
            await asyncio.sleep(0.3)
            if not paused[0] and not archiver.alive:
                archiver.start()

    task = asyncio.create_task(watch())
    try:
        yield paused
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_every_record_once_through_kills_and_a_database_restart(
    tmp_path: Path, mosquitto: MosquittoProcess, own_postgres: PostgresServer
) -> None:
    key = write_key(tmp_path / "keys" / "journal.key")
    dsn = own_postgres.new_database()
    lanes = [KeyedLane(n, tmp_path / n, mosquitto.url, key_file=key) for n in "ABC"]
    archiver = ArchiverProcess(tmp_path, mosquitto.url, dsn, extra=["--key", str(key)])
    rng = random.Random(17)
    journals = {lane.table: lane.journal for lane in lanes}
    try:
        await asyncio.gather(
            *(asyncio.to_thread(lane.start_sim, ["--seed", str(n)]) for n, lane in enumerate(lanes))
        )
        for lane in lanes:
            lane.start_ctl()
        archiver.start()
        await wait_played(lanes, 1)
        async with _supervised(archiver) as paused:
            # Each kind at least once, then at random; a moment of play between injections.
            kinds = ["archiver", "table", "postgres"]
            kinds += [rng.choice(kinds) for _ in range(INJECTIONS - len(kinds))]
            rng.shuffle(kinds)
            for kind in kinds:
                await asyncio.sleep(rng.uniform(0.3, 0.8))
                if kind == "archiver":
                    paused[0] = True
                    archiver.kill()  # kill -9: batches half stored, messages not acknowledged
                    await asyncio.sleep(rng.uniform(0.1, 0.8))
                    archiver.start()
                    paused[0] = False
                elif kind == "table":
                    lane = rng.choice(lanes)
                    lane.kill_ctl()
                    await asyncio.sleep(rng.uniform(0.1, 0.5))
                    lane.start_ctl()
                else:
                    mode = rng.choice(["fast", "immediate"])
                    await asyncio.to_thread(own_postgres.restart, mode)
            # Gaps are filled by the tables' resends: wait with the tables up, then stop them.
            await wait_archived(dsn, journals, 40, archivers=[archiver])
            for lane in lanes:
                lane.kill_ctl(signal.SIGTERM)  # power_off, the outbox flushed
            await wait_archived(dsn, journals, 20, archivers=[archiver])
        assert archiver.kill(signal.SIGTERM) == 0
    finally:
        archiver.kill()
        for lane in lanes:
            lane.stop()
    for lane in lanes:
        check_archived(dsn, lane.table, lane.journal)
        archived = archived_outcomes(dsn, lane.table)
        replayed = await asyncio.to_thread(
            replayed_outcomes, dsn, lane.table, lane.workdir / "table.toml", tmp_path
        )
        assert archived, f"{lane.table}: no outcome archived"
        assert same_outcomes(archived, replayed), (lane.table, archived[:2], replayed[:2])


# --- one-line errors (in-process: the CLI's own entry point) --------------------------------


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--dsn", "mysql://db/x"], 78, "scheme must be postgresql://"),
        (["--dsn", "postgresql://u:s3cret@[::1"], 78, "--dsn 'postgresql://u:***@[::1': "),
        (["--dsn", "nonsense=1 password=s3cret"], 78, "--dsn 'nonsense=1 password=***': "),
        (["--dsn", "postgresql://u@127.0.0.1:1/x"], 69, "PostgreSQL 127.0.0.1:1/x: connection"),
        (["--dsn", "postgresql://u@db/x", "--share", "a/b"], 78, "--share 'a/b'"),
        (["--dsn", "postgresql://u@db/x", "--key", "/nonexistent.key"], 78, "--key"),
        (["--dsn", "postgresql://u@db/x", "--url", "http://x"], 78, "mqtt.url"),
    ],
)
def test_bad_options_and_an_unreachable_database_are_one_line(
    args: list[str], code: int, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tablectl(["archive", "--url", "mqtt://127.0.0.1:1", *args]) == code
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("tablectl archive: ")
    assert message in line
    assert "s3cret" not in line


def test_an_unreachable_broker_is_one_line(
    postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tablectl(["archive", "--url", "mqtt://127.0.0.1:1", "--dsn", postgres_dsn]) == 69
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("tablectl archive: MQTT broker 127.0.0.1:1: ")
