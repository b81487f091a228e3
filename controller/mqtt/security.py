"""Who may talk to a table: MQTT transport security and signed, role-checked commands (§7).

Two layers (docs/security.md): the broker link (TLS, client certificates, password, ACLs;
:func:`client_security`, secrets read from files, a missing one a :class:`ConfigError`) decides
who may publish on ``cmd/#``; the controller decides whether a round-changing command may run,
because MQTT 3.1.1 does not say who published and ACLs are per topic. Such commands carry an
HMAC-SHA256 by the *role's* key, bound to table and verb, fresh within ``max_age``, with a
once-only nonce (:class:`~tablectl.controller.mqtt.authority.CommandAuthority` checks,
:func:`sign_command` signs)::

    {"id": "c-17", "reason": "foreign_object",            <- the verb's own fields
     "role": "supervisor", "by": "FM-0042", "table": "BAC-01", "verb": "void",
     "ts": "2026-11-30T10:00:00.000000Z", "nonce": "9f2c4e0a7b1d3e5f",
     "sig": hex(HMAC-SHA256(key(role), canonical_json(request without "sig")))}

``canonical_json`` is the journal's (sorted keys, no whitespace, UTF-8); other languages reproduce
it for strings, integers, booleans, null, arrays and objects (avoid floats). The key is the key
file's stripped content as bytes; a key or password file group/others may read or write is a
:class:`ConfigError`. ``by`` is attested by the role's key holder, not proven per person.
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
    """Read ``[mqtt]``'s CA, client certificate and password file now (at start).

    ``mqtts://`` gets a verifying TLS context (the system store unless ``ca_file``; host name
    checked against the broker's certificate; TLS 1.2 at least). ``mqtt://`` gets none.

    Raises:
        ConfigError: naming the file that is missing, unreadable or unusable.
    """
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
    """What to check when a connect attempt failed for a reason that retrying will not fix.

    ``error`` is the failure's text (aiomqtt wraps both TLS and CONNACK refusals into
    ``MqttError``). ``None`` for the ordinary cases (broker down, network), which the reconnect
    loop handles quietly.
    """
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
    """The bytes the signature covers: the canonical JSON of the request without ``sig``.

    Raises:
        ValueError: the request holds something JSON cannot carry (NaN, a lone surrogate).
    """
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
    """A signed request for ``cmd/{verb}`` of ``table``: ``payload`` plus the signed fields.

    ``by`` names the person (e.g. ``"FM-0042"``, the floor manager's badge). ``ts`` defaults to
    now and ``nonce`` to 128 random bits; pass them only to reproduce a signature.

    Raises:
        ValueError: ``payload`` sets a field the signature owns, or is not canonical JSON.
    """
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
