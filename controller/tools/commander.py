"""``tablectl cmd VERB``: sign a command, publish it to a table's ``cmd/VERB``, print the reply.

A client tool, not part of the service. The broker login is the *sender's* (a pit or dealer user):
the ACL lets a table read commands, not send them, so the login options override a table config's.
Exit status 0 when the table replied ``ok: true``, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

import aiomqtt

from tablectl.controller.config import MqttConfig
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.exits import EXIT_ERROR, EXIT_OK
from tablectl.controller.mqtt.publisher import broker_address
from tablectl.controller.mqtt.security import client_security, sign_command
from tablectl.controller.mqtt.topics import Topics
from tablectl.controller.secrets import read_key_file

EXIT_REFUSED = EXIT_ERROR
"""The table refused the command (its reply says why)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``tablectl cmd`` (wired by :mod:`tablectl.controller.tools.cli`)."""
    parser.add_argument("verb", help="void, event, clear_fault, clock_confirm, status, resend")
    parser.add_argument(
        "payload",
        nargs="?",
        default="{}",
        help="the command's JSON object, e.g. "
        '\'{"reason": "foreign_object", "round": "ROU-01-000123"}\' (- for stdin)',
    )
    parser.add_argument("--config", type=Path, help="take broker, prefix and table from a config")
    parser.add_argument("--url", help="mqtt[s]://host:port (overrides the config)")
    parser.add_argument("--prefix", help="topic prefix (default: the config's, else tablectl)")
    parser.add_argument("--table", help="table id (default: the config's)")
    parser.add_argument("--role", help="sign as this role ([security] roles of the table)")
    parser.add_argument("--key-file", type=Path, help="the role's key file")
    parser.add_argument("--by", help="who sends it (badge or user id), signed with the command")
    parser.add_argument("--username", help="broker user (default: none, or the config's)")
    parser.add_argument("--password-file", type=Path, help="broker password, first line")
    parser.add_argument("--ca-file", type=Path, help="CA bundle for mqtts:// (PEM)")
    parser.add_argument("--cert-file", type=Path, help="client certificate (PEM)")
    parser.add_argument("--cert-key-file", type=Path, help="client certificate's key (PEM)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for a reply")


def _mqtt_settings(args: argparse.Namespace) -> tuple[MqttConfig, str, str]:
    """``(mqtt settings, prefix, table)`` from ``--config`` and the overriding options."""
    base = MqttConfig()
    prefix, table = args.prefix, args.table
    if args.config is not None:
        from tablectl.controller.config import load_config  # noqa: PLC0415 - only with --config

        config = load_config(args.config)
        base = config.mqtt
        prefix = prefix or base.topic_prefix
        table = table or config.table.id
        if base.url == "embedded":
            base = base.model_copy(update={"url": f"mqtt://{base.embedded_listen}"})
    if not table:
        raise ConfigError("--table (or --config) is required")
    fields: dict[str, Any] = {
        "url": args.url or base.url,
        "topic_prefix": prefix or base.topic_prefix,
        "ca_file": args.ca_file or base.ca_file,
        # The sender's login, never silently the table's own (the ACL would refuse it anyway).
        "username": args.username,
        "password_file": args.password_file,
        "cert_file": args.cert_file,
        "key_file": args.cert_key_file,
        "client_id": f"tablectl-cmd-{uuid.uuid4().hex[:12]}",
    }
    try:
        mqtt = MqttConfig.model_validate(fields)
    except ValueError as exc:
        raise ConfigError(f"tablectl cmd: {exc}") from None
    return mqtt, fields["topic_prefix"], table


def _request(args: argparse.Namespace, table: str) -> dict[str, Any]:
    text = sys.stdin.read() if args.payload == "-" else args.payload
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"payload is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise ConfigError("payload must be a JSON object")
    payload.setdefault("id", f"cmd-{uuid.uuid4().hex[:12]}")
    if args.role is None:
        return payload
    if args.key_file is None or not args.by:
        raise ConfigError("--role needs --key-file and --by")
    key = read_key_file(args.key_file, args.role)
    try:
        return sign_command(
            payload, verb=args.verb, table=table, role=args.role, key=key, by=args.by
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


async def send_command(
    mqtt: MqttConfig,
    topics: Topics,
    verb: str,
    request: dict[str, Any],
    *,
    wait: float = 5.0,
) -> dict[str, Any] | None:
    """Publish ``request`` on ``cmd/{verb}`` and return the reply with its ``id``, or ``None`` when
    none came within ``wait`` seconds (also the connect timeout)."""
    host, port, _tls = broker_address(mqtt.url)
    security = client_security(mqtt)
    async with aiomqtt.Client(
        host,
        port,
        identifier=mqtt.client_id,
        username=security.username,
        password=security.password,
        tls_context=security.tls_context,
        timeout=wait,
    ) as client:
        # Subscribe first: a reply published before we listen would be missed.
        await client.subscribe(topics.reply(verb), qos=1)
        await client.publish(topics.command(verb), json.dumps(request), qos=1)
        try:
            async with asyncio.timeout(wait):
                async for message in client.messages:
                    payload = message.payload
                    if not isinstance(payload, bytes | bytearray):
                        continue
                    try:
                        reply = json.loads(payload)
                    except ValueError:
                        continue
                    if isinstance(reply, dict) and reply.get("id") == request.get("id"):
                        return reply
        except TimeoutError:
            return None
    return None


def run(args: argparse.Namespace) -> int:
    """``tablectl cmd``: print the reply as JSON; non-zero when refused or unanswered."""
    mqtt, prefix, table = _mqtt_settings(args)
    try:
        topics = Topics(prefix, table)
        topics.command(args.verb)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    request = _request(args, table)
    try:
        reply = asyncio.run(send_command(mqtt, topics, args.verb, request, wait=args.timeout))
    except aiomqtt.MqttError as exc:
        print(f"tablectl cmd: broker {mqtt.url}: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    if reply is None:
        print(
            f"tablectl cmd: no reply on {topics.reply(args.verb)} within {args.timeout:g} s "
            "(is the table online, and may this user publish there?)",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    print(json.dumps(reply, indent=2, ensure_ascii=False))
    return EXIT_OK if reply.get("ok") is True else EXIT_REFUSED
