"""A throwaway PKI (made with the ``openssl`` CLI) and a Mosquitto with TLS, passwords and ACLs.

Why the CLI and not a Python crypto package: ``openssl`` is what an operator uses to make a site
CA, so the tests exercise the same kind of files production gets (PEM, SAN for 127.0.0.1 and
localhost, EC P-256 keys, which are quick to make). Two listeners: one authenticates clients by
username + password, the other by client certificate (``use_identity_as_username``: the
certificate's CN is the user the ACL names).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.mosquitto import MosquittoProcess, find_mosquitto, free_port

__all__ = ["Pki", "TlsMosquitto", "find_openssl", "make_pki"]


def find_openssl() -> str | None:
    """Path of the ``openssl`` CLI, or ``None``."""
    return shutil.which("openssl")


def _run(*args: str, cwd: Path) -> None:
    result = subprocess.run(args, cwd=cwd, capture_output=True, check=False, timeout=30)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {result.stderr.decode(errors='replace')}")


@dataclass(frozen=True)
class Pki:
    """Files of a test PKI. ``clients`` maps a CN to its ``(cert, key)``."""

    directory: Path
    ca: Path
    server_cert: Path
    server_key: Path
    clients: Mapping[str, tuple[Path, Path]]
    other_ca: Path
    """A CA that signed nothing here: trusting it instead of ``ca`` must fail the handshake."""


def _new_key(name: str, cwd: Path) -> Path:
    key = cwd / f"{name}.key"
    _run(
        "openssl",
        "genpkey",
        "-algorithm",
        "EC",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-out",
        str(key),
        cwd=cwd,
    )
    return key


def _ca(name: str, cwd: Path) -> tuple[Path, Path]:
    key = _new_key(name, cwd)
    cert = cwd / f"{name}.pem"
    _run(
        "openssl",
        "req",
        "-x509",
        "-new",
        "-key",
        str(key),
        "-out",
        str(cert),
        "-days",
        "2",
        "-subj",
        f"/CN={name}",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        cwd=cwd,
    )
    return cert, key


def _leaf(name: str, ca: tuple[Path, Path], extensions: str, cwd: Path) -> tuple[Path, Path]:
    key = _new_key(name, cwd)
    csr, cert, ext = cwd / f"{name}.csr", cwd / f"{name}.pem", cwd / f"{name}.ext"
    ext.write_text(extensions, encoding="utf-8")
    _run(
        "openssl",
        "req",
        "-new",
        "-key",
        str(key),
        "-out",
        str(csr),
        "-subj",
        f"/CN={name}",
        cwd=cwd,
    )
    _run(
        "openssl",
        "x509",
        "-req",
        "-in",
        str(csr),
        "-CA",
        str(ca[0]),
        "-CAkey",
        str(ca[1]),
        "-CAcreateserial",
        "-out",
        str(cert),
        "-days",
        "2",
        "-extfile",
        str(ext),
        cwd=cwd,
    )
    return cert, key


def make_pki(directory: Path, clients: Sequence[str] = ("table-T1",)) -> Pki:
    """A CA, a server certificate for 127.0.0.1/localhost, one client certificate per CN."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = _ca("test-ca", directory)
    server = _leaf(
        "broker",
        ca,
        "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
        directory,
    )
    issued = {
        cn: _leaf(cn, ca, "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n", directory)
        for cn in clients
    }
    other, _ = _ca("other-ca", directory)
    return Pki(directory, ca[0], server[0], server[1], issued, other)


EXAMPLE_CONFIG = Path(__file__).resolve().parents[2] / "config" / "mosquitto-tls.example.conf"
EXAMPLE_ACL = Path(__file__).resolve().parents[2] / "config" / "mosquitto-acl.example"


class TlsMosquitto(MosquittoProcess):
    """Mosquitto running the shipped ``config/mosquitto-tls.example.conf`` (paths and ports
    substituted), so the example is known to work: ``port`` takes username + password over TLS,
    ``cert_port`` a client certificate (its CN is the username). Anonymous clients are refused.

    Args:
        users: username → password (hashed into the password file with ``mosquitto_passwd``).
        acl: the ACL file's text (default: ``config/mosquitto-acl.example``).
        config: the shipped config to run (default: ``config/mosquitto-tls.example.conf``).
    """

    def __init__(
        self,
        workdir: Path,
        pki: Pki,
        *,
        users: Mapping[str, str],
        acl: str | None = None,
        config: Path = EXAMPLE_CONFIG,
        binary: str | None = None,
    ) -> None:
        super().__init__(workdir, binary)
        self.pki = pki
        self.config = config
        self.cert_port = free_port(self.host)
        self.acl_path = workdir / "acl"
        self.acl_path.write_text(
            acl if acl is not None else EXAMPLE_ACL.read_text(encoding="utf-8"), encoding="utf-8"
        )
        self.passwd_path = workdir / "passwd"
        self.passwd_path.write_text("", encoding="utf-8")
        self.passwd_path.chmod(0o600)
        passwd = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
        for user, password in users.items():
            _run(passwd, "-b", str(self.passwd_path), user, password, cwd=workdir)

    @property
    def url(self) -> str:
        return f"mqtts://{self.host}:{self.port}"

    @property
    def cert_url(self) -> str:
        return f"mqtts://{self.host}:{self.cert_port}"

    def config_text(self) -> str:
        text = self.config.read_text(encoding="utf-8")
        substitutions = {
            _setting(text, "password_file"): f"password_file {self.passwd_path}\n",
            _setting(text, "acl_file"): f"acl_file {self.acl_path}\n",
            "/etc/mosquitto/certs/ca.pem": str(self.pki.ca),
            "/etc/mosquitto/certs/broker.pem": str(self.pki.server_cert),
            "/etc/mosquitto/certs/broker.key": str(self.pki.server_key),
            "listener 8883\n": f"listener {self.port} {self.host}\n",
            "listener 8884\n": f"listener {self.cert_port} {self.host}\n",
            "persistence true\n": "persistence false\n",
            "persistence_location /var/lib/mosquitto/\n": "",
        }
        for old, new in substitutions.items():
            if old not in text:
                raise AssertionError(f"{self.config.name} no longer contains {old!r}")
            text = text.replace(old, new)
        return (
            # Stay root when started as root (the test machine): the files live in pytest's 0700
            # tmp directories, which the "mosquitto" user could not read.
            "user root\nlog_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\n" + text
        )


def _setting(text: str, name: str) -> str:
    """The line of a Mosquitto config that sets ``name`` (its shipped path is substituted)."""
    found = re.search(rf"^{name} \S+\n", text, re.MULTILINE)
    if found is None:
        raise AssertionError(f"the config no longer sets {name}")
    return found.group(0)


def pki_or_skip(directory: Path, table: str) -> Pki:
    """A PKI with a client certificate for ``table``; the test is skipped without ``openssl``."""
    if find_openssl() is None:
        pytest.skip("openssl CLI not found")
    return make_pki(directory, clients=(table,))


@contextlib.contextmanager
def tls_mosquitto(directory: Path, pki: Pki, users: Mapping[str, str]) -> Iterator[TlsMosquitto]:
    """A running :class:`TlsMosquitto`; the test is skipped without a ``mosquitto`` binary."""
    binary = find_mosquitto()
    if binary is None:
        pytest.skip("mosquitto binary not found (apt-get install mosquitto)")
    with TlsMosquitto(directory, pki, users=users, binary=binary) as process:
        yield process
