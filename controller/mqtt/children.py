"""A child a command starts dies with it, however the command ends: Linux's parent-death signal.

An orderly stop ends its children itself (the embedded broker's ``stop`` terminates Mosquitto);
this is for the other ends — SIGKILL, the OOM killer, a crash in C — after which a child in its
own session (as the embedded broker is, so that a Ctrl-C at the terminal reaches the command
first) would otherwise run on as an orphan. Every place that spawns a process passes
:func:`die_with_parent` as ``preexec_fn`` (``subprocess.Popen``,
``asyncio.create_subprocess_exec``); that is the one mechanism. It lives beside the one child
the controller starts today (the embedded broker): ``controller.core`` must stay pure, and the
service, the archive, the tools and the lab may all import this layer.

What it does: ``prctl(PR_SET_PDEATHSIG, SIGTERM)`` in the child between ``fork`` and ``exec``,
then a check that the parent did not die before that call (the signal would never come). Limits,
from ``prctl(2)``: the signal follows the *thread* that forked (spawn from the event loop's
thread, which lives as long as the command); it is cleared when the child executes a set-user-ID
binary or changes its user or group — so a child that would drop privileges must be told not to
(the embedded Mosquitto, started as root, is configured to stay the same user). Elsewhere than
Linux there is no such signal and :func:`die_with_parent` returns ``None`` (no ``preexec_fn``).
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
