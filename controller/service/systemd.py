"""systemd integration: ``sd_notify`` over ``$NOTIFY_SOCKET`` and watchdog pings, no dependency.

The protocol is one datagram on a unix socket; the C binding would need libsystemd headers. The
pings come from the event loop only, so they stop exactly when the loop wedges. Outside systemd
everything is a no-op, and sending never blocks or raises.
"""

from __future__ import annotations

import math
import os
import socket
from collections.abc import Callable, Mapping

import structlog

from tablectl.drivers.clock import SYSTEM_CLOCK, Clock

log = structlog.get_logger("tablectl.systemd")


def _socket_address(name: str) -> str | None:
    """The ``sendto`` address for ``$NOTIFY_SOCKET``: a path, or ``@name`` → abstract ``\\0name``.

    ``vsock:`` addresses (systemd ≥ 253, for VMs) are not supported: ``None``.
    """
    if name.startswith("@"):
        return "\0" + name[1:]
    if name.startswith("/"):
        return name
    return None


class Notifier:
    """Sends ``sd_notify`` messages to the service manager; does nothing when there is none."""

    def __init__(self, socket_name: str | None) -> None:
        self.socket_name = socket_name or None
        self._address = _socket_address(socket_name) if socket_name else None
        if socket_name and self._address is None:
            log.warning("sd_notify_unsupported_socket", notify_socket=socket_name)
        self._sock: socket.socket | None = None
        self._last_error: str | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Notifier:
        """A notifier for ``$NOTIFY_SOCKET`` of ``environ`` (default: this process's)."""
        env = os.environ if environ is None else environ
        return cls(env.get("NOTIFY_SOCKET"))

    @property
    def enabled(self) -> bool:
        """Whether a service manager listens (``Type=notify`` units set ``$NOTIFY_SOCKET``)."""
        return self._address is not None

    def notify(self, *assignments: str) -> bool:
        """Send ``KEY=value`` assignments in one datagram; whether it went out. Failures are logged
        once per distinct error: a ping that cannot be sent must not take the table down."""
        if self._address is None or not assignments:
            return False
        payload = "\n".join(assignments).encode("utf-8")
        try:
            if self._sock is None:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                sock.setblocking(False)
                self._sock = sock
            self._sock.sendto(payload, self._address)
        except OSError as exc:
            error = f"{type(exc).__name__}: {exc}"
            if error != self._last_error:
                self._last_error = error
                log.warning("sd_notify_failed", notify_socket=self.socket_name, error=error)
            return False
        self._last_error = None
        return True

    def ready(self, status: str | None = None) -> bool:
        """``READY=1`` (plus ``STATUS=``): startup is complete, ``systemctl start`` returns."""
        return self.notify("READY=1", *([f"STATUS={status}"] if status else []))

    def status(self, text: str) -> bool:
        """``STATUS=…``: the one-line state shown by ``systemctl status``."""
        return self.notify(f"STATUS={text}")

    def stopping(self, status: str | None = None) -> bool:
        """``STOPPING=1``: a graceful shutdown has begun (flushing the outbox takes a moment)."""
        return self.notify("STOPPING=1", *([f"STATUS={status}"] if status else []))

    def close(self) -> None:
        """Close the socket (idempotent); a later :meth:`notify` opens a new one."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def watchdog_interval(
    environ: Mapping[str, str] | None = None, *, pid: int | None = None
) -> float | None:
    """Seconds between watchdog pings: half of ``$WATCHDOG_USEC`` (one late ping is not yet a
    restart), or ``None``; a child that inherited ``$WATCHDOG_PID`` must not ping for its parent."""
    env = os.environ if environ is None else environ
    raw_usec = env.get("WATCHDOG_USEC", "")
    if not raw_usec.isdigit() or int(raw_usec) == 0:
        return None
    raw_pid = env.get("WATCHDOG_PID", "")
    if raw_pid and (not raw_pid.isdigit() or int(raw_pid) != (pid or os.getpid())):
        return None
    return int(raw_usec) / 2 / 1_000_000


async def watchdog_pings(
    notifier: Notifier,
    interval: float | None,
    *,
    status: Callable[[], str] | None = None,
    status_interval: float = 2.0,
    clock: Clock = SYSTEM_CLOCK,
) -> None:
    """Until cancelled: ``WATCHDOG=1`` every ``interval`` s and ``STATUS=`` when it changes (without
    a watchdog, the status every ``status_interval`` s), as a task on the loop it guards."""
    if not notifier.enabled:
        return
    last_status: str | None = None
    next_ping = clock.monotonic()
    while True:
        messages: list[str] = []
        now = clock.monotonic()
        if interval is not None and now >= next_ping:
            messages.append("WATCHDOG=1")
            next_ping = now + interval
        if status is not None:
            text = status()
            if text != last_status:
                last_status = text
                messages.append(f"STATUS={text}")
        if messages:
            notifier.notify(*messages)
        pause = status_interval if status is not None else math.inf
        if interval is not None:
            pause = min(pause, max(next_ping - clock.monotonic(), 0.0))
        if math.isinf(pause):
            return  # neither a watchdog nor a status to keep: nothing to do
        await clock.sleep(pause)
