"""A RabbitMQ node of a test's own with its MQTT plugin, for the floor's clustered-broker option.

Why its own node: the machine's RabbitMQ (if any) is not ours to configure or restart. Debian's
``rabbitmq-server`` package provides the binaries; the node gets a unique name, a temporary
``RABBITMQ_MNESIA_BASE``, free AMQP, MQTT and distribution ports, and only the ``rabbitmq_mqtt``
plugin. As root it runs as the ``rabbitmq`` user (whose Erlang cookie it shares with epmd).
Without the package the tests that need it skip, saying so.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from tests.support.mosquitto import free_port
from tests.support.processes import ServerProcess

__all__ = ["RabbitMQNode", "rabbitmq_unavailable"]

_SERVER = Path("/usr/lib/rabbitmq/bin/rabbitmq-server")
_USER = "rabbitmq"


def rabbitmq_unavailable() -> str | None:
    """Why no node can be started here (a skip reason), or ``None``."""
    if not _SERVER.is_file():
        return "rabbitmq-server not installed (apt-get install rabbitmq-server)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(_USER)
        except KeyError:
            return "running as root without a 'rabbitmq' user to run the node as"
    return None


class RabbitMQNode(ServerProcess):
    """One RabbitMQ node listening for MQTT (3.1.1; v5 needs RabbitMQ ≥ 3.13) on a free port."""

    def __init__(self) -> None:
        self.host = "127.0.0.1"
        self.port = free_port(self.host)
        self.workdir = Path(tempfile.mkdtemp(prefix="tablectl-rmq-"))
        self.log_path = self.workdir / "node.log"
        self._proc: subprocess.Popen[bytes] | None = None
        amqp, dist = free_port(self.host), free_port(self.host)
        (self.workdir / "rabbitmq.conf").write_text(
            f"listeners.tcp.default = {self.host}:{amqp}\n"
            f"mqtt.listeners.tcp.default = {self.host}:{self.port}\n"
            "mqtt.allow_anonymous = true\n"
            "loopback_users = none\n",
            encoding="utf-8",
        )
        (self.workdir / "enabled_plugins").write_text("[rabbitmq_mqtt].\n", encoding="utf-8")
        self._env = {
            **os.environ,
            "HOME": "/var/lib/rabbitmq" if os.geteuid() == 0 else str(self.workdir),
            "RABBITMQ_NODENAME": f"tablectl-test-{self.port}@localhost",
            "RABBITMQ_CONFIG_FILE": str(self.workdir / "rabbitmq"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.workdir / "enabled_plugins"),
            "RABBITMQ_MNESIA_BASE": str(self.workdir / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.workdir / "log"),
            "RABBITMQ_PID_FILE": str(self.workdir / "node.pid"),
            "RABBITMQ_DIST_PORT": str(dist),
        }
        if os.geteuid() == 0:
            user = pwd.getpwnam(_USER)
            for path in (self.workdir, *self.workdir.iterdir()):
                os.chown(path, user.pw_uid, user.pw_gid)

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}"

    def start(self, timeout: float = 90.0) -> float:
        """Start the node; return the seconds it took to accept MQTT connections."""
        command = [str(_SERVER)]
        if os.geteuid() == 0:
            command = ["runuser", "-u", _USER, "--", *command]
        started = time.monotonic()
        with self.log_path.open("ab") as log:
            self._proc = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self._env,
                cwd=self.workdir,
                start_new_session=True,
            )
        while time.monotonic() - started < timeout:
            if self._proc.poll() is not None:
                raise RuntimeError(f"rabbitmq exited at startup: {self._log_tail()}")
            with contextlib.suppress(OSError):
                import socket  # noqa: PLC0415

                socket.create_connection((self.host, self.port), timeout=0.2).close()
                return time.monotonic() - started
            time.sleep(0.2)
        self.close()
        raise RuntimeError(f"rabbitmq did not listen for MQTT in {timeout}s: {self._log_tail()}")

    def close(self) -> None:
        """Stop the node (its whole process group) and remove its directory."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        shutil.rmtree(self.workdir, ignore_errors=True)
