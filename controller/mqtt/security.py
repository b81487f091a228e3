"""Who may talk to a table: MQTT transport security and signed, role-checked commands (§7).

The broker link decides who may publish on ``cmd/#``; the controller decides whether a
round-changing command may run, as MQTT 3.1.1 does not say who published. The signature scheme
and key files: docs/security.md.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from tablectl.controller.config import MqttConfig
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.time import format_moment
from tablectl.controller.journal import canonical_json
from tablectl.controller.secrets import read_password_file
from tablectl.drivers.errors import DriverInitError
from tablectl.drivers.transports.tls import client_tls_context

SIGNED_FIELDS: Final = ("role", "by", "table", "verb", "ts", "nonce")
"""Fields :func:`sign_command` adds (with ``sig``); a request must not set them itself."""


# --- the broker link ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ClientSecurity:
    """What the MQTT client needs to authenticate the broker and itself, built once at start."""

    tls_context: ssl.SSLContext | None = None
    username: str | None = None
    password: str | None = None


def _tls_context(config: MqttConfig) -> ssl.SSLContext:
    try:
        return client_tls_context(config.ca_file, config.cert_file, config.key_file, section="mqtt")
    except DriverInitError as exc:  # the same words, as the config error they are here
        raise ConfigError(str(exc)) from None


def client_security(config: MqttConfig) -> ClientSecurity:
    """Read ``[mqtt]``'s CA, client certificate and password file now (at start); ``mqtts://`` gets
    a verifying TLS context (TLS 1.2 at least)."""
    tls = config.url.startswith("mqtts://")
    password = read_password_file(config.password_file) if config.password_file else None
    return ClientSecurity(
        tls_context=_tls_context(config) if tls else None,
        username=config.username,
        password=password,
    )


_TLS_WORDS = ("ssl", "certificate", "tls", "handshake")
_AUTH_WORDS = ("user name or password", "not authorized", "not authorised", "bad user")


def connect_failure_hint(error: str) -> str | None:
    """What to check when a connect failed for a reason retrying will not fix; ``None`` for the
    ordinary cases the reconnect loop handles quietly."""
    lowered = error.lower()
    if any(word in lowered for word in _AUTH_WORDS):
        return "the broker refused our credentials: check mqtt.username / password_file / cert"
    if any(word in lowered for word in _TLS_WORDS):
        return (
            "TLS handshake failed: check mqtt.ca_file, the broker's certificate and that the "
            "url's host is in it"
        )
    return None


# --- signed commands ----------------------------------------------------------------------------


def signing_bytes(request: Mapping[str, Any]) -> bytes:
    """The bytes the signature covers: the canonical JSON of the request without ``sig``."""
    unsigned = {k: v for k, v in request.items() if k != "sig"}
    return canonical_json(unsigned).encode("utf-8")


def sign_command(
    payload: Mapping[str, Any],
    *,
    verb: str,
    table: str,
    role: str,
    key: bytes,
    by: str,
    ts: datetime | None = None,
    nonce: str | None = None,
) -> dict[str, Any]:
    """A signed request for ``cmd/{verb}`` of ``table``: ``payload`` plus the signed fields. Pass
    ``ts`` and ``nonce`` only to reproduce a signature."""
    clash = sorted(set(payload) & {*SIGNED_FIELDS, "sig"})
    if clash:
        raise ValueError(f"payload must not set {', '.join(clash)}: sign_command adds them")
    request: dict[str, Any] = {
        **payload,
        "role": role,
        "by": by,
        "table": table,
        "verb": verb,
        "ts": format_moment(ts or datetime.now(UTC)),
        "nonce": nonce or secrets.token_hex(16),
    }
    request["sig"] = hmac.new(key, signing_bytes(request), hashlib.sha256).hexdigest()
    return request
