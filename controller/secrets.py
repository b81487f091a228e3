"""Secret files: broker passwords and HMAC keys, read only when their owner alone may use them.

One rule for every secret the controller reads (the broker password, the role keys that sign
commands, the journal's anchor key), and a studio device's password file too:
:mod:`tablectl.drivers.transports.secrets` checks the file's mode on the open descriptor before a
byte is read, and a file that group or others may touch is an error naming file and mode. Here
its errors are the :class:`ConfigError` they are to the controller.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Final

from tablectl.controller.core.errors import ConfigError
from tablectl.drivers.errors import DriverInitError
from tablectl.drivers.transports import secrets as secret_files

MIN_KEY_BYTES: Final = 16
"""Shortest role key accepted (128 bits); ``openssl rand -hex 32`` gives 64."""


def read_secret(path: Path, what: str) -> bytes:
    """A secret file's bytes, refused unless only its owner may use it (mode 0600 or 0400).

    Raises:
        ConfigError: naming the file when it is missing, unreadable, open to group/others (and
            how) or too large to be a secret file.
    """
    try:
        return secret_files.read_secret(path, what)
    except DriverInitError as exc:
        raise ConfigError(str(exc)) from None


def write_secret(path: Path, text: str) -> None:
    """Write a secret file (a roster, a users file) owner-only from its first byte and atomically:
    never half written, never readable by others, not even for a moment."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_password_file(path: Path) -> str:
    """The broker password: the first line of ``path`` (without its line break).

    Raises:
        ConfigError: naming the file when it is missing, unreadable, open to group/others
            (mode), empty or not UTF-8.
    """
    try:
        return secret_files.read_password_file(path, "mqtt.password_file")
    except DriverInitError as exc:
        raise ConfigError(str(exc)) from None


def read_key_file(path: Path, role: str) -> bytes:
    """A role's HMAC key: the file's content without surrounding whitespace.

    Raises:
        ConfigError: naming the role and file when missing, unreadable, open to group/others
            (mode) or shorter than :data:`MIN_KEY_BYTES`.
    """
    return read_key(path, f"security.roles.{role}")


def read_key(path: Path, what: str) -> bytes:
    """An HMAC key file (a role's, the journal's): owner-only, at least 16 bytes."""
    key = read_secret(path, what).strip()
    if len(key) < MIN_KEY_BYTES:
        raise ConfigError(
            f"{what} {path}: key has {len(key)} bytes, need at least "
            f"{MIN_KEY_BYTES} (make one with: openssl rand -hex 32)"
        )
    return key


def read_journal_key(path: Path, what: str = "journal.key_file") -> bytes:
    """The journal's HMAC key (``[journal] key_file``, :mod:`tablectl.controller.journal.anchors`;
    R13, R15).

    The keyed anchors are worth only as much as the key is out of reach of whoever can edit the
    journal: owner-only like every secret file (the config also refuses a key inside the
    journal's directory). ``what`` names the setting in errors (``verify --key`` for the
    verifier's copy).

    Raises:
        ConfigError: naming the file when it is missing or unreadable, grants group/other any
            permission, or holds fewer than :data:`MIN_KEY_BYTES` bytes.
    """
    return read_key(path, what)
