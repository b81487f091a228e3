"""Secret files: broker passwords and HMAC keys, read only when their owner alone may use them.

One rule for every secret the controller reads (the broker password, the role keys that sign
commands, the journal's anchor key): the file's mode is checked on the open descriptor before a
byte is read, and a file that group or others may touch is an error naming file and mode.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from tablectl.controller.core.errors import ConfigError

__all__ = [
    "MIN_KEY_BYTES",
    "read_journal_key",
    "read_key",
    "read_key_file",
    "read_password_file",
    "read_secret",
]

MIN_KEY_BYTES: Final = 16
"""Shortest role key accepted (128 bits); ``openssl rand -hex 32`` gives 64."""

_MAX_FILE = 64 * 1024
"""A secret file larger than this is not a secret file (a path mix-up): refuse it."""


def read_secret(path: Path, what: str) -> bytes:
    """A secret file's bytes, refused unless only its owner may use it (mode 0600 or 0400).

    No escape hatch: a password or role key that group or others can read is shared with every
    account (and every process) on the table PC, which is what signing and passwords are for.
    Containers mount secrets with a mode (Docker ``mode: 0400``, Kubernetes ``defaultMode``).
    """
    try:
        with path.open("rb") as handle:
            mode = stat.S_IMODE(os.fstat(handle.fileno()).st_mode)
            # Checked before reading: the content of a file that fails never enters the process.
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                how = (
                    "readable"
                    if mode & (stat.S_IRGRP | stat.S_IROTH)
                    else "writable"
                    if mode & (stat.S_IWGRP | stat.S_IWOTH)
                    else "executable"
                )
                raise ConfigError(
                    f"{what} {path}: mode {mode:04o}, {how} by group/others (chmod 600)"
                )
            data = handle.read(_MAX_FILE + 1)
    except OSError as exc:
        raise ConfigError(f"{what} {path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > _MAX_FILE:
        raise ConfigError(f"{what} {path}: larger than {_MAX_FILE} bytes, not a secret file")
    return data


def read_password_file(path: Path) -> str:
    """The broker password: the first line of ``path`` (without its line break).

    Raises:
        ConfigError: naming the file when it is missing, unreadable, open to group/others
            (mode), empty or not UTF-8.
    """
    data = read_secret(path, "mqtt.password_file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"mqtt.password_file {path}: not UTF-8 text") from None
    lines = text.splitlines()
    password = lines[0] if lines else ""
    if not password:
        raise ConfigError(f"mqtt.password_file {path}: empty first line")
    return password


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
