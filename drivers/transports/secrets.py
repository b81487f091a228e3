"""Secret files (a broker password, a key), read only when their owner alone may use them.

One rule for every secret file, a device's ``password_file`` and the controller's: the mode is
checked on the open descriptor before a byte is read. In ``drivers`` because the controller may
import drivers and not the other way round.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from tablectl.drivers.errors import DriverInitError

MAX_SECRET_BYTES: Final = 64 * 1024
"""A secret file larger than this is not a secret file (a path mix-up): refuse it."""


def read_secret(path: Path, what: str) -> bytes:
    """A secret file's bytes, refused unless only its owner may use it (mode 0600 or 0400).

    No escape hatch: a secret readable by others is shared with every account on the table PC.
    Containers mount secrets with a mode (Docker ``mode: 0400``, Kubernetes ``defaultMode``).
    ``what`` names the setting in errors.
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
                raise DriverInitError(
                    f"{what} {path}: mode {mode:04o}, {how} by group/others (chmod 600)"
                )
            data = handle.read(MAX_SECRET_BYTES + 1)
    except OSError as exc:
        raise DriverInitError(f"{what} {path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_SECRET_BYTES:
        raise DriverInitError(
            f"{what} {path}: larger than {MAX_SECRET_BYTES} bytes, not a secret file"
        )
    return data


def read_password_file(path: Path, what: str = "password_file") -> str:
    """A broker password: the first line of ``path`` (UTF-8, not empty), read as
    :func:`read_secret`.
    """
    data = read_secret(path, what)
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise DriverInitError(f"{what} {path}: not UTF-8 text") from None
    if not lines or not lines[0]:
        raise DriverInitError(f"{what} {path}: empty first line")
    return lines[0]
