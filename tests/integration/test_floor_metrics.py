"""The archiver's and the dashboard's ``/metrics`` (``--metrics-listen``), for real.

``tablectl archive`` and ``tablectl dashboard`` run as processes against a Mosquitto of the
test's own (and, for the archive, the session's private PostgreSQL): their endpoints serve the
metrics the alerting rules read (config/prometheus/tablectl.rules.yml), the archive's gaps and
last records come from what it really stored, and ``broker_connected`` goes to 0 when the broker
goes away and back to 1 when it returns.
"""

from __future__ import annotations

import contextlib
import json
import signal
import time
from collections.abc import Callable
from pathlib import Path

import aiomqtt
import pytest

from tests.controller.archive.published import publish_journal
from tests.support.archive import ArchiverProcess
from tests.support.dashboard import dashboard_process
from tests.support.mosquitto import MosquittoProcess, free_port
from tests.support.processes import log_tail
from tests.support.tables import sample, scrape
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(90)]


async def _scraped(
    port: int, holds: Callable[[str], bool], *, what: str, alive: Callable[[], str | None]
) -> str:
    """The first scrape of ``port`` for which ``holds`` (fails with the process's log if it
    died, or after 30 s)."""
    body = ""

    async def check() -> bool:
        nonlocal body
        dead = alive()
        assert dead is None, dead
        with contextlib.suppress(OSError):
            status, body = await scrape(port)
            return status == 200 and holds(body)
        return False

    await wait_until(check, timeout=30, what=what)
    return body


async def test_the_archivers_endpoint_serves_its_links_records_and_gaps(
    tmp_path: Path, mosquitto: MosquittoProcess, postgres_dsn: str
) -> None:
    port = free_port()
    archiver = ArchiverProcess(
        tmp_path, mosquitto.url, postgres_dsn, extra=["--metrics-listen", f"127.0.0.1:{port}"]
    )
    published = publish_journal(tmp_path / "t1.sqlite", "T1", rounds=3, key=None)
    me = {"archive": "archive"}
    t1 = {**me, "table": "T1"}

    def alive() -> str | None:
        return None if archiver.alive else f"the archiver exited: {archiver.log_tail()}"

    def connected(value: int) -> Callable[[str], bool]:
        return lambda body: sample(body, "tablectl_archive_broker_connected", **me) == value

    archiver.start()
    try:
        body = await _scraped(port, connected(1), what="the archiver connected", alive=alive)
        assert sample(body, "tablectl_archive_db_available", **me) == 1
        assert sample(body, "tablectl_archive_stored_total", **me) == 0
        assert "# TYPE tablectl_archive_stored_total counter" in body

        # The table's records but seq 5 and 6: a gap nobody will fill (there is no table).
        before = time.time()
        async with aiomqtt.Client(mosquitto.host, mosquitto.port, timeout=5) as client:
            for record in published:
                if record.seq not in (5, 6):
                    await client.publish("it/T1/events", record.payload, qos=1)

        def gap_open(body: str) -> bool:
            return sample(body, "tablectl_archive_gaps_open", **t1) == 1

        body = await _scraped(port, gap_open, what="the gap reported", alive=alive)
        assert sample(body, "tablectl_archive_missing_records", **t1) == 2
        assert sample(body, "tablectl_archive_stored_total", **me) == len(published) - 2
        assert sample(body, "tablectl_archive_chain_broken", **t1) == 0
        last = sample(body, "tablectl_archive_last_record_timestamp_seconds", **t1)
        assert last is not None
        assert before - 1 <= last <= time.time() + 1, (before, last)

        def asked(body: str) -> bool:
            resends = sample(body, "tablectl_archive_resend_requests_total", **me)
            return resends is not None and resends >= 1

        body = await _scraped(port, asked, what="the gap asked for", alive=alive)
        assert sample(body, "tablectl_archive_gaps_open", **t1) == 1

        # The broker goes away: the archiver says so, and again when it is back.
        mosquitto.stop()
        await _scraped(port, connected(0), what="broker_connected 0", alive=alive)
        mosquitto.start()
        await _scraped(port, connected(1), what="broker_connected 1 again", alive=alive)
        assert archiver.kill(signal.SIGTERM) == 0, archiver.log_tail()
    finally:
        archiver.kill()


def test_a_bad_metrics_address_is_a_config_error_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tablectl.controller.tools.cli import main as tablectl  # noqa: PLC0415

    code = tablectl(
        ["archive", "--dsn", "postgresql://u@127.0.0.1:1/x", "--metrics-listen", "nowhere"]
    )
    assert code == 78
    assert "metrics listen address 'nowhere': expected HOST:PORT" in capsys.readouterr().err


# --- the dashboard -------------------------------------------------------------------------------


async def test_the_dashboards_endpoint_serves_its_feed(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    port = free_port()
    log = tmp_path / "dashboard.log"
    args = [
        *("--url", mosquitto.url, "--listen", f"127.0.0.1:{free_port()}"),
        *("--metrics-listen", f"127.0.0.1:{port}"),
    ]

    pytest.importorskip("uvicorn", reason="the dashboard extra (pip install 'tablectl[dashboard]')")
    with dashboard_process(args, log) as proc:

        def alive() -> str | None:
            return None if proc.poll() is None else f"the dashboard exited: {log_tail(log)}"

        def connected(value: int) -> Callable[[str], bool]:
            return lambda body: sample(body, "tablectl_dashboard_broker_connected") == value

        body = await _scraped(port, connected(1), what="the dashboard connected", alive=alive)
        assert sample(body, "tablectl_dashboard_last_message_timestamp_seconds") == 0
        assert sample(body, "tablectl_dashboard_messages_total") == 0

        before = time.time()
        status = {"schema": 1, "state": "online", "table": "ROU-01"}
        async with aiomqtt.Client(mosquitto.host, mosquitto.port, timeout=5) as client:
            await client.publish(
                "tablectl/ROU-01/status", json.dumps(status).encode(), qos=1, retain=True
            )

        def heard(body: str) -> bool:
            return sample(body, "tablectl_dashboard_messages_total") == 1

        body = await _scraped(port, heard, what="the message counted", alive=alive)
        last = sample(body, "tablectl_dashboard_last_message_timestamp_seconds")
        assert last is not None
        assert before - 1 <= last <= time.time() + 1, (before, last)
        assert sample(body, "tablectl_dashboard_tables") == 1
        assert "# TYPE tablectl_dashboard_messages_total counter" in body

        mosquitto.stop()
        await _scraped(port, connected(0), what="broker_connected 0", alive=alive)
        mosquitto.start()
        await _scraped(port, connected(1), what="broker_connected 1 again", alive=alive)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0, log_tail(log)
