"""systemd integration without systemd: the notify protocol against real unix datagram sockets,
the watchdog's timing (and that a stalled loop stops it), and the unit files checked by
``systemd-analyze`` when it is installed (``apt-get install systemd``)."""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tablectl.controller.service.systemd import Notifier, watchdog_interval, watchdog_pings
from tests.support.waiting import wait_until

REPO = Path(__file__).resolve().parents[3]
UNITS = ["tablectl@.service", "tablectl-sim@.service"]


class NotifyListener:
    """A unix datagram socket playing the service manager; a thread stamps each datagram."""

    def __init__(self, address: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(address)
        self.sock.settimeout(0.05)
        self.received: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            self.received.append((time.monotonic(), data.decode()))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()

    def times(self, assignment: str) -> list[float]:
        return [t for t, msg in self.received if assignment in msg.split("\n")]

    def messages(self) -> list[str]:
        return [msg for _, msg in self.received]


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[tuple[NotifyListener, str]]:
    path = str(tmp_path / "notify.sock")
    found = NotifyListener(path)
    try:
        yield found, path
    finally:
        found.close()


def wait_for(predicate: object, timeout: float = 2.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(predicate) and predicate():
            return
        time.sleep(0.01)
    raise AssertionError("condition not met in time")


# --- the notify protocol ---------------------------------------------------------------------


def test_notify_sends_one_datagram_to_a_path_socket(
    listener: tuple[NotifyListener, str],
) -> None:
    sock, path = listener
    notifier = Notifier.from_environ({"NOTIFY_SOCKET": path})
    assert notifier.enabled
    assert notifier.ready("2 devices up")
    assert notifier.status("running")
    assert notifier.stopping()
    wait_for(lambda: len(sock.received) == 3)
    notifier.close()
    assert sock.messages() == ["READY=1\nSTATUS=2 devices up", "STATUS=running", "STOPPING=1"]


def test_notify_reaches_an_abstract_socket() -> None:
    name = f"tablectl-test-{uuid.uuid4().hex}"
    sock = NotifyListener("\0" + name)
    try:
        notifier = Notifier(f"@{name}")
        assert notifier.notify("WATCHDOG=1")
        wait_for(lambda: sock.messages() == ["WATCHDOG=1"])
        notifier.close()
    finally:
        sock.close()


def test_without_a_manager_notify_is_a_silent_no_op(tmp_path: Path) -> None:
    assert not Notifier.from_environ({}).notify("READY=1")
    assert not Notifier(None).enabled
    # A socket that went away: logged, never raised (the table must not die of it).
    gone = Notifier(str(tmp_path / "nobody-listens.sock"))
    assert gone.enabled
    assert not gone.notify("WATCHDOG=1")
    assert not gone.notify("WATCHDOG=1")
    gone.close()


def test_watchdog_interval_is_half_of_watchdog_usec_for_this_process() -> None:
    assert watchdog_interval({}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "0"}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "10000000"}) == 5.0
    mine = {"WATCHDOG_USEC": "200000", "WATCHDOG_PID": str(os.getpid())}
    assert watchdog_interval(mine) == 0.1
    # Inherited by a child: not ours to ping.
    assert watchdog_interval({"WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"}) is None


async def test_watchdog_pings_at_the_period_and_a_stalled_loop_stops_them(
    listener: tuple[NotifyListener, str],
) -> None:
    sock, path = listener
    notifier = Notifier(path)
    status = ["starting"]
    pings = asyncio.create_task(
        watchdog_pings(notifier, 0.05, status=lambda: status[0], status_interval=0.05)
    )
    try:
        await wait_until(lambda: len(sock.times("WATCHDOG=1")) >= 11, what="11 pings")
        status[0] = "running"
        await wait_until(lambda: sock.times("STATUS=running"), what="STATUS=running")
        stalled_at = time.monotonic()
        # Stays: the stall is what is under test (a blocking call wedges the loop for 0.5 s).
        time.sleep(0.5)  # noqa: ASYNC251 - the point: a wedged loop (a blocking call on it)
        resumed_at = time.monotonic()
        await wait_until(
            lambda: len([t for t in sock.times("WATCHDOG=1") if t >= resumed_at]) >= 3,
            what="3 pings after the stall",
        )
    finally:
        pings.cancel()
        await asyncio.wait({pings})
        notifier.close()
    wait_for(lambda: bool(sock.times("WATCHDOG=1")) and sock.times("WATCHDOG=1")[-1] > resumed_at)
    pings_at = sock.times("WATCHDOG=1")
    before = [t for t in pings_at if t < stalled_at]
    gaps = [b - a for a, b in itertools.pairwise(before)]
    assert len(before) >= 10
    assert 0.04 <= statistics.median(gaps) <= 0.08, gaps
    # Nothing while the loop was stuck: systemd (WatchdogSec = 2 × 0.05 s) would have killed it.
    during = [t for t in pings_at if stalled_at + 0.01 < t < resumed_at - 0.01]
    assert during == []
    after = [t for t in pings_at if t >= resumed_at]
    assert max(b - a for a, b in itertools.pairwise(pings_at)) >= 0.45
    assert len(after) >= 3, "the pings resume with the loop"
    # STATUS is sent when it changes, not with every ping.
    statuses = [m for m in sock.messages() if "STATUS=" in m]
    assert [s.split("STATUS=")[1] for s in statuses] == ["starting", "running"]


async def test_no_manager_no_task_work() -> None:
    # Outside systemd the watchdog task ends at once instead of spinning.
    await asyncio.wait_for(watchdog_pings(Notifier(None), 0.01), timeout=1)


# --- the unit files --------------------------------------------------------------------------


def _systemd_analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        pytest.skip("systemd-analyze not installed (apt-get install systemd)")
    return found


def _installed_units(tmp_path: Path) -> list[Path]:
    """The units with ExecStart pointed at this checkout's tablectl (verify checks it exists)."""
    exe = shutil.which("tablectl") or str(Path(sys.executable).with_name("tablectl"))
    if not Path(exe).is_file():
        exe = sys.executable
    out = []
    for name in UNITS:
        text = (REPO / "systemd" / name).read_text(encoding="utf-8")
        target = tmp_path / name
        target.write_text(text.replace("/usr/local/bin/tablectl", exe), encoding="utf-8")
        out.append(target)
    return out


def test_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    tool = _systemd_analyze()
    units = _installed_units(tmp_path)
    result = subprocess.run(
        [tool, "verify", "--man=no", *map(str, units)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "tablectl" not in result.stderr, result.stderr  # warnings name the unit


def test_table_unit_sandbox_is_rated_ok(tmp_path: Path) -> None:
    tool = _systemd_analyze()
    unit = _installed_units(tmp_path)[0]
    # --threshold is the exposure × 10: fail above 2.5 (2.0 "OK" today).
    result = subprocess.run(
        [tool, "security", "--offline=yes", "--threshold=25", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if "--offline" in result.stderr and "unrecognized" in result.stderr:
        pytest.skip("systemd-analyze security --offline needs systemd ≥ 250")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr


def _directives(name: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in (REPO / "systemd" / name).read_text(encoding="utf-8").splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            found.setdefault(key.strip(), []).append(value.strip())
    return found


def test_table_unit_is_a_notify_service_with_a_watchdog_and_a_sandbox() -> None:
    unit = _directives("tablectl@.service")
    expected = {
        "Type": "notify",
        "NotifyAccess": "main",
        "WatchdogSec": "10s",
        "Restart": "on-failure",
        "ProtectSystem": "strict",
        "StateDirectory": "tablectl",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "NoNewPrivileges": "yes",
        "DevicePolicy": "closed",
        "CapabilityBoundingSet": "",
        "RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6 AF_NETLINK AF_CAN",
    }
    for key, value in expected.items():
        assert unit.get(key) == [value], key
    assert set(unit["DeviceAllow"]) >= {
        "char-ttyUSB rw",
        "char-ttyACM rw",
        "char-usb_device rw",
    }
    assert unit["SupplementaryGroups"] == ["dialout plugdev"]
    assert "@system-service" in unit["SystemCallFilter"]
    assert "/etc/tablectl/%i.toml" in unit["ExecStart"][0]
    # The start timeout must outlast the table's bounded readiness wait.
    from tablectl.controller.service.app import READY_TIMEOUT  # noqa: PLC0415

    assert int(unit["TimeoutStartSec"][0].rstrip("s")) > READY_TIMEOUT
    sim = _directives("tablectl-sim@.service")
    assert "simulate ss2 --tcp 127.0.0.1:%i" in sim["ExecStart"][0]


_RULE_PART = re.compile(r'^(?:[A-Z_]+(?:\{[^}]+\})?)(?:==|!=|\+=|-=|:=|=)"[^"]*"$')


def test_udev_rules_are_well_formed_and_name_the_three_devices() -> None:
    names: list[str] = []
    for number, line in enumerate(
        (REPO / "systemd" / "99-tablectl.rules").read_text(encoding="utf-8").splitlines(), 1
    ):
        if not line.strip() or line.startswith("#"):
            continue
        for part in line.split(", "):
            assert _RULE_PART.match(part.strip()), f"line {number}: {part!r}"
        names += re.findall(r'SYMLINK\+="tablectl/(\w+)"', line)
    assert sorted(names) == ["shoe", "shuffler", "wheel"]
