"""Who may see the dashboard: the loopback rule, TLS, and the users file (HTTP Basic).

Any address but loopback needs **both** TLS and ``--users FILE`` (Basic sends the password with
every request; docs/dashboard.md). :class:`Throttle` makes a flood cost one scrypt at a time.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hmac
import ipaddress
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tablectl.controller.core.errors import ConfigError, ControllerError
from tablectl.controller.secrets import read_secret, write_secret
from tablectl.controller.staff.credentials import CredentialError, SlowHash, hash_secret

_NAME: Final = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
_WHAT: Final = "dashboard users file"


class DashboardError(ControllerError):
    """The dashboard cannot start as asked (an exposure without TLS or login, a bad file)."""


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    """``scrypt$N$r$p$salt$hash`` for ``password`` (the staff roster's form: one scrypt of ours,
    :mod:`tablectl.controller.staff.credentials`); a random 16-byte salt by default."""
    return str(hash_secret(password, salt=salt))


def verify_password(password: str, entry: str) -> bool:
    """Whether ``password`` matches ``entry`` (False for an entry that is not ours)."""
    try:
        return SlowHash.parse(entry).matches(password)
    except CredentialError:
        return False


@dataclass(frozen=True)
class Users:
    """The users file's entries, ``name → scrypt entry``."""

    entries: Mapping[str, str]

    def check(self, name: str, password: str) -> bool:
        entry = self.entries.get(name)
        if entry is None:
            # The same work for an unknown name: the answer's timing does not tell names apart.
            verify_password(password, _DUMMY)
            return False
        return verify_password(password, entry)


_DUMMY: Final = hash_password("", salt=b"\0" * 16)


def _parse(text: str, path: Path) -> dict[str, str]:
    entries: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, entry = line.partition(":")
        if not sep or not _NAME.fullmatch(name) or not entry.startswith("scrypt$"):
            raise ConfigError(
                f"{_WHAT} {path} line {number}: expected name:scrypt$… (tablectl dashboard "
                "--users FILE --add-user NAME writes one)"
            )
        entries[name] = entry
    return entries


def load_users(path: Path) -> Users:
    """The users at ``path`` (owner-readable only, at least one)."""
    data = read_secret(path, _WHAT)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{_WHAT} {path}: not UTF-8 text") from None
    entries = _parse(text, path)
    if not entries:
        raise ConfigError(f"{_WHAT} {path}: no user (add one with --add-user NAME)")
    return Users(entries)


def add_user(path: Path, name: str, password: str) -> None:
    """Create or update ``name``'s entry; the file is written owner-only (0600), atomically."""
    if not _NAME.fullmatch(name):
        raise ConfigError(f"user name {name!r}: 1-64 of A-Z a-z 0-9 _ . @ -")
    if not password:
        raise ConfigError("empty password")
    lines: list[str] = []
    if path.exists():
        text = read_secret(path, _WHAT).decode("utf-8", "replace")
        _parse(text, path)
        lines = [line for line in text.splitlines() if line.partition(":")[0].strip() != name]
    lines.append(f"{name}:{hash_password(password)}")
    write_secret(path, "\n".join(lines) + "\n")


def is_loopback(host: str) -> bool:
    """``localhost``, 127.0.0.0/8 or ``::1`` (an empty host or ``0.0.0.0`` is every address)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, *, tls: bool, login: bool) -> None:
    """Refuse a non-loopback address without both TLS and a login (see the module docstring).

    Raises:
        DashboardError: naming what is missing.
    """
    if is_loopback(host):
        return
    missing = [
        what
        for what, ok in (("TLS (--tls-cert, --tls-key)", tls), ("a login (--users FILE)", login))
        if not ok
    ]
    if missing:
        raise DashboardError(
            f"refusing to listen on {host}, beyond the loopback, without "
            f"{' and '.join(missing)} (docs/dashboard.md)"
        )


class BasicLogin:
    """HTTP Basic against :class:`Users`, with a small cache of headers already verified so that
    a page's script, stylesheet and live stream do not each pay scrypt's cost (the cache keys are
    HMACs under a per-process key: no password is kept)."""

    REALM: Final = "tablectl dashboard"

    def __init__(self, users: Users, *, cache: int = 256) -> None:
        self._users = users
        self._key = secrets.token_bytes(32)
        self._good: OrderedDict[bytes, None] = OrderedDict()
        self._cache = cache

    def _mark(self, header: str) -> bytes:
        return hmac.new(self._key, header.encode("latin-1", "replace"), "sha256").digest()

    def known(self, header: str | None) -> bool:
        """A header that passed :meth:`verify` before (cheap; on the event loop)."""
        if not header:
            return False
        mark = self._mark(header)
        if mark in self._good:
            self._good.move_to_end(mark)
            return True
        return False

    def verify(self, header: str | None) -> bool:
        """Check ``Authorization: Basic …`` against the users (scrypt: run it in a thread)."""
        if not header:
            return False
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            raw = base64.b64decode(token.strip(), validate=True).decode("utf-8")
        except (ValueError, binascii.Error, UnicodeDecodeError):
            return False
        name, sep, password = raw.partition(":")
        return bool(sep) and self._users.check(name, password)

    @staticmethod
    def user_of(header: str | None) -> str | None:
        """The user name an ``Authorization: Basic`` header claims (``None``: none readable)."""
        if not header:
            return None
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            raw = base64.b64decode(token.strip(), validate=True).decode("utf-8")
        except (ValueError, binascii.Error, UnicodeDecodeError):
            return None
        name, sep, _ = raw.partition(":")
        return name[:64] if sep else None

    def remember(self, header: str) -> None:
        """Cache a header :meth:`verify` accepted (on the event loop)."""
        self._good[self._mark(header)] = None
        if len(self._good) > self._cache:
            self._good.popitem(last=False)


class BusyError(Exception):
    """Too many login attempts waiting for one source or name: answer 429 at once."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"retry after {retry_after:.0f} s")
        self.retry_after = retry_after


@dataclass
class _Failures:
    count: int = 0
    until: float = 0.0
    """When the next attempt may be checked (monotonic seconds)."""
    last: float = 0.0
    waiting: int = 0
    lock: asyncio.Lock | None = None


class Throttle:
    """Exponential delays after failed logins, per key (a source address, a user name).

    After ``n`` failures a key waits ``min(most, first * 2**(n-1))`` s; a success clears it, a quiet
    key is forgotten, at most ``keys`` are kept. One attempt per key is checked at a time, at most
    ``queue`` waiting.
    """

    def __init__(
        self,
        *,
        first: float = 0.5,
        most: float = 60.0,
        forget: float = 900.0,
        queue: int = 4,
        keys: int = 8192,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.first = first
        self.most = most
        self.forget = forget
        self.queue = queue
        self._keys = keys
        self._clock = clock
        self._failures: OrderedDict[str, _Failures] = OrderedDict()

    def _get(self, key: str) -> _Failures:
        now = self._clock()
        found = self._failures.get(key)
        if found is not None and found.count and now - found.last > self.forget:
            found.count, found.until = 0, 0.0
        if found is None:
            found = self._failures[key] = _Failures()
            while len(self._failures) > self._keys:
                oldest = next(iter(self._failures))
                if self._failures[oldest].waiting:
                    break
                del self._failures[oldest]
        self._failures.move_to_end(key)
        return found

    def delay(self, keys: Sequence[str]) -> float:
        """Seconds until an attempt for ``keys`` may be checked (0: now)."""
        now = self._clock()
        return max([0.0, *(self._get(key).until - now for key in keys)])

    def failures(self, key: str) -> int:
        """Failures in a row of ``key``."""
        found = self._failures.get(key)
        return found.count if found is not None else 0

    def failed(self, keys: Sequence[str]) -> float:
        """Count a failure for each key; the delay the next attempt will wait."""
        now = self._clock()
        wait = 0.0
        for key in keys:
            entry = self._get(key)
            entry.count += 1
            entry.last = now
            step = min(self.most, self.first * 2 ** min(entry.count - 1, 32))
            entry.until = now + step
            wait = max(wait, step)
        return wait

    def succeeded(self, keys: Sequence[str]) -> None:
        for key in keys:
            entry = self._get(key)
            entry.count, entry.until = 0, 0.0

    @contextlib.asynccontextmanager
    async def turn(self, keys: Sequence[str]) -> AsyncIterator[None]:
        """Wait for this attempt's turn (an ``asyncio`` wait, never blocking anything else);
        ``BusyError`` when more than ``queue`` already wait."""
        entries = [self._get(key) for key in sorted(set(keys))]
        for entry in entries:
            if entry.waiting >= self.queue:
                raise BusyError(max(1.0, self.delay(keys)))
        for entry in entries:
            entry.waiting += 1
        async with contextlib.AsyncExitStack() as stack:
            try:
                for entry in entries:
                    if entry.lock is None:
                        entry.lock = asyncio.Lock()
                    await stack.enter_async_context(entry.lock)
                # The keys' delays only grow by a failure, which holds their locks: one wait.
                wait = self.delay(keys)
                if wait > 0:
                    await asyncio.sleep(wait)
                yield
            finally:
                for entry in entries:
                    entry.waiting -= 1
