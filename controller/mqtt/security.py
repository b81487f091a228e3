"""Who may talk to a table: MQTT transport security and signed, role-checked commands (§7).

Two layers, because each alone is not enough:

* **The broker link** (TLS, client certificates, username + password, broker ACLs) decides who
  may publish on a table's ``cmd/#`` at all. :func:`client_security` turns ``[mqtt]`` into what
  the MQTT client needs; secrets are read from files at start (a config file is copied, diffed
  and attached to tickets, so it never holds one), and a missing or unreadable file is a
  :class:`ConfigError` naming it.
* **The controller** decides whether a command that changes a round may run. MQTT 3.1.1 does not
  tell a subscriber who published a message, and a broker ACL is as coarse as a topic, so a
  dealer UI allowed on ``cmd/#`` could otherwise void a round. Round-changing commands therefore
  carry an HMAC-SHA256 signature keyed by the *role's* secret (``[security] roles``), over the
  canonical JSON of the request, bound to the table and the verb, fresh within ``max_age``
  seconds, with a nonce that is accepted once (a redelivered or replayed command is refused).
  :class:`~tablectl.controller.mqtt.authority.CommandAuthority` checks them (roles, freshness,
  replays); :func:`sign_command` makes them (pit UI, ``tablectl cmd``).

Signed request (the body of ``cmd/{verb}``)::

    {"id": "c-17", "reason": "foreign_object",            <- the verb's own fields
     "role": "supervisor", "by": "FM-0042", "table": "BAC-01", "verb": "void",
     "ts": "2026-11-30T10:00:00.000000Z", "nonce": "9f2c4e0a7b1d3e5f",
     "sig": hex(HMAC-SHA256(key(role), canonical_json(request without "sig")))}

``canonical_json`` is the journal's: keys sorted, no whitespace, UTF-8 with non-ASCII kept. A
signer in another language reproduces it exactly when the request holds only strings, integers,
booleans, null, arrays and objects (avoid floats: their textual form differs between languages).

The key is the key file's content with surrounding whitespace removed, as bytes (``openssl rand
-hex 32 > supervisor.key``; mode 0400, owned by the service user: a key or password file that
group or others may read or write is a :class:`ConfigError`). A role's key is shared by
everyone in the role, so ``by`` (who) is attested by the holder of the role's key, not proven
individually; per-person keys are a config choice (one role per person) when that is needed.
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
