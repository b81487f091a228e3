"""The TLS context of an MQTT client: one policy for every broker link of ours (the table's and a
studio device's). In ``drivers`` because the controller may import drivers, not the reverse.
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

    The system store unless ``ca_file``; host name checked; TLS 1.2 at least; optional client
    certificate (unencrypted key in ``key_file`` or the same file). ``section`` prefixes key names
    in errors.
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
