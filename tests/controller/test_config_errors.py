"""Config errors (issue 11, defect 8): ``check-config`` refuses what ``run`` refuses, the same way.

One exit code (78, EX_CONFIG) for both, one line naming the file and the key, and ``run`` checks
everything, secret files included, before it binds a socket or opens a journal or a device.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.tools.cli import EXIT_CONFIG, main
from tablectl.drivers.transports.serial import serial_url_problem
from tests.support.mosquitto import free_port

REPO = Path(__file__).resolve().parents[2]
KEY = "k" * 32


def _write(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def _config(
    tmp_path: Path,
    *,
    device: str = 'id = "wheel"\ndriver = "cammegh-ss2"\nport = "socket://127.0.0.1:1"',
    mqtt: str = "",
    security: str = "",
    metrics: str = "",
    table: str = "ROU-T1",
) -> Path:
    return _write(
        tmp_path / "table.toml",
        f"""
[table]
id = "{table}"
game = "roulette"
[mqtt]
url = "mqtt://127.0.0.1:1"
{mqtt}
[journal]
path = "{tmp_path / "journal" / "j.sqlite"}"
{security}
{metrics}
[[devices]]
{device}
""",
        0o644,  # a config file is not a secret
    )


def _check(config: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["check-config", str(config)])
    return code, capsys.readouterr().err


def _wheel(port: str | None, driver: str = "cammegh-ss2") -> str:
    line = f'port = "{port}"' if port is not None else ""
    return f'id = "wheel"\ndriver = "{driver}"\n{line}'


# --- 1. one exit code ---------------------------------------------------------------------------


def test_check_config_exits_78_like_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path, device=_wheel("socket://127.0.0.1:1") + "\ncolour = 3")
    assert main(["check-config", str(config)]) == EXIT_CONFIG == 78
    assert main(["run", "--config", str(config)]) == 78
    check, run = capsys.readouterr().err.splitlines()
    assert check.removeprefix("tablectl check-config: ") == run.removeprefix("tablectl run: ")


# --- 2. serial ports: what run would refuse, refused at check time ------------------------------


@pytest.mark.parametrize(
    ("port", "problem"),
    [
        ("socket://127.0.0.1:70000", "TCP port 70000 is out of range 1-65535"),
        ("socket://127.0.0.1:0", "TCP port 0 is out of range 1-65535"),
        ("socket://127.0.0.1", "needs a TCP port"),
        ("socket://127.0.0.1:abc", "TCP port 'abc' is not a number"),
        ("socket://:7001", "needs HOST:PORT"),
        ("socket://127.0.0.1:7001?logging=loud", "logging='loud'"),
        ("socket://127.0.0.1:7001?baud=9600", "unknown option: 'baud'"),
        ("rfc2217://10.0.0.5:99999", "TCP port 99999 is out of range"),
        ("rfc2217://10.0.0.5", "needs a TCP port"),
        ("rfc2217://10.0.0.5:2217?timeout=soon", "float: 'soon'"),
        ("loop://?colour=red", "unknown option: 'colour'"),
        ("spy://", "needs a device path"),
        ("alt:///dev/ttyS0?class=Fast", "unknown class: 'Fast'"),
        ("hwgrep://(", "regular expression"),
        ("bogus://x", "unknown URL scheme 'bogus://'"),
        ("", "empty"),
        (" /dev/ttyUSB0", "whitespace"),
    ],
)
def test_a_malformed_port_fails_check_config_naming_file_entry_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], port: str, problem: str
) -> None:
    config = _config(tmp_path, device=_wheel(port))
    code, err = _check(config, capsys)
    assert code == 78, err
    prefix = f"tablectl check-config: {config}: devices[0] (id 'wheel', driver 'cammegh-ss2'): "
    assert err.startswith(f"{prefix}port {port!r}: "), err
    assert problem in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    "port",
    [
        "/dev/tablectl-unplugged-wheel-0",  # absent now: the device may be unplugged
        "/dev/serial/by-id/usb-FTDI_FT232R_A1B2C3-if00-port0",
        "socket://127.0.0.1:7001",
        "socket://[::1]:7001",
        "socket://wheel.local:65535?logging=debug",
        "rfc2217://10.0.0.5:2217?poll_modem&ign_set_control&timeout=3",
        "loop://",
        "spy:///dev/ttyUSB0?color",
        "alt:///dev/ttyS0?class=PosixPollSerial",
        "hwgrep://FTDI&n=2&skip_busy",
    ],
)
def test_a_well_formed_port_passes_check_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], port: str
) -> None:
    code, err = _check(_config(tmp_path, device=_wheel(port)), capsys)
    assert (code, err) == (0, "")
    assert serial_url_problem(port) is None


def test_pyserial_rejects_what_the_check_rejects() -> None:
    # The check follows pyserial's URL handlers; for these it must not be more lenient.
    import serial  # noqa: PLC0415 - the real library, as run uses it

    for url in ("socket://127.0.0.1:70000", "socket://h:1?x=1", "rfc2217://h:99999", "bogus://x"):
        assert serial_url_problem(url) is not None
        with pytest.raises((serial.SerialException, ValueError, KeyError, TypeError)):
            _parse_as_pyserial(url)


def test_the_check_acts_on_nothing(tmp_path: Path) -> None:
    # pyserial's parsers open spy's ?file= for writing, open each port hwgrep's skip_busy
    # matches and set up logging for ?logging=: the check leaves those options out.
    trace = tmp_path / "spy.txt"
    root = logging.getLogger()
    handlers = list(root.handlers)
    for url in (
        f"spy:///dev/ttyUSB0?file={trace}&color",
        "socket://127.0.0.1:7001?logging=debug",
        "loop://?logging=info",
        "hwgrep://tablectl-no-such-port&skip_busy",
    ):
        assert serial_url_problem(url) is None, url
    assert not trace.exists()
    assert root.handlers == handlers
    assert "spy://port" in (serial_url_problem(f"spy:///dev/ttyUSB0?file={trace}&colour") or "")


def test_a_handler_added_to_pyserial_is_known(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The schemes are pyserial's own registry (serial.protocol_handler_packages), not a copy.
    import serial  # noqa: PLC0415

    package = tmp_path / "bench_handlers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "protocol_bench.py").write_text(
        "from serial.urlhandler import protocol_loop\n"
        "class Serial(protocol_loop.Serial):\n"
        "    def from_url(self, url):\n"
        "        return None\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(serial, "protocol_handler_packages", [*serial.protocol_handler_packages])
    assert "unknown URL scheme 'bench://'" in (serial_url_problem("bench://") or "")
    serial.protocol_handler_packages.append("bench_handlers")
    assert serial_url_problem("bench://") is None
    assert "bench://" in (serial_url_problem("bogus://x") or "")


def _parse_as_pyserial(url: str) -> None:
    import serial  # noqa: PLC0415

    # What SerialStream.open does, minus the connect: find the handler, parse the URL.
    serial.serial_for_url(url, do_not_open=True).from_url(url)


def test_run_refuses_a_malformed_port_at_start_not_by_reconnecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, device=_wheel("socket://127.0.0.1:70000"))
    assert main(["run", "--config", str(config)]) == 78
    err = capsys.readouterr().err
    assert "devices[0] (id 'wheel', driver 'cammegh-ss2'): port" in err
    assert not (tmp_path / "journal").exists()


# --- 3. a missing port, and every device error in one format ------------------------------------


@pytest.mark.parametrize(
    "driver", ["cammegh-ss2", "serial-shoe", "tablectl-shuffler", "tablectl-bigwheel"]
)
def test_a_missing_port_names_file_entry_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], driver: str
) -> None:
    config = _config(tmp_path, device=_wheel(None, driver))
    code, err = _check(config, capsys)
    assert code == 78
    assert err.startswith(
        f"tablectl check-config: {config}: devices[0] (id 'wheel', driver '{driver}'): "
        "missing key 'port' ("
    ), err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("device", "problem"),
    [
        (_wheel("loop://") + "\ncolour = 3", "unknown key 'colour'"),
        (_wheel("loop://") + "\nsilence_timeout = -1", "silence_timeout: "),
        (_wheel("loop://", "cammegh-ss9"), "unknown driver 'cammegh-ss9'"),
        (
            _wheel("/dev/ttyUSB0", "hid-shoe") + "\nvid = 1\npid = 2",
            "a HID shoe is found by its vid/pid",
        ),
        (_wheel(None, "hid-shoe"), "a HID shoe needs the vid and pid"),
        (_wheel("can0", "tablectl-drum") + '\nchannel = "can1"', "port 'can0' and channel"),
        (_wheel(None, "tablectl-shuffler") + '\ntransport = "usb"', 'transport = "usb" needs'),
        ('id = "wheel"\nport = "loop://"', "missing key 'driver'"),
        (_wheel("loop://") + "\nport_x = 1\nbaud = 2", "unknown key 'port_x'; unknown key 'baud'"),
    ],
)
def test_every_device_error_has_one_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], device: str, problem: str
) -> None:
    config = _config(tmp_path, device=device)
    code, err = _check(config, capsys)
    assert code == 78, err
    entry = "devices[0] (id 'wheel')" if "driver" not in device else "devices[0] (id 'wheel', "
    assert err.startswith(f"tablectl check-config: {config}: {entry}"), err
    assert f"): {problem}" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ('[metrics]\nlisten = "127.0.0.1:99999"', "metrics.listen: port of '127.0.0.1:99999'"),
        ('embedded_listen = "127.0.0.1:70000"', "mqtt.embedded_listen: port of"),
    ],
)
def test_listen_addresses_run_cannot_bind_fail_at_check_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], section: str, message: str
) -> None:
    if section.startswith("["):
        config = _config(tmp_path, metrics=section)
    else:
        config = _config(tmp_path, mqtt=section)
    code, err = _check(config, capsys)
    assert code == 78
    assert f"{config}: {message}" in err


def test_a_broker_url_run_cannot_use_fails_at_check_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path)
    config.write_text(config.read_text().replace("mqtt://127.0.0.1:1", "mqtt://127.0.0.1:99999"))
    code, err = _check(config, capsys)
    assert code == 78
    assert f"{config}: mqtt.url 'mqtt://127.0.0.1:99999': port" in err


# --- 4. secret files: owner only ----------------------------------------------------------------


def _secured(tmp_path: Path, *, password_mode: int = 0o600, key_mode: int = 0o600) -> Path:
    password = _write(tmp_path / "mqtt.pw", "pw\n", password_mode)
    key = _write(tmp_path / "supervisor.key", KEY + "\n", key_mode)
    return _config(
        tmp_path,
        mqtt=f'username = "ROU-T1"\npassword_file = "{password}"',
        security=f'[security]\nroles = {{ supervisor = "{key}" }}',
    )


@pytest.mark.parametrize("mode", [0o600, 0o400], ids=oct)
def test_owner_only_secret_files_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: int
) -> None:
    code, err = _check(_secured(tmp_path, password_mode=mode, key_mode=mode), capsys)
    assert code == 0, err


@pytest.mark.parametrize(
    ("mode", "how"),
    [(0o644, "readable"), (0o640, "readable"), (0o444, "readable"), (0o620, "writable")],
    ids=["0644", "0640", "0444", "0620"],
)
def test_a_password_file_open_to_others_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: int, how: str
) -> None:
    config = _secured(tmp_path, password_mode=mode)
    code, err = _check(config, capsys)
    assert code == 78
    assert err == (
        f"tablectl check-config: {config}: mqtt.password_file {tmp_path / 'mqtt.pw'}: "
        f"mode {mode:04o}, {how} by group/others (chmod 600)\n"
    )


def test_a_role_key_file_open_to_others_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _secured(tmp_path, key_mode=0o644)
    code, err = _check(config, capsys)
    assert code == 78
    assert err == (
        f"tablectl check-config: {config}: security.roles.supervisor "
        f"{tmp_path / 'supervisor.key'}: mode 0644, readable by group/others (chmod 600)\n"
    )


# --- 5. run checks everything before it opens anything ------------------------------------------


_BAD_FOR_RUN: dict[str, dict[str, Any]] = {
    "password_file_0644": {"password_mode": 0o644},
    "role_key_0644": {"key_mode": 0o644},
    "missing_role_key": {"remove": "supervisor.key"},
    "port_out_of_range": {"port": "socket://127.0.0.1:70000"},
    "missing_port": {"port": None},
}


def _bad_for_run(tmp_path: Path, case: str) -> Path:
    how = _BAD_FOR_RUN[case]
    config = _secured(
        tmp_path,
        password_mode=how.get("password_mode", 0o600),
        key_mode=how.get("key_mode", 0o600),
    )
    if "remove" in how:
        (tmp_path / how["remove"]).unlink()
    if "port" in how:
        text = config.read_text().replace(
            'port = "socket://127.0.0.1:1"',
            f'port = "{how["port"]}"' if how["port"] is not None else "",
        )
        config.write_text(text)
    return config


@pytest.mark.parametrize("case", sorted(_BAD_FOR_RUN))
def test_run_opens_nothing_before_the_config_is_valid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    opened: list[str] = []

    async def no_server(*args: Any, **kwargs: Any) -> Any:
        opened.append(f"socket {args} {kwargs}")
        raise AssertionError("a socket was bound before the config was valid")

    import asyncio  # noqa: PLC0415

    import tablectl.controller.service.app  # noqa: PLC0415

    def no_journal(*args: Any, **kwargs: Any) -> Any:
        opened.append("journal")
        raise AssertionError("the journal was opened before the config was valid")

    monkeypatch.setattr(asyncio, "start_server", no_server)
    monkeypatch.setattr(tablectl.controller.service.app, "Journal", no_journal)
    config = _bad_for_run(tmp_path, case)
    code = main(["run", "--config", str(config), "--metrics-listen", "127.0.0.1:0"])
    err = capsys.readouterr().err
    assert opened == []
    assert code == 78, err
    assert err.startswith(f"tablectl run: {config}: "), err
    assert not (tmp_path / "journal").exists()


@pytest.mark.parametrize("tables", [1, 2])
def test_run_with_a_bad_secret_never_listens_on_the_metrics_port(
    tmp_path: Path, tables: int
) -> None:
    config = _bad_for_run(tmp_path, "password_file_0644")
    configs = [config]
    if tables == 2:  # a host of two tables: the bad one is the second
        good = tmp_path / "good"
        good.mkdir()
        configs.insert(0, _config(good, table="ROU-T0"))
    port = free_port()
    args = [f"--config={c}" for c in configs]
    connected: list[float] = []
    done = threading.Event()

    def probe() -> None:
        while not done.is_set():
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.05):
                connected.append(time.monotonic())
            time.sleep(0.002)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "tablectl",
                "run",
                *args,
                "--metrics-listen",
                f"127.0.0.1:{port}",
            ],
            capture_output=True,
            text=True,
            timeout=20,
            env=env,
            cwd=REPO,
            check=False,
        )
    finally:
        done.set()
        prober.join()
    assert result.returncode == 78, result.stderr
    assert connected == []
    assert result.stderr.splitlines()[-1].startswith(f"tablectl run: {config}: mqtt.password_file")
    with socket.socket() as again:  # and it is free now: nothing was left behind
        again.bind(("127.0.0.1", port))
    assert not (tmp_path / "journal").exists()
