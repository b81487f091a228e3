"""The one secret-file rule (drivers.transports.secrets): a device's password file and the
controller's secrets are refused alike unless only their owner may use them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.secrets import read_password_file as controller_password
from tablectl.drivers.errors import DriverInitError
from tablectl.drivers.transports.mqtt import endpoint_from_url
from tablectl.drivers.transports.secrets import MAX_SECRET_BYTES, read_password_file


def _secret(tmp_path: Path, data: bytes, mode: int = 0o600) -> Path:
    path = tmp_path / "secret"
    path.write_bytes(data)
    path.chmod(mode)
    return path


def test_the_first_line_of_an_owner_only_file(tmp_path: Path) -> None:
    assert read_password_file(_secret(tmp_path, b"s3cret pass\nignored\n")) == "s3cret pass"


@pytest.mark.parametrize(
    ("data", "mode", "problem"),
    [
        (b"pw\n", 0o644, "mode 0644, readable by group/others (chmod 600)"),
        (b"pw\n", 0o620, "mode 0620, writable by group/others (chmod 600)"),
        (b"pw\n", 0o601, "mode 0601, executable by group/others (chmod 600)"),
        (b"\n", 0o600, "empty first line"),
        (b"\xff\n", 0o400, "not UTF-8 text"),
        (b"x" * (MAX_SECRET_BYTES + 1), 0o600, "not a secret file"),
    ],
)
def test_refused_alike_by_a_device_and_the_controller(
    tmp_path: Path, data: bytes, mode: int, problem: str
) -> None:
    path = _secret(tmp_path, data, mode)
    said = rf"{re.escape(str(path))}: .*{re.escape(problem)}"
    with pytest.raises(DriverInitError, match=rf"^password_file {said}"):
        read_password_file(path)
    with pytest.raises(ConfigError, match=rf"^mqtt\.password_file {said}"):
        controller_password(path)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(DriverInitError, match=r"^password_file .*absent: cannot read"):
        read_password_file(tmp_path / "absent")


def test_a_studio_device_endpoint_reads_its_password_by_the_rule(tmp_path: Path) -> None:
    path = _secret(tmp_path, b"pw\n", 0o640)
    with pytest.raises(DriverInitError, match=r"readable by group/others"):
        endpoint_from_url("mqtt://studio.local", username="dice", password_file=path)
    path.chmod(0o600)
    endpoint = endpoint_from_url("mqtt://studio.local", password_file=path)
    assert endpoint.password == "pw"  # noqa: S105 - the test file's content
