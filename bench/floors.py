"""The floors of this machine: what the path cannot beat, measured in the same run.

* **pty line**: one SS2 status line from the pty master to a reader asleep on the slave (half
  the round trip through an echo thread): the kernel's pty hand-off and one wake-up.
* **MQTT QoS 1 hop**: a QoS 1 PUBLISH from the controller's own outbox connection
  (:mod:`tablectl.controller.mqtt.wire`) → the bench's subscriber (:mod:`bench.mqtt`) on the
  same Mosquitto receives it: the same client code, socket options and broker as the path.
* **fsync'd insert**: one row (an outcome-sized body) committed to SQLite in WAL mode with
  ``synchronous=FULL``, in the directory the journals live in.

``path_floor`` composes them the way the controller's path does: the completing line crosses
the pty, the event and the engine's outcome are committed in one transaction (one fsync: the
runner decides a batch before its commit and lets nothing out before it is durable,
docs/architecture.md), and the outcome crosses the broker once. Issue 16 stated its targets
against a floor with two fsyncs (the event, then its outcome, as the runner used to commit);
``path_floor_two_commits_ms`` is that one, kept for comparison with older runs; the verdicts use
the stricter ``path_floor_ms``.

All three are measured twice: back to back (hot) and after a pause before each sample (idle),
because a real wheel's result line comes seconds after the line before it, and waking a sleeping
machine (a VM's halted vCPU, an idle disk queue) costs far more than the work itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from bench.mqtt import Subscriber
from bench.support import PREFIX, Broker, WheelLines, WheelPty, summarize_ms
from tablectl.controller.mqtt.wire import Link, Wire

__all__ = ["measure_floors"]

_BODY = "x" * 320  # about the size of an outcome record


def pty_line(rounds: int, pause: float = 0.0) -> list[int]:
    """One way = half the round trip master → echo thread on the slave → master.

    The echo thread sleeps in a blocking read, as the controller sleeps in epoll, so the figure
    includes waking a reader, which writing and reading in one thread would not.
    """
    wheel = WheelPty()
    line = WheelLines().next_round()[2]

    def echo() -> None:
        with contextlib.suppress(OSError):
            while data := os.read(wheel.slave, 4096):
                os.write(wheel.slave, data)

    thread = threading.Thread(target=echo, name="pty-echo", daemon=True)
    thread.start()
    try:
        samples: list[int] = []
        warmup = 0 if pause else 50
        for i in range(rounds + warmup):
            if pause:
                time.sleep(pause)
            t0 = time.perf_counter_ns()
            wheel.write(line)
            got = 0
            while got < len(line):
                got += len(os.read(wheel.master, 4096))
            if i >= warmup:
                samples.append((time.perf_counter_ns() - t0) // 2)
        return samples
    finally:
        wheel.close()
        thread.join(timeout=1)


def sqlite_fsync(path: Path, rounds: int, pause: float = 0.0) -> list[int]:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("CREATE TABLE IF NOT EXISTS t (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        samples: list[int] = []
        warmup = 1 if pause else 20
        for i in range(rounds + warmup):
            if pause:
                time.sleep(pause)
            t0 = time.perf_counter_ns()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO t (body) VALUES (?)", (_BODY,))
            conn.execute("COMMIT")
            if i >= warmup:
                samples.append(time.perf_counter_ns() - t0)
        return samples
    finally:
        conn.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)


async def mqtt_hop(broker: Broker, rounds: int, pause: float = 0.0) -> list[int]:
    """QoS 1 PUBLISH → broker → subscriber, p50 over ``rounds``: sent by the controller's own
    outbox connection (:class:`~tablectl.controller.mqtt.wire.Wire`), received by the bench's
    subscriber, so the floor has every client cost the path has and nothing else."""
    topic = f"{PREFIX}/floor/hop"
    loop = asyncio.get_running_loop()
    waiting: list[asyncio.Future[int]] = []
    acked: list[asyncio.Future[None]] = []

    def on_message(_topic: str, _payload: bytes, t_ns: int) -> None:
        if waiting and not waiting[0].done():
            waiting[0].set_result(t_ns)

    def on_puback(_token: None) -> None:
        if acked and not acked[0].done():
            acked[0].set_result(None)

    payload = _BODY.encode()
    samples: list[int] = []
    link = Link(broker.host, broker.port, client_id="bench-floor", keepalive=0, timeout=10)
    async with (
        Subscriber(broker.host, broker.port, [topic], on_message),
        await Wire.open(link, on_puback) as wire,
    ):
        warmup = 1 if pause else 50
        for i in range(rounds + warmup):
            if pause:
                await asyncio.sleep(pause)
            waiting[:] = [loop.create_future()]
            acked[:] = [loop.create_future()]
            t0 = time.perf_counter_ns()
            wire.publish(topic, payload, retain=False, token=None)
            wire.flush()
            t1 = await asyncio.wait_for(waiting[0], timeout=5)
            await asyncio.wait_for(acked[0], timeout=5)
            if i >= warmup:
                samples.append(t1 - t0)
    return samples


async def measure_floors(
    broker: Broker, workdir: Path, *, rounds: int, idle_rounds: int, pause: float
) -> dict[str, Any]:
    pty = summarize_ms(pty_line(rounds))
    fsync = summarize_ms(sqlite_fsync(workdir / "floor.sqlite", rounds))
    hop = summarize_ms(await mqtt_hop(broker, rounds))
    # The same after ``pause`` s of idleness before each sample: what the paced latency pays.
    idle_pty = summarize_ms(pty_line(idle_rounds, pause))
    idle_fsync = summarize_ms(sqlite_fsync(workdir / "floor-idle.sqlite", idle_rounds, pause))
    idle_hop = summarize_ms(await mqtt_hop(broker, idle_rounds, pause))
    return {
        "pty_line": pty,
        "mqtt_qos1_hop": hop,
        "sqlite_fsync_insert": fsync,
        "path_floor_ms": _path(pty, fsync, hop, fsyncs=1),
        "path_floor_two_commits_ms": _path(pty, fsync, hop, fsyncs=2),
        "idle_pause_s": pause,
        "idle_pty_line": idle_pty,
        "idle_mqtt_qos1_hop": idle_hop,
        "idle_sqlite_fsync_insert": idle_fsync,
        "idle_path_floor_ms": _path(idle_pty, idle_fsync, idle_hop, fsyncs=1),
        "idle_path_floor_two_commits_ms": _path(idle_pty, idle_fsync, idle_hop, fsyncs=2),
    }


def _path(
    pty: dict[str, float], fsync: dict[str, float], hop: dict[str, float], *, fsyncs: int
) -> float:
    return round(pty["p50_ms"] + fsyncs * fsync["p50_ms"] + hop["p50_ms"], 4)
