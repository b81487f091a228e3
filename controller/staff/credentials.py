"""Badge ids and PINs as salted slow hashes (scrypt, stdlib): the roster never holds either.

A hash is one string, ``scrypt$N$r$p$SALT$HASH`` (salt and hash in base64; the dashboard's
users file has the same form), so the cost travels with it and a roster made with stronger
parameters later still verifies. A PIN's salt is its own; a badge's is the roster's
``badge_salt``, because a swiped badge has to be *found* (one hash per swipe, not one per
person) — still salted per venue and slow.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Final

from tablectl.controller.core.errors import ControllerError

MIN_COST: Final = 2**14
"""Smallest scrypt ``N`` accepted (OWASP's floor with r=8, p=1: ~16 MiB and tens of ms)."""
DEFAULT_COST: Final = 2**14
MAX_COST: Final = 2**17
_R: Final = 8
_P: Final = 1
_SALT_BYTES: Final = 16
_HASH_BYTES: Final = 32
_MAXMEM: Final = 256 * 1024 * 1024
_SHAPE = re.compile(
    r"scrypt\$(\d{1,8})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9+/]{16,88}={0,2})\$([A-Za-z0-9+/]{32,88}={0,2})"
)

PIN_PATTERN: Final = re.compile(r"[0-9]{4,8}")
"""What a PIN is: 4 to 8 digits (a touch keypad at the table)."""
BADGE_PATTERN: Final = re.compile(r"[\x21-\x7e]{4,64}")
"""What a badge read is: 4 to 64 printable ASCII characters (a HID wedge types them)."""


class CredentialError(ControllerError, ValueError):
    """A hash string that is not one of ours (its shape or cost)."""


@dataclass(frozen=True, slots=True)
class SlowHash:
    """A parsed ``scrypt$N$r$p$SALT$HASH``."""

    cost: int
    block: int
    parallel: int
    salt: bytes
    digest: bytes

    @classmethod
    def parse(cls, text: str) -> SlowHash:
        """Raises :class:`CredentialError` naming what is wrong (never echoing the text)."""
        match = _SHAPE.fullmatch(text)
        if match is None:
            raise CredentialError("not a hash of the form scrypt$N$r$p$SALT$HASH")
        cost, block, parallel = (int(match.group(i)) for i in (1, 2, 3))
        salt, digest = _unb64(match.group(4)), _unb64(match.group(5))
        if cost < MIN_COST or cost > MAX_COST or cost & (cost - 1):
            raise CredentialError(f"scrypt N={cost}: want a power of two from {MIN_COST}")
        if not 1 <= block <= 32 or not 1 <= parallel <= 16:
            raise CredentialError(f"scrypt r={block} p={parallel} out of range")
        if 128 * block * cost > _MAXMEM // 2:
            raise CredentialError(f"scrypt N={cost} r={block} needs more memory than we give it")
        if len(salt) < _SALT_BYTES or not _HASH_BYTES <= len(digest) <= 64:
            raise CredentialError("scrypt salt or hash too short")
        return cls(cost, block, parallel, salt, digest)

    def matches(self, secret: str) -> bool:
        """Whether ``secret`` hashes to this digest (constant-time compare)."""
        params = (self.cost, self.block, self.parallel)
        digest = _scrypt(secret, self.salt, params, len(self.digest))
        return hmac.compare_digest(self.digest, digest)

    def __str__(self) -> str:
        salt, digest = _b64(self.salt), _b64(self.digest)
        return f"scrypt${self.cost}${self.block}${self.parallel}${salt}${digest}"


def new_salt() -> bytes:
    return secrets.token_bytes(_SALT_BYTES)


def hash_secret(secret: str, *, salt: bytes | None = None, cost: int = DEFAULT_COST) -> SlowHash:
    """The slow hash of ``secret`` (a fresh salt unless one is given: a roster's badge salt)."""
    salt = new_salt() if salt is None else salt
    return SlowHash(cost, _R, _P, salt, _scrypt(secret, salt, (cost, _R, _P), _HASH_BYTES))


def _scrypt(secret: str, salt: bytes, params: tuple[int, int, int], size: int) -> bytes:
    cost, block, parallel = params
    data = secret.encode("utf-8")
    return hashlib.scrypt(data, salt=salt, n=cost, r=block, p=parallel, maxmem=_MAXMEM, dklen=size)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.rstrip("=") + "=" * (-len(text.rstrip("=")) % 4))
