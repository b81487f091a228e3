"""The metrics module without a table: exposition format, bounded labels, latency from the
publisher trace, outbox depth, and the HTTP endpoint's edges."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.journal import Journal
from tablectl.controller.service.metrics import (
    MAX_SERIES,
    MetricsRegistry,
    MetricsServer,
    parse_listen,
)
from tablectl.drivers.clock import ManualClock
from tests.support.records import journaled
from tests.support.tables import sample, scrape

TS = "2026-11-30T10:00:00.000000Z"


def _journal(tmp_path: Path, records: int) -> Journal:
    journal = Journal(tmp_path / "j.sqlite", "T1")
    ts = "2026-11-30T10:00:00.000000Z"
    journal.append([{"type": "round_open", "ts": ts, "device": "wheel"} for _ in range(records)])
    return journal


def test_records_and_trace_become_counters_histogram_and_outbox_depth(tmp_path: Path) -> None:
    clock = ManualClock(100.0)  # a fixed clock makes the latency exact
    registry = MetricsRegistry(clock=clock)
    table = registry.table("T1")
    with _journal(tmp_path, 3) as journal:
        journal.mark_published(1)
        table.attach(journal=journal, drivers=[], publisher=None)
        assert table.outbox_depth == 2  # seq 2 and 3 are not acknowledged yet
        ts = "2026-11-30T10:00:01.000000Z"
        stored = journal.append(
            [
                {"type": "verdict", "ts": ts, "code": "unexpected_event"},
                {"type": "outcome", "ts": ts, "status": "void", "reason": "no_ball"},
            ]
        )
        for record in stored:
            table.on_record(record)
        clock.advance(0.002)
        table.on_publisher("puback", {"seq": 4, "topic": "it/T1/events"})
        table.on_publisher("puback", {"seq": 4, "topic": "it/T1/alarms"})  # second route
        clock.advance(0.1)
        table.on_publisher("puback", {"seq": 5, "topic": "it/T1/events"})
        table.on_publisher("marked", {"up_to": 5})
        table.on_publisher("disconnected", {"error": "gone"})
        table.on_publisher("command", {"verb": "void"})
        table.on_publisher("command", {"verb": "x" * 40})
        body = registry.render()
    labels = {"table": "T1"}
    assert sample(body, "tablectl_verdicts_total", **labels, code="unexpected_event") == 1
    void = {**labels, "status": "void", "reason": "no_ball"}
    assert sample(body, "tablectl_outcomes_total", **void) == 1
    assert sample(body, "tablectl_outbox_depth", **labels) == 0
    assert sample(body, "tablectl_journal_last_seq", **labels) == 5
    assert sample(body, "tablectl_publish_latency_seconds_count", **labels) == 2
    assert sample(body, "tablectl_publish_latency_seconds_bucket", **labels, le="0.0025") == 1
    assert sample(body, "tablectl_publish_latency_seconds_bucket", **labels, le="0.25") == 2
    assert sample(body, "tablectl_publish_latency_seconds_bucket", **labels, le="+Inf") == 2
    assert sample(body, "tablectl_mqtt_disconnects_total", **labels) == 1
    assert sample(body, "tablectl_commands_total", **labels, verb="void") == 1
    assert sample(body, "tablectl_commands_total", **labels, verb="other") == 1
    # Each family once, HELP and TYPE before its samples.
    types = [line.split()[2] for line in body.splitlines() if line.startswith("# TYPE")]
    assert len(types) == len(set(types))


def test_free_text_labels_are_bounded_and_escaped() -> None:
    registry = MetricsRegistry()
    table = registry.table("T1")
    for n in range(MAX_SERIES + 10):
        void = {"type": "outcome", "ts": TS, "status": "void", "reason": f'by "pit"\n{n}'}
        table.on_record(journaled(void, seq=n + 1))
    body = registry.render()
    lines = [line for line in body.splitlines() if line.startswith("tablectl_outcomes_total")]
    assert len(lines) == MAX_SERIES + 1  # the rest folded into "other"
    assert 'reason="by \\"pit\\"\\n0"' in body
    assert sample(body, "tablectl_outcomes_total", status="other", reason="other") == 10


def test_parse_listen() -> None:
    assert parse_listen("127.0.0.1:9464") == ("127.0.0.1", 9464)
    assert parse_listen("[::1]:9464") == ("::1", 9464)
    assert parse_listen("0.0.0.0:0") == ("0.0.0.0", 0)  # noqa: S104 - a parse, not a bind
    for bad in ("9464", ":9464", "host:", "host:99999", "host:x"):
        with pytest.raises(ConfigError, match="HOST:PORT"):
            parse_listen(bad)


async def test_endpoint_answers_get_head_and_refuses_the_rest() -> None:
    registry = MetricsRegistry()
    registry.table("T1").on_record(journaled({"type": "verdict", "ts": TS, "code": "x"}))
    async with MetricsServer(registry, "127.0.0.1", 0) as server:
        status, body = await scrape(server.port)
        assert status == 200
        assert 'tablectl_verdicts_total{table="T1",code="x"} 1' in body
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"POST /metrics HTTP/1.1\r\n\r\n")
        assert (await reader.read()).startswith(b"HTTP/1.1 405")
        writer.close()
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"HEAD /metrics HTTP/1.1\r\n\r\n")
        head = await reader.read()
        assert head.startswith(b"HTTP/1.1 200")
        assert head.endswith(b"\r\n\r\n")
        writer.close()
        # A client that never finishes its request does not block the next scrape.
        _, idle = await asyncio.open_connection("127.0.0.1", server.port)
        idle.write(b"GET /met")
        assert (await scrape(server.port))[0] == 200
        idle.close()


async def test_endpoint_port_in_use_is_a_config_error() -> None:
    registry = MetricsRegistry()
    async with MetricsServer(registry, "127.0.0.1", 0) as first:
        with pytest.raises(ConfigError, match="cannot listen"):
            async with MetricsServer(registry, "127.0.0.1", first.port):
                pass
