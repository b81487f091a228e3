"""Starting the station: its checks, the desk and the view it serves, and uvicorn.

Everything that can be wrong in the config is found before the port is bound, each a one-line
:class:`~tablectl.controller.core.errors.ConfigError`; the role keys and the roster are read
now (owner-only files), never per request.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from typing import Any

import structlog

from tablectl.controller.config import TableConfig, load_config
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.mqtt.publisher import broker_address
from tablectl.controller.mqtt.topics import Topics
from tablectl.controller.secrets import read_key_file
from tablectl.controller.service import stopping
from tablectl.controller.service.metrics.server import parse_listen
from tablectl.controller.staff.gate import Gate, LockoutPolicy, Lockouts
from tablectl.controller.staff.roster import Roster
from tablectl.controller.tools.broker_login import broker_login
from tablectl.controller.tools.commander import send_command
from tablectl.controller.tools.dashboard.auth import is_loopback
from tablectl.controller.tools.dashboard.command import bind, web_server

log = structlog.get_logger("tablectl.station")

REPLY_WAIT = 5.0
"""Seconds a command waits for the table's reply before the screen says it did not answer."""


def check(config: TableConfig) -> tuple[Roster, dict[str, bytes]]:
    """The roster and the role keys, or the one-line refusal to start."""
    where = config.source
    if config.staff is None:
        raise ConfigError(
            f"{where}: no [staff] roster: a station cannot know who is at it (docs/station.md)"
        )
    security = config.security
    roles = security.roles if security is not None else {}
    if not roles and not (security is not None and security.insecure_commands):
        raise ConfigError(
            f"{where}: no [security] roles: the station cannot sign commands "
            "(insecure_commands = true only in a lab)"
        )
    roster = Roster.load(config.staff.roster)
    keys = {role: read_key_file(path, role) for role, path in roles.items()}
    return roster, keys


def serve(args: argparse.Namespace) -> int:
    from tablectl.controller.station.app import create_app  # noqa: PLC0415
    from tablectl.controller.station.desk import Desk  # noqa: PLC0415
    from tablectl.controller.station.live import TableView, Watch  # noqa: PLC0415
    from tablectl.controller.station.prompts import Table  # noqa: PLC0415
    from tablectl.controller.tools.dashboard.subscriber import Broker  # noqa: PLC0415

    config = load_config(args.config)
    roster, keys = check(config)
    station = config.station
    host, port = parse_listen(args.listen or station.listen, what="--listen")
    base = config.mqtt
    if base.url == "embedded":
        base = base.model_copy(update={"url": f"mqtt://{base.embedded_listen}"})
    anonymous = {"username": None, "password_file": None, "cert_file": None, "key_file": None}
    mqtt, security = broker_login(
        args, base.url, base.topic_prefix, base.model_copy(update=anonymous)
    )
    broker_host, broker_port, _tls = broker_address(mqtt.url)
    topics = Topics(mqtt.topic_prefix, config.table.id)
    policy = LockoutPolicy(
        station.max_pin_failures, station.failure_window, station.lockout_seconds
    )
    gate = Gate(roster, station.id, Lockouts(policy))
    view = TableView(mqtt.topic_prefix, config.table.id)
    watch = Watch(view)

    async def send(verb: str, request: dict[str, Any]) -> dict[str, Any] | None:
        client = mqtt.model_copy(update={"client_id": f"tablectl-station-{uuid.uuid4().hex[:12]}"})
        try:
            return await send_command(client, topics, verb, request, wait=REPLY_WAIT)
        except Exception as exc:  # the broker away: the screen says the table did not answer
            log.warning("station_command_not_sent", verb=verb, error=str(exc))
            return None

    desk = Desk(config.table.id, gate, config.security, keys, send, state=lambda: view.state)
    required = config.staff is not None and config.staff.dealer_required
    table = Table(config.table.game, config.betting.mode, required)
    hosts = frozenset({"localhost", "127.0.0.1", "::1", host}) if is_loopback(host) else None
    app = create_app(
        watch,
        desk,
        table,
        station=station.id,
        broker=Broker(broker_host, broker_port, mqtt.url, security),
        hosts=hosts,
    )
    return _serve(app, host, port, lab=desk.lab, config=config, watch=watch)


def _serve(app: Any, host: str, port: int, *, lab: bool, config: TableConfig, watch: Any) -> int:
    sock = bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    print(
        f"tablectl station: serving http://{shown}:{sock.getsockname()[1]}/ for table "
        f"{config.table.id} ({config.table.game})"
        f"{'; LAB: commands are not signed' if lab else ''}",
        flush=True,
    )
    if lab:
        print("tablectl station: LAB table (insecure_commands): never on a floor", file=sys.stderr)
    server = web_server(app)

    def stop() -> None:
        server.should_exit = True

    async def main() -> None:
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not serving.done():
            await asyncio.wait({serving}, timeout=0.1)
            if server.should_exit and not watch.closed:
                watch.close()
        serving.result()

    try:
        stopping.run(main(), on_signal=stop, cancel=False)
    finally:
        sock.close()
    return 0
