"""``tablectl dashboard`` in tests: the process, a headless Chromium, plain HTTP(S) requests.

Shared by the browser tests (``tests/integration/test_dashboard_browser.py``) and the hostile
publisher's (``tests/integration/test_dashboard_hostile.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import ssl
import subprocess
import sys
import urllib.parse
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.tools.dashboard.screenshots import CHROMIUM
from tests.support.waiting import wait_until

__all__ = [
    "REPO",
    "Chain",
    "browser",
    "dashboard_process",
    "env",
    "http_get",
    "page_process",
    "serving",
]

REPO = Path(__file__).resolve().parents[2]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}


@contextlib.contextmanager
def dashboard_process(args: Sequence[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``tablectl dashboard ARGS`` until the block ends (SIGTERM: a clean stop, exit 0)."""
    with page_process("dashboard", args, log) as proc:
        yield proc


@contextlib.contextmanager
def page_process(command: str, args: Sequence[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``tablectl COMMAND ARGS`` (a page: the dashboard, a station) until the block ends."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tablectl", command, *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env(),
        )
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def serving(proc: subprocess.Popen[bytes], log: Path) -> None:
    """Return once the dashboard says it serves (fails with its log if it exited)."""

    def ready() -> bool:
        assert proc.poll() is None, log.read_text(errors="replace")
        return "serving http" in log.read_text(errors="replace")

    await wait_until(ready, timeout=30, what="the dashboard to serve")


@contextlib.asynccontextmanager
async def browser() -> AsyncIterator[Any]:
    """Debian's headless Chromium through playwright (skips when it is not installed)."""
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"{CHROMIUM} missing (apt-get install chromium; .ci/run installs it)")
    from playwright.async_api import async_playwright  # noqa: PLC0415 - a dev dependency

    async with async_playwright() as p:
        found = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield found
        finally:
            await found.close()


def http_get(
    url: str,
    *,
    context: ssl.SSLContext | None = None,
    auth: str | None = None,
    source: str | None = None,
    timeout: float = 30.0,
) -> tuple[int, str, Mapping[str, str]]:
    """One GET (blocking: run it in a thread); ``(status, body, headers)``. ``source``: the
    local address to connect from (any of 127.0.0.0/8 on Linux), as another machine would."""
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port
    bind = (source, 0) if source is not None else None
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(
            host, port, context=context, timeout=timeout, source_address=bind
        )
    else:
        connection = http.client.HTTPConnection(host, port, timeout=timeout, source_address=bind)
    try:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection.request("GET", path, headers={"Authorization": auth} if auth else {})
        response = connection.getresponse()
        body = response.read().decode("utf-8", "replace")
        return response.status, body, {k.lower(): v for k, v in response.getheaders()}
    finally:
        connection.close()


class Chain:
    """A table's journal as published: records linked by sha256, like the real ones."""

    def __init__(self, table: str) -> None:
        self.table = table
        self.seq = 0
        self.head = "0" * 64
        self.numbers: list[int] = []

    def record(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.seq += 1
        body = {"schema": 1, "table": self.table, "seq": self.seq, "type": kind, **fields}
        body["prev_hash"] = self.head
        body["hash"] = self.head = hashlib.sha256(json.dumps(body).encode()).hexdigest()
        return body

    def spin(self, number: int, ts: str = "2026-11-30T10:00:00.000000Z") -> dict[str, Any]:
        self.numbers.append(number)
        return self.record(
            "outcome",
            game="roulette",
            round=f"{self.table}-{self.seq + 1:06d}",
            ts=ts,
            status="settled",
            reason=None,
            result={"number": number, "color": "red", "revolutions": 6, "variant": "european"},
        )

    def state(self, **more: Any) -> dict[str, Any]:
        return {
            "schema": 1,
            "table": self.table,
            "game": "roulette",
            "phase": "open",
            "round": f"{self.table}-{self.seq:06d}",
            "rounds": self.seq,
            "seq": self.seq,
            "faults": [],
            "devices": {"wheel": {"faults": []}},
            "locked": False,
            "journal": {"available": True},
            **more,
        }
