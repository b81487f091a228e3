"""The TLS context of an MQTT client: one policy for every broker link of ours.

A table's own link (``[mqtt]``, :func:`tablectl.controller.mqtt.security.client_security`) and a
studio device's (:func:`tablectl.drivers.transports.mqtt.endpoint_from_url`) both verify the
broker the same way. It lives in ``drivers`` because the controller may import drivers and not
the other way round.
"""

from __future__ import annotations

import ssl
from pathlib import Path

from tablectl.drivers.errors import DriverInitError


def _refuse_key_password() -> bytes:
    # An encrypted private key would otherwise make OpenSSL prompt on the terminal, which a
    # service cannot answer: fail with a clear error instead.
    return b""


def client_tls_context(
    ca_file: Path | None,
    cert_file: Path | None = None,
    key_file: Path | None = None,
    *,
    section: str = "",
) -> ssl.SSLContext:
    """A verifying client context, its files read now (at start).

    The system store unless ``ca_file``; the broker's host name checked against its certificate;
    TLS 1.2 at least; with ``cert_file``, a client certificate (its unencrypted key in
    ``key_file``, or in the same file).

    Args:
        section: Prefixes the keys named in errors (``"mqtt"``: ``mqtt.ca_file …``).

    Raises:
        DriverInitError: naming the file that is missing, unreadable or unusable.
    """

    def key(name: str) -> str:
        return f"{section}.{name}" if section else name

    try:
        context = ssl.create_default_context(cafile=str(ca_file) if ca_file is not None else None)
    except OSError as exc:  # ssl.SSLError is an OSError too: check it first
        if isinstance(exc, ssl.SSLError):
            raise DriverInitError(
                f"{key('ca_file')} {ca_file}: not a PEM CA certificate bundle ({exc.reason or exc})"
            ) from None
        raise DriverInitError(
            f"{key('ca_file')} {ca_file}: cannot read: {exc.strerror or exc}"
        ) from None
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert_file is not None:
        try:
            context.load_cert_chain(cert_file, key_file, password=_refuse_key_password)
        except ssl.SSLError as exc:
            raise DriverInitError(
                f"{key('cert_file')} {cert_file} / key_file {key_file}: unusable "
                f"({exc.reason or exc}): PEM certificate and its unencrypted private key expected"
            ) from None
        except OSError as exc:
            which = exc.filename or cert_file
            raise DriverInitError(
                f"{section + ' ' if section else ''}client certificate {which}: cannot read: "
                f"{exc.strerror or exc}"
            ) from None
    return context
