"""The one client TLS policy (drivers.transports.tls): a table's link and a studio device's."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from tablectl.drivers.errors import DriverInitError
from tablectl.drivers.transports.mqtt import endpoint_from_url
from tablectl.drivers.transports.tls import client_tls_context


def test_a_verifying_context_of_tls_1_2_at_least() -> None:
    context = client_tls_context(None)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.minimum_version >= ssl.TLSVersion.TLSv1_2


def test_unusable_files_are_named_under_the_section(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    with pytest.raises(DriverInitError, match=r"^ca_file .*junk.pem: not a PEM CA"):
        client_tls_context(junk)
    with pytest.raises(DriverInitError, match=r"^mqtt\.ca_file .*absent.pem: cannot read"):
        client_tls_context(tmp_path / "absent.pem", section="mqtt")
    with pytest.raises(DriverInitError, match=r"^client certificate .*absent.pem: cannot read"):
        client_tls_context(None, tmp_path / "absent.pem")


def test_a_device_endpoint_gets_the_same_context(tmp_path: Path) -> None:
    endpoint = endpoint_from_url("mqtts://studio.local")
    assert endpoint.port == 8883
    assert endpoint.tls_context is not None
    assert endpoint.tls_context.minimum_version >= ssl.TLSVersion.TLSv1_2
    assert endpoint_from_url("mqtt://studio.local").tls_context is None
    with pytest.raises(DriverInitError, match=r"^ca_file .*absent.pem: cannot read"):
        endpoint_from_url("mqtts://studio.local", ca_file=tmp_path / "absent.pem")
