"""The ``/metrics`` HTTP endpoint: served with asyncio on the tables' own event loop.

A wedged loop then also stops answering scrapes, which is the truth (see
:mod:`tablectl.controller.service.metrics`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

import structlog

from tablectl.controller.core.closing import AsyncClosing
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.service.metrics.exposition import CONTENT_TYPE

log = structlog.get_logger("tablectl.metrics")

_HEAD_LIMIT = 8192
_REQUEST_TIMEOUT = 5.0


def parse_listen(
    text: str, *, what: str = "metrics listen address", example: str | None = None
) -> tuple[str, int]:
    """``"HOST:PORT"`` (``[v6]:PORT``; port 0 picks one) → ``(host, port)``: the one parser of a
    listen address; ``what`` and ``example`` word the error."""
    host, sep, port = text.rpartition(":")
    host = host.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        hint = f", e.g. {example}" if example else ""
        raise ConfigError(f"{what} {text!r}: expected HOST:PORT{hint}")
    return host, int(port)


class Scraped(Protocol):
    """What the endpoint serves: one scrape as Prometheus text. The tables'
    :class:`~tablectl.controller.service.metrics.tables.MetricsRegistry`, and the archiver's
    and the dashboard's own (:mod:`tablectl.controller.tools.floor_metrics`)."""

    def render(self) -> str: ...


class MetricsServer(AsyncClosing):
    """Serves ``GET /metrics`` for a registry until the context exits: one request per connection
    (scrapes are independent and rare); a slow or oversized head is dropped."""

    def __init__(self, registry: Scraped, host: str, port: int) -> None:
        self.registry = registry
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None

    async def _open(self) -> None:
        try:
            self._server = await asyncio.start_server(
                self._handle, self.host, self.port, limit=_HEAD_LIMIT
            )
        except OSError as exc:
            raise ConfigError(
                f"metrics: cannot listen on {self.host}:{self.port}: {exc.strerror or exc}"
            ) from None
        self.port = int(self._server.sockets[0].getsockname()[1])
        log.info("metrics_listening", host=self.host, port=self.port)

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            await server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(_REQUEST_TIMEOUT):
                head = await reader.readuntil(b"\r\n\r\n")
            writer.write(self._respond(head))
            async with asyncio.timeout(_REQUEST_TIMEOUT):
                await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    def _respond(self, head: bytes) -> bytes:
        parts = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        method = parts[0]
        path = parts[1].split("?", 1)[0] if len(parts) > 1 else ""
        if method not in ("GET", "HEAD"):
            return _response(405, "text/plain", b"method not allowed\n", head_only=False)
        if path == "/metrics":
            try:
                body = self.registry.render().encode("utf-8")
            except Exception:  # a collection bug must not take the endpoint (or the table) down
                log.exception("metrics_render_failed")
                return _response(500, "text/plain", b"render failed\n", head_only=False)
            return _response(200, CONTENT_TYPE, body, head_only=method == "HEAD")
        if path == "/":
            body = b"tablectl metrics: /metrics\n"
            return _response(200, "text/plain", body, head_only=method == "HEAD")
        return _response(404, "text/plain", b"not found\n", head_only=False)


_REASONS = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error"}


def _response(status: int, content_type: str, body: bytes, *, head_only: bool) -> bytes:
    head = (
        f"HTTP/1.1 {status} {_REASONS[status]}\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode("ascii")
    return head if head_only else head + body
