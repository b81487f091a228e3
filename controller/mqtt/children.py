"""A child a command starts dies with it, however the command ends: Linux's parent-death signal.

For SIGKILL, OOM or a crash in C, after which the embedded broker would run on as an orphan:
:func:`die_with_parent` is every spawn's ``preexec_fn``. Limits (``prctl(2)``): it follows the
forking *thread* (spawn from the loop's thread) and is cleared by a set-user-ID exec. Not in
``controller.core``, which must stay pure.
"""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import sys
from collections.abc import Callable
from typing import Final

_PR_SET_PDEATHSIG: Final = 1
"""``<linux/prctl.h>``."""


@functools.cache
def _prctl() -> Callable[..., int]:
    """``prctl`` from the C library, resolved once in the parent (never in a forked child)."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


def die_with_parent(sig: signal.Signals = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` after which the child gets ``sig`` when this process dies.

    Returns ``None`` where Linux's parent-death signal does not exist (pass it on as it is).
    """
    if not sys.platform.startswith("linux"):
        return None
    prctl = _prctl()
    parent = os.getpid()
    signum = int(sig)

    def in_child() -> None:  # runs in the forked child: no locks, no imports, no logging
        if prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != parent:  # the parent died before prctl: no signal would ever come
            os._exit(1)

    return in_child
