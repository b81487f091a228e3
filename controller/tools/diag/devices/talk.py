"""What the plug-ins that talk to a device share: a conversation (a command and its answer), a
live decoder running the driver's own codec and interpreter, and ``--send TEXT`` as a command."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Generic, Protocol, TypeVar

from tablectl.controller.tools.diag.devices.generic import describe_event
from tablectl.controller.tools.diag.devices.plugins import Decoded, Progress
from tablectl.controller.tools.diag.link import Link
from tablectl.drivers.base import Interpreter
from tablectl.drivers.codec import DecodeError
from tablectl.drivers.events import DeviceEvent
from tablectl.drivers.stx import FrameDecoder

M = TypeVar("M")
K = TypeVar("K")
K_co = TypeVar("K_co", covariant=True)

REPLY_TIMEOUT = 2.0
"""Seconds to wait for a reply to a command; a device answers within a status period or two."""


class _Decoder(Protocol[K_co]):
    def feed(self, data: bytes, /) -> Iterable[K_co]: ...


def is_a(kind: type) -> Callable[[object], bool]:
    """``want`` for a message of type ``kind``."""
    return lambda m: isinstance(m, kind)


def undecodable(error: DecodeError[bytes]) -> Decoded:
    """Bytes that are no valid frame, as a technician reads them, with their JSON form."""
    return Decoded(
        "error",
        f"undecodable: {error.reason}: {error.raw!r}",
        {"type": "decode_error", "reason": error.reason, "raw": error.raw.hex()},
    )


def framed_command(
    text: str, decoder: FrameDecoder[K], frame: Callable[[bytes], bytes]
) -> K | None:
    """The one command ``text`` spells as a reference frame's payload (``STAT``, ``CLRF;1``;
    any case), read by the device's own command decoder; ``None`` when it spells none."""
    try:
        items = decoder.feed(frame(text.strip().upper().encode("ascii")))
    except (UnicodeEncodeError, ValueError):
        return None
    if len(items) != 1 or isinstance(items[0], DecodeError):
        return None
    return items[0]


class Conversation(Generic[M]):
    """Send a command, read decoded messages until one matches or time runs out.

    Messages that do not match are skipped; :attr:`seen` keeps every one looked at, in order.
    """

    def __init__(self, link: Link, decoder: _Decoder[M], encode: Callable[[Any], bytes]) -> None:
        self.link = link
        self._decoder = decoder
        self._encode = encode
        self._pending: deque[M] = deque()
        """Decoded but not yet examined: one chunk often carries several replies (``*W``)."""
        self.seen: list[M] = []

    async def send(self, command: object) -> None:
        await self.link.send(self._encode(command))

    async def wait(
        self, want: Callable[[M], bool], within: float, step: float | None = None
    ) -> M | None:
        """The first message ``want`` accepts within ``within`` seconds (``None`` if none);
        returns ``None`` early after ``step`` seconds, when given, so a caller can show progress
        and call again."""
        deadline = time.monotonic() + (within if step is None else min(within, step))
        while True:
            while self._pending:
                message = self._pending.popleft()
                self.seen.append(message)
                if want(message):
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._pending.extend(self._decoder.feed(await self.link.read(left)))

    async def ask(
        self, command: object | None, want: Callable[[M], bool], within: float = REPLY_TIMEOUT
    ) -> M | None:
        """Send ``command`` (none: only listen), then :meth:`wait` for its answer."""
        if command is not None:
            await self.send(command)
        return await self.wait(want, within)

    async def wait_long(
        self, want: Callable[[M], bool], start: float, within: float, progress: Progress
    ) -> M | None:
        """:meth:`wait` until ``within`` seconds after ``start`` (a self-test's answer), calling
        ``progress`` about once a second meanwhile; ``None``: timed out."""
        while True:
            elapsed = time.monotonic() - start
            if elapsed >= within:
                return None
            found = await self.wait(want, within - elapsed, step=1.0)
            if found is not None:
                return found
            progress(time.monotonic() - start)

    async def next_messages(self, within: float) -> list[M]:
        """What is already decoded, or else what arrives within ``within`` seconds."""
        if not self._pending:
            self._pending.extend(self._decoder.feed(await self.link.read(within)))
        out = list(self._pending)
        self._pending.clear()
        return out

    def last(self, kind: type[K]) -> K | None:
        """The last message of type ``kind`` looked at (``None``: none yet)."""
        return next((m for m in reversed(self.seen) if isinstance(m, kind)), None)


class InterpretedDecoder(Generic[M]):
    """Bytes → the codec's messages and the events the driver's interpreter would report.

    No commands are sent and no timers run by default: diag polls nothing, so the service's "silent"
    verdict would be wrong here. A plug-in overrides the hooks where its device differs.
    """

    def __init__(
        self,
        decoder: _Decoder[M],
        interpreter: Interpreter,
        describe: Callable[[M], Decoded],
    ) -> None:
        self._decoder = decoder
        self._interpreter = interpreter
        self._describe = describe

    def feed(self, data: bytes, now: float) -> list[Decoded]:
        out: list[Decoded] = []
        for message in self._decoder.feed(data):
            shown = self._show(message)
            if shown is not None:
                out.append(shown)
            out += [describe_event(e) for e in self._interpret(message, now)]
        return out + self._commands()

    def tick(self, now: float) -> list[Decoded]:
        del now
        return []

    def _show(self, message: M) -> Decoded | None:
        """How ``message`` is shown (``None``: not at all)."""
        return self._describe(message)

    def _interpret(self, message: M, now: float) -> list[DeviceEvent]:
        return self._interpreter.feed(message, now)

    def _commands(self) -> list[Decoded]:
        """What to show of the commands the service would send now (taken either way)."""
        self._interpreter.take_commands()
        return []
