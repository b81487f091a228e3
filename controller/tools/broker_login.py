"""The broker login every floor tool takes the same way (``--username``, ``--password-file``, the
TLS files): the floor's broker lets only known clients in (docs/fleet.md), checked by the same
``[mqtt]`` rules as a table's config."""

from __future__ import annotations

import argparse
from pathlib import Path

import pydantic

from tablectl.controller.config import MqttConfig
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.mqtt.security import ClientSecurity, client_security


def add_login_arguments(parser: argparse.ArgumentParser) -> None:
    """The five login options (none by default: an anonymous plain connection)."""
    group = parser.add_argument_group(
        "broker login", "the floor broker's user and TLS (docs/fleet.md); default: anonymous"
    )
    group.add_argument("--username", help="broker user (default: none)")
    group.add_argument("--password-file", type=Path, help="broker password, first line")
    group.add_argument("--ca-file", type=Path, help="CA bundle for mqtts:// (PEM)")
    group.add_argument("--cert-file", type=Path, help="client certificate for the broker (PEM)")
    group.add_argument("--cert-key-file", type=Path, help="its private key (PEM)")


def broker_login(
    args: argparse.Namespace, url: str, prefix: str, base: MqttConfig | None = None
) -> tuple[MqttConfig, ClientSecurity]:
    """``[mqtt]`` settings of ``url``/``prefix`` and the login options (a config's ``base`` login
    where an option is not given), and the client's security read from them now."""
    given = {
        "username": args.username,
        "password_file": args.password_file,
        "ca_file": args.ca_file,
        "cert_file": args.cert_file,
        "key_file": args.cert_key_file,
    }
    if base is not None:
        given = {k: v if v is not None else getattr(base, k) for k, v in given.items()}
    try:
        mqtt = MqttConfig.model_validate({"url": url, "topic_prefix": prefix, **given})
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ConfigError(f"mqtt.{where}: {first['msg']}") from None
    return mqtt, client_security(mqtt)
