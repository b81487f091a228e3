"""One table under test: ``python -m tablectl run`` on a wheel pty, watched by a subscriber.

The controller runs as its own process, exactly as systemd runs it (JSON logs to a file), so
the harness's own work (writing the pty, receiving MQTT) does not share its event loop. All
timestamps are ``perf_counter_ns`` in the harness process.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from bench.mqtt import Subscriber
from bench.support import (
    PREFIX,
    Broker,
    WheelLines,
    WheelPty,
    start_controller,
    stop_process,
    write_table_config,
)

__all__ = ["SingleTable"]


class SingleTable:
    """A controller process for table ``table_id`` with its wheel pty and a subscriber.

    Use as ``async with SingleTable(...) as table: await table.start()``. Waiters are one-shot
    futures armed *before* the bytes that should trigger them are written.
    """

    def __init__(
        self,
        broker: Broker,
        workdir: Path,
        table_id: str,
        *,
        journal: Path | None = None,
        wheel: WheelPty | None = None,
        controller_args: Sequence[str] = (),
    ) -> None:
        self.broker = broker
        self.workdir = workdir
        self.table_id = table_id
        self.base = f"{PREFIX}/{table_id}"
        self.journal = journal or workdir / f"{table_id}.sqlite"
        self.wheel = wheel or WheelPty()
        self._own_wheel = wheel is None
        self.lines = WheelLines()
        self.controller_args = list(controller_args)
        self.config = write_table_config(
            workdir / f"{table_id}.toml",
            table=table_id,
            port=self.wheel.path,
            broker=broker,
            journal=self.journal,
        )
        self.proc: subprocess.Popen[bytes] | None = None
        self.max_seq = 0
        self.received_events = 0
        self._online: asyncio.Future[int] | None = None
        self._available: asyncio.Future[int] | None = None
        self._event_wait: tuple[bytes, asyncio.Future[int]] | None = None
        self._outcome_wait: asyncio.Future[int] | None = None
        self._seq_wait: tuple[int, asyncio.Future[int]] | None = None
        self.subscriber = Subscriber(
            broker.host,
            broker.port,
            [
                f"{self.base}/status",
                f"{self.base}/events",
                f"{self.base}/outcome",
                f"{self.base}/devices/wheel",
            ],
            self._on_message,
        )

    # -- messages ---------------------------------------------------------------------------

    def _on_message(self, topic: str, payload: bytes, t_ns: int) -> None:
        suffix = topic[len(self.base) + 1 :]
        if suffix == "events":
            self.received_events += 1
            at = payload.find(b'"seq":')
            if at >= 0:
                end = at + 6
                while end < len(payload) and 48 <= payload[end] <= 57:
                    end += 1
                self.max_seq = max(self.max_seq, int(payload[at + 6 : end]))
            if self._event_wait is not None and self._event_wait[0] in payload:
                _resolve(self._event_wait[1], t_ns)
            if self._seq_wait is not None and self.max_seq >= self._seq_wait[0]:
                _resolve(self._seq_wait[1], t_ns)
        elif suffix == "outcome":
            if self._outcome_wait is not None:
                _resolve(self._outcome_wait, t_ns)
        elif suffix == "status":
            if self._online is not None and b'"state":"online"' in payload:
                _resolve(self._online, t_ns)
        elif (
            suffix == "devices/wheel"
            and self._available is not None
            and b'"available":true' in payload
        ):
            _resolve(self._available, t_ns)

    def expect_event(self, type_: str) -> asyncio.Future[int]:
        """Resolves with the receive time of the next ``events`` record of ``type_``."""
        future = asyncio.get_running_loop().create_future()
        self._event_wait = (f'"type":"{type_}"'.encode(), future)
        return future

    def expect_outcome(self) -> asyncio.Future[int]:
        """Resolves with the receive time of the next message on the ``outcome`` topic."""
        future = asyncio.get_running_loop().create_future()
        self._outcome_wait = future
        return future

    def expect_seq(self, seq: int) -> asyncio.Future[int]:
        """Resolves once a record with ``seq`` or later has arrived on ``events``."""
        future = asyncio.get_running_loop().create_future()
        self._seq_wait = (seq, future)
        if self.max_seq >= seq:
            _resolve(future, time.perf_counter_ns())
        return future

    # -- lifecycle --------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.subscriber.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
        await self.subscriber.__aexit__(exc_type, exc, tb)
        if self._own_wheel:
            self.wheel.close()

    async def start(self, timeout: float = 30.0) -> float:  # noqa: ASYNC109
        """Start the controller; returns seconds from process start to the retained ``status``
        online (the publisher connected: READY)."""
        loop = asyncio.get_running_loop()
        self._online = loop.create_future()
        t0 = time.perf_counter_ns()
        self.proc = start_controller(
            self.config, self.workdir / f"{self.table_id}.log", extra=self.controller_args
        )
        try:
            t1 = await asyncio.wait_for(self._online, timeout)
        except TimeoutError:
            raise RuntimeError(
                f"controller {self.table_id} not online after {timeout}s; "
                f"see {self.workdir / (self.table_id + '.log')}"
            ) from None
        return (t1 - t0) / 1e9

    async def wait_wheel(self, timeout: float = 30.0) -> None:  # noqa: ASYNC109
        """Feed idle status lines until the controller reports the wheel available."""
        self._available = asyncio.get_running_loop().create_future()
        deadline = time.monotonic() + timeout
        while not self._available.done():
            if time.monotonic() > deadline:
                raise RuntimeError(f"wheel of {self.table_id} never became available")
            self.wheel.write(self.lines.idle())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._available), 0.05)

    async def stop(self) -> None:
        if self.proc is not None:
            proc, self.proc = self.proc, None
            await asyncio.to_thread(stop_process, proc)


def _resolve(future: asyncio.Future[int], t_ns: int) -> None:
    if not future.done():
        future.set_result(t_ns)
