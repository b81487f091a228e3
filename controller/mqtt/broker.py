"""An in-process MQTT broker for ``mqtt.url = "embedded"`` (``tablectl demo``, standalone tables).

Mosquitto when installed (what production runs; retained messages exactly once), else amqtt (the
``embedded`` extra); neither is a one-line :class:`ConfigError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any, Literal

from tablectl.controller.core.closing import AsyncClosing
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.mqtt.children import die_with_parent

_QUIET = ("amqtt", "transitions")
_MOSQUITTO_FALLBACK = Path("/usr/sbin/mosquitto")  # Debian installs it outside a user's PATH
_READY_SECONDS = 5.0

Engine = Literal["auto", "mosquitto", "amqtt"]


def find_mosquitto() -> str | None:
    """Path of the mosquitto binary, or ``None`` when it is not installed."""
    found = shutil.which("mosquitto")
    if found:
        return found
    return str(_MOSQUITTO_FALLBACK) if _MOSQUITTO_FALLBACK.is_file() else None


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago: someone may take it meanwhile, good enough for a demo
    broker and tests."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


class EmbeddedBroker(AsyncClosing):
    """A broker listening on ``host:port`` (loopback by default, so a demo never exposes one) for
    the lifetime of an ``async with``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, engine: Engine = "auto") -> None:
        self.host = host
        self.port = port or free_port(host)
        self.engine: Engine = engine
        self._broker: Any = None
        self._process: asyncio.subprocess.Process | None = None
        self._workdir: tempfile.TemporaryDirectory[str] | None = None

    @property
    def url(self) -> str:
        """``mqtt://host:port`` of this broker."""
        return f"mqtt://{self.host}:{self.port}"

    @property
    def running(self) -> str | None:
        """Which broker is running (``"mosquitto"`` or ``"amqtt"``), or ``None``."""
        if self._process is not None:
            return "mosquitto"
        return "amqtt" if self._broker is not None else None

    async def start(self) -> None:
        """Start listening. Idempotent."""
        if self.running:
            return
        binary = find_mosquitto() if self.engine in ("auto", "mosquitto") else None
        if binary is not None:
            await self._start_mosquitto(binary)
        elif self.engine == "mosquitto":
            raise ConfigError("embedded broker: no mosquitto binary (apt-get install mosquitto)")
        else:
            await self._start_amqtt()

    async def _start_mosquitto(self, binary: str) -> None:
        self._workdir = tempfile.TemporaryDirectory(prefix="tablectl-broker-")
        workdir = Path(self._workdir.name)
        conf = workdir / "mosquitto.conf"
        # Started as root, Mosquitto would switch to its own user, which clears the parent-death
        # signal set below: the embedded broker runs as whoever runs the demo.
        same_user = "user root\n" if os.geteuid() == 0 else ""
        conf.write_text(
            f"listener {self.port} {self.host}\n"
            "allow_anonymous true\n"
            "persistence false\n"
            "set_tcp_nodelay true\n"
            "log_dest stderr\n"
            "log_type error\n"
            f"{same_user}",
            encoding="utf-8",
        )
        log = workdir / "mosquitto.log"
        with log.open("wb") as out:
            self._process = await asyncio.create_subprocess_exec(
                binary,
                "-c",
                str(conf),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                # Its own session: a Ctrl-C at the terminal goes to the demo, which stops its
                # tables first and the broker last (not the broker first, under live tables).
                start_new_session=True,
                # ... and it dies with the demo however the demo ends (SIGKILL too).
                preexec_fn=die_with_parent(),
            )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _READY_SECONDS
        while loop.time() < deadline:
            if self._process.returncode is not None:
                break
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection(self.host, self.port)
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()
                return
            await asyncio.sleep(0.02)
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:] or [""]
        await self.stop()
        raise ConfigError(f"embedded broker: mosquitto did not listen on {self.url}: {tail[0]}")

    async def _start_amqtt(self) -> None:
        # amqtt logs every connection at INFO; a demo's terminal is for outcomes.
        for name in _QUIET:
            logging.getLogger(name).setLevel(logging.WARNING)
        try:
            from amqtt.broker import Broker  # noqa: PLC0415  (heavy import, only when embedded)
        except ImportError:
            raise ConfigError(
                "embedded broker: no mosquitto binary and no amqtt "
                "(apt-get install mosquitto, or pip install 'tablectl[embedded]')"
            ) from None

        broker = Broker(
            {
                "listeners": {"default": {"type": "tcp", "bind": f"{self.host}:{self.port}"}},
                # Only anonymous auth (loopback demo broker): amqtt's defaults also load packet
                # loggers and a deprecated $SYS plugin that warns on every start.
                "plugins": {
                    "amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}
                },
            }
        )
        await broker.start()
        self._broker = broker

    async def stop(self) -> None:
        """Stop the broker (idempotent); connected clients see their connection close."""
        broker, self._broker = self._broker, None
        process, self._process = self._process, None
        workdir, self._workdir = self._workdir, None
        try:
            if broker is not None:
                await broker.shutdown()
            if process is not None and process.returncode is None:
                process.terminate()  # sent at once: a cancelled wait below still stops it
                try:
                    async with asyncio.timeout(3):
                        await process.wait()
                except TimeoutError:
                    process.kill()
                    await process.wait()
        finally:
            if workdir is not None:
                workdir.cleanup()

    _open = start  # what ``async with`` awaits first ...
    close = stop  # ... and last
