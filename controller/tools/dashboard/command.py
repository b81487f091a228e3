"""``tablectl dashboard``: its options, its checks before listening, and the server.

uvicorn runs on a socket bound here, so a port in use is a one-line error before anything starts.
Exit codes: 0 after Ctrl-C or SIGTERM, 1 for a refusal or a bad file, 69 (EX_UNAVAILABLE) without
the ``dashboard`` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import socket
import ssl
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tablectl.controller.core.exits import EXIT_UNAVAILABLE
from tablectl.controller.mqtt.publisher import broker_address
from tablectl.controller.secrets import read_secret
from tablectl.controller.service import stopping
from tablectl.controller.service.metrics.server import parse_listen
from tablectl.controller.tools.broker_login import add_login_arguments, broker_login
from tablectl.controller.tools.dashboard.auth import (
    BasicLogin,
    DashboardError,
    add_user,
    check_exposure,
    is_loopback,
    load_users,
)
from tablectl.controller.tools.dashboard.floor import (
    HISTORY,
    MAX_AHEAD,
    MAX_DEVICES,
    MAX_TABLES,
    STAFF_DAYS,
    Floor,
)
from tablectl.controller.tools.floor_metrics import DashboardMetrics, check_listen
from tablectl.controller.tools.floor_metrics import serving as metrics_endpoint

if TYPE_CHECKING:  # the dashboard extra: imported when serving (see run)
    import uvicorn

    from tablectl.controller.tools.dashboard.staff import StaffSource
    from tablectl.controller.tools.dashboard.subscriber import FloorFeed

DEFAULT_LISTEN: Final = "127.0.0.1:8080"
_EXAMPLE: Final = (
    "example: tablectl dashboard --url mqtt://10.0.0.5:1883 (then open http://127.0.0.1:8080/)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``tablectl dashboard`` (wired by :mod:`tablectl.controller.tools.cli`)."""
    parser.epilog = _EXAMPLE
    parser.add_argument(
        "--url",
        default="mqtt://127.0.0.1:1883",
        help="the floor's broker, mqtt[s]://host:port (default: %(default)s)",
    )
    parser.add_argument(
        "--prefix", default="tablectl", help="topic prefix of the tables (default: %(default)s)"
    )
    parser.add_argument(
        "--listen",
        default=DEFAULT_LISTEN,
        metavar="HOST:PORT",
        help="address to serve on (default: %(default)s); beyond the loopback it needs "
        "--tls-cert, --tls-key and --users",
    )
    parser.add_argument("--tls-cert", type=Path, help="serve HTTPS with this certificate (PEM)")
    parser.add_argument("--tls-key", type=Path, help="its private key (PEM, mode 0600)")
    parser.add_argument(
        "--users",
        type=Path,
        help="require a login (HTTP Basic): file of name:scrypt$… lines, mode 0600",
    )
    parser.add_argument(
        "--add-user",
        metavar="NAME",
        help="add or update NAME in --users (password from the terminal or stdin) and exit",
    )
    parser.add_argument(
        "--history",
        type=int,
        default=HISTORY,
        help="outcomes kept per table for its history page (default: %(default)s)",
    )
    parser.add_argument(
        "--max-tables",
        type=int,
        default=MAX_TABLES,
        help="tables followed at once (default: %(default)s)",
    )
    parser.add_argument(
        "--max-devices",
        type=int,
        default=MAX_DEVICES,
        help="devices shown per table (default: %(default)s)",
    )
    parser.add_argument(
        "--max-ahead",
        type=int,
        default=MAX_AHEAD,
        help="records past a table's state seq still shown (default: %(default)s)",
    )
    add_login_arguments(parser)
    parser.add_argument(
        "--metrics-listen",
        metavar="HOST:PORT",
        help="serve Prometheus metrics on http://HOST:PORT/metrics (default: none; no login: "
        "the loopback or a monitoring network)",
    )
    parser.add_argument(
        "--archive-dsn",
        metavar="DSN",
        help="the floor's archive (postgresql://…), read-only, for the staff page's figures by"
        " dealer (default: none; the page says so)",
    )
    parser.add_argument(
        "--archive-key",
        type=Path,
        metavar="FILE",
        help="with --archive-dsn: the tables' journal key: only records whose auth it matches"
        " count (default: none; the page says authorship unverified)",
    )
    parser.add_argument(
        "--staff-days",
        type=int,
        default=STAFF_DAYS,
        help="days of the archive the staff page counts (default: %(default)s)",
    )


def _read_password() -> str:
    if sys.stdin.isatty():
        first = getpass.getpass("password: ")
        if getpass.getpass("again: ") != first:
            raise DashboardError("the passwords differ")
        return first
    return sys.stdin.readline().rstrip("\r\n")


def _check_tls(cert: Path | None, key: Path | None) -> None:
    if (cert is None) != (key is None):
        raise DashboardError("--tls-cert and --tls-key go together")
    if cert is None or key is None:
        return
    read_secret(key, "dashboard TLS key")  # owner-only, like every secret file
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise DashboardError(f"--tls-cert {cert} / --tls-key {key}: unusable: {exc}") from None


def bind(host: str, port: int) -> socket.socket:
    """A listening socket for a web page (the dashboard's, the station's): one-line errors."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise DashboardError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


def run(args: argparse.Namespace) -> int:
    """``tablectl dashboard``: check, bind, serve until Ctrl-C."""
    if args.add_user is not None:
        if args.users is None:
            raise DashboardError("--add-user needs --users FILE")
        add_user(args.users, args.add_user, _read_password())
        print(f"tablectl dashboard: {args.add_user} written to {args.users}")
        return 0
    try:
        import uvicorn  # noqa: F401, PLC0415 - the optional extra: missing, say so before serving

        from tablectl.controller.tools.dashboard.app import create_app  # noqa: PLC0415
        from tablectl.controller.tools.dashboard.subscriber import (  # noqa: PLC0415
            Broker,
            FloorFeed,
        )
    except ImportError as exc:
        print(
            f"tablectl dashboard: needs the dashboard extra ({exc.name} is missing): "
            "pip install 'tablectl[dashboard]'",
            file=sys.stderr,
        )
        return EXIT_UNAVAILABLE
    host, port = parse_listen(args.listen, what="--listen", example=DEFAULT_LISTEN)
    check_listen(args.metrics_listen)
    tls = args.tls_cert is not None or args.tls_key is not None
    check_exposure(host, tls=tls, login=args.users is not None)
    _check_tls(args.tls_cert, args.tls_key)
    login = BasicLogin(load_users(args.users)) if args.users is not None else None
    for option in ("history", "max_tables", "max_devices"):
        if getattr(args, option) < 1:
            raise DashboardError(f"--{option.replace('_', '-')} must be at least 1")
    if args.max_ahead < 0:
        raise DashboardError("--max-ahead must be at least 0")
    staff = _staff_source(args)
    mqtt, security = broker_login(args, args.url, args.prefix)
    broker_host, broker_port, _tls = broker_address(mqtt.url)
    broker = Broker(broker_host, broker_port, mqtt.url, security)
    floor = Floor(
        mqtt.topic_prefix,
        history=args.history,
        max_tables=args.max_tables,
        max_devices=args.max_devices,
        max_ahead=args.max_ahead,
    )
    feed = FloorFeed(floor)
    hosts = None
    if is_loopback(host):
        hosts = frozenset({"localhost", "127.0.0.1", "::1", host})
    app = create_app(feed, broker=broker, hosts=hosts, login=login, staff=staff)
    sock = bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    scheme = "https" if tls else "http"
    print(
        f"tablectl dashboard: serving {scheme}://{shown}:{sock.getsockname()[1]}/ "
        f"(read-only) for the tables under {mqtt.topic_prefix}/ on {mqtt.url}"
        f"{'; login required' if login else ''}",
        flush=True,
    )
    server = web_server(app, tls_cert=args.tls_cert, tls_key=args.tls_key)

    def stop() -> None:
        server.should_exit = True

    try:
        stopping.run(_serve(server, sock, feed, args.metrics_listen), on_signal=stop, cancel=False)
    finally:
        sock.close()
    return 0


def _staff_source(args: argparse.Namespace) -> StaffSource:
    """The staff page's archive; its options checked (a key read now: a bad file is a config
    error before the server starts)."""
    from tablectl.controller.secrets import read_journal_key  # noqa: PLC0415 - only when asked
    from tablectl.controller.tools.dashboard.staff import StaffSource  # noqa: PLC0415

    if args.staff_days < 1:
        raise DashboardError("--staff-days must be at least 1")
    if args.archive_dsn is None and args.archive_key is not None:
        raise DashboardError("--archive-key goes with --archive-dsn")
    key = None
    if args.archive_key is not None:
        key = read_journal_key(args.archive_key, "dashboard --archive-key")
    return StaffSource(args.archive_dsn, key=key, days=args.staff_days)


def web_server(
    app: Any, *, tls_cert: Path | None = None, tls_key: Path | None = None
) -> uvicorn.Server:
    """A uvicorn server for a page of ours (no access log, no server header, no proxy headers)
    that leaves the signals to the command's one stop mechanism
    (:mod:`tablectl.controller.service.stopping`, which sets ``should_exit``): its own handlers
    would raise the signal again once it stopped, and the command would die of it."""
    import uvicorn  # noqa: PLC0415 - the optional extra, only when serving

    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        server_header=False,
        proxy_headers=False,
        timeout_graceful_shutdown=1,
        ssl_certfile=str(tls_cert) if tls_cert else None,
        ssl_keyfile=str(tls_key) if tls_key else None,
    )

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return Server(config)


async def _serve(
    server: uvicorn.Server, sock: socket.socket, feed: FloorFeed, metrics: str | None = None
) -> None:
    """Serve until uvicorn is told to stop; then end the live streams at once, or the browsers'
    open ones would hold the shutdown until its timeout. With ``metrics``, ``/metrics`` there."""
    async with metrics_endpoint(DashboardMetrics(feed), metrics):
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not serving.done():
            await asyncio.wait({serving}, timeout=0.1)
            if server.should_exit and not feed.closed:
                feed.close()
        serving.result()
