"""Who may see the dashboard: the users file, HTTP Basic, and the loopback rule (no server)."""

from __future__ import annotations

import base64
import hashlib
import io
import re
import stat
import sys
from pathlib import Path

import pytest

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.service.metrics.server import parse_listen
from tablectl.controller.tools.cli import main
from tablectl.controller.tools.dashboard.auth import (
    BasicLogin,
    DashboardError,
    add_user,
    check_exposure,
    hash_password,
    is_loopback,
    load_users,
    verify_password,
)


def _basic(name: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()


def test_a_password_hash_is_salted_scrypt_and_verifies() -> None:
    entry = hash_password("s3cret")
    assert entry.startswith("scrypt$16384$8$1$")
    assert entry != hash_password("s3cret")  # a new salt each time
    assert verify_password("s3cret", entry)
    assert not verify_password("s3cret ", entry)
    assert not verify_password("s3cret", "md5$whatever")
    assert not verify_password("s3cret", "scrypt$x$8$1$AAAA$AAAA")
    assert not verify_password("s3cret", "scrypt$131072$32$1$" + "A" * 22 + "$" + "A" * 43)


def test_a_users_file_written_by_earlier_versions_still_verifies() -> None:
    # Earlier versions wrote a 64-byte digest, base64 padded, from their own scrypt call.
    salt = bytes(range(16))
    digest = hashlib.scrypt(b"s3cret", salt=salt, n=2**14, r=8, p=1, maxmem=64 * 1024 * 1024)
    entry = "scrypt$16384$8$1$" + base64.b64encode(salt).decode() + "$"
    entry += base64.b64encode(digest).decode()
    assert verify_password("s3cret", entry)
    assert not verify_password("s3cre7", entry)


def test_add_user_writes_an_owner_only_file_and_updates_in_place(tmp_path: Path) -> None:
    users = tmp_path / "users"
    add_user(users, "pit-boss", "first")
    add_user(users, "tech", "second")
    add_user(users, "pit-boss", "third")
    assert stat.S_IMODE(users.stat().st_mode) == 0o600
    lines = users.read_text().splitlines()
    assert [line.split(":")[0] for line in lines] == ["tech", "pit-boss"]
    loaded = load_users(users)
    assert loaded.check("pit-boss", "third")
    assert not loaded.check("pit-boss", "first")
    assert not loaded.check("nobody", "third")
    with pytest.raises(ConfigError, match="user name"):
        add_user(users, "bad:name", "x")


def test_a_users_file_others_can_read_is_refused(tmp_path: Path) -> None:
    users = tmp_path / "users"
    add_user(users, "pit", "pw")
    users.chmod(0o644)
    with pytest.raises(ConfigError, match=r"mode 0644, readable by group/others \(chmod 600\)"):
        load_users(users)


def test_a_malformed_or_empty_users_file_is_refused(tmp_path: Path) -> None:
    users = tmp_path / "users"
    users.write_text("# nobody yet\n")
    users.chmod(0o600)
    with pytest.raises(ConfigError, match="no user"):
        load_users(users)
    users.write_text("pit:plaintext\n")
    with pytest.raises(ConfigError, match="line 1: expected name:scrypt"):
        load_users(users)


def test_basic_login_checks_once_then_remembers(tmp_path: Path) -> None:
    users = tmp_path / "users"
    add_user(users, "pit", "pw")
    login = BasicLogin(load_users(users))
    good = _basic("pit", "pw")
    assert not login.known(good)
    assert login.verify(good)
    login.remember(good)
    assert login.known(good)
    assert not login.verify(_basic("pit", "nope"))
    assert not login.verify("Bearer abc")
    assert not login.verify("Basic !!!")
    assert not login.verify(None)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_needs_nothing(host: str) -> None:
    assert is_loopback(host)
    check_exposure(host, tls=False, login=False)


@pytest.mark.parametrize(
    ("tls", "login", "missing"),
    [
        (False, False, "TLS (--tls-cert, --tls-key) and a login (--users FILE)"),
        (True, False, "a login (--users FILE)"),
        (False, True, "TLS (--tls-cert, --tls-key)"),
    ],
)
def test_beyond_the_loopback_tls_and_a_login_are_both_required(
    tls: bool, login: bool, missing: str
) -> None:
    for host in ("0.0.0.0", "192.0.2.10", "::", "pit-screen.example"):  # noqa: S104 - the refusal
        with pytest.raises(DashboardError, match=re.escape(f"without {missing} (docs")):
            check_exposure(host, tls=tls, login=login)
    check_exposure("0.0.0.0", tls=True, login=True)  # noqa: S104


def test_listen_addresses(capsys: pytest.CaptureFixture[str]) -> None:
    # The dashboard's --listen goes through the one listen parser (the metrics endpoint's).
    assert main(["dashboard", "--listen", "8080"]) == 1
    err = capsys.readouterr().err
    assert err == "tablectl dashboard: --listen '8080': expected HOST:PORT, e.g. 127.0.0.1:8080\n"
    assert parse_listen("127.0.0.1:8080", what="--listen") == ("127.0.0.1", 8080)
    assert parse_listen("[::1]:9000", what="--listen") == ("::1", 9000)
    for bad in ("8080", "host:", ":80", "host:http", "h:70000"):
        with pytest.raises(ConfigError, match=r"^--listen '.*': expected HOST:PORT, e\.g\. 1"):
            parse_listen(bad, what="--listen", example="127.0.0.1:8080")


def test_cli_refuses_a_network_address_without_tls_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["dashboard", "--listen", "0.0.0.0:8080"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1
    assert err.startswith("tablectl dashboard: refusing to listen on 0.0.0.0, beyond the loopback")
    assert "Traceback" not in err


def test_cli_adds_a_user_from_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    users = tmp_path / "users"
    monkeypatch.setattr("sys.stdin", io.StringIO("hunter2\n"))
    assert main(["dashboard", "--users", str(users), "--add-user", "pit"]) == 0
    assert "pit written to" in capsys.readouterr().out
    assert load_users(users).check("pit", "hunter2")


def test_dashboard_help_has_defaults_and_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["dashboard", "--help"])
    out = " ".join(capsys.readouterr().out.split())  # however the help is wrapped
    assert "(default: 127.0.0.1:8080)" in out
    assert "example: tablectl dashboard --url mqtt://" in out


def test_without_the_dashboard_extra_it_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if not installed
    assert main(["dashboard"]) == 69
    err = capsys.readouterr().err
    assert err == (
        "tablectl dashboard: needs the dashboard extra (uvicorn is missing): "
        "pip install 'tablectl[dashboard]'\n"
    )
