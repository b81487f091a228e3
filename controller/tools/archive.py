"""``tablectl archive``: the floor's central archive process (docs/fleet.md), the composition root
of :mod:`tablectl.controller.archive`.

Exit codes (one line on stderr): 0 after SIGTERM/Ctrl-C; 78 (EX_CONFIG) for a bad option, DSN or
key file; 69 (EX_UNAVAILABLE) when PostgreSQL or the broker is not there at start, or psycopg is
missing. Once running, both are reconnected as often as needed.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from pathlib import Path
from typing import Final

from tablectl.controller.archive.consumer import Archiver, ArchiverConfig
from tablectl.controller.archive.db import ArchiveConfigError, ArchiveError, check_dsn
from tablectl.controller.archive.gate.options import add_bound_arguments, bounds_of
from tablectl.controller.archive.upkeep import Cadence, ResendSigner
from tablectl.controller.archive.verifier import KeyRing
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.exits import EXIT_CONFIG, EXIT_OK, EXIT_UNAVAILABLE
from tablectl.controller.mqtt.publisher import broker_address
from tablectl.controller.secrets import read_journal_key, read_key_file
from tablectl.controller.service import stopping
from tablectl.controller.tools.broker_login import add_login_arguments, broker_login
from tablectl.controller.tools.floor_metrics import ArchiveMetrics, check_listen, serving

_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_EXAMPLE: Final = (
    "example: tablectl archive --url mqtt://broker.floor:1883 "
    "--dsn postgresql://archive@db.floor/archive --share archive --name arch-1"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``tablectl archive`` (wired by :mod:`tablectl.controller.tools.cli`)."""
    parser.formatter_class = argparse.ArgumentDefaultsHelpFormatter
    parser.epilog = _EXAMPLE
    parser.add_argument(
        "--url", default="mqtt://127.0.0.1:1883", help="the floor's broker, mqtt[s]://host:port"
    )
    parser.add_argument(
        "--dsn",
        required=True,
        help="the archive's PostgreSQL (postgresql://user@host/db; the password from "
        "PGPASSWORD or ~/.pgpass, never the command line)",
    )
    parser.add_argument("--prefix", default="tablectl", help="topic prefix of the tables")
    parser.add_argument(
        "--name",
        default="archive",
        help="this archiver's name: its MQTT client id (unique per archiver) and its topics "
        "{prefix}/_archive/NAME/status|alarms",
    )
    parser.add_argument(
        "--share",
        metavar="GROUP",
        help="share the work with the other archivers of GROUP (MQTT v5 shared subscriptions)",
    )
    parser.add_argument(
        "--gap-timeout",
        type=float,
        default=5.0,
        help="seconds a missing seq may stay missing before the table is asked to resend it",
    )
    parser.add_argument(
        "--probe-after",
        type=float,
        default=30.0,
        help="seconds a table may be quiet before it is asked for anything after its last record",
    )
    parser.add_argument(
        "--key",
        action="append",
        default=[],
        metavar="[TABLE=]FILE",
        help="a journal key ([journal] key_file's copy) to check anchors with; TABLE=FILE for one "
        "table (repeat), FILE for every other",
    )
    parser.add_argument("--batch-size", type=int, default=500, help="records per commit at most")
    parser.add_argument(
        "--mqtt-version",
        choices=("5", "3.1.1"),
        default="5",
        help="MQTT protocol (3.1.1 for brokers without v5: no --share)",
    )
    add_login_arguments(parser)
    parser.add_argument(
        "--resend-key",
        type=Path,
        metavar="FILE",
        help="the archive role's key (a table with [security] answers only signed resends: "
        "docs/security.md); without it the resend requests go unsigned",
    )
    parser.add_argument("--resend-role", default="archive", help="the role --resend-key signs as")
    parser.add_argument(
        "--metrics-listen",
        metavar="HOST:PORT",
        help="serve Prometheus metrics on http://HOST:PORT/metrics (docs/operations.md)",
    )
    add_bound_arguments(parser)


def _keys(specs: list[str]) -> KeyRing:
    default: bytes | None = None
    per_table: dict[str, bytes] = {}
    for spec in specs:
        table, sep, path = spec.partition("=")
        if sep and _NAME.fullmatch(table):
            per_table[table] = read_journal_key(Path(path), f"--key {table}")
        elif default is None:
            default = read_journal_key(Path(spec), "--key")
        else:
            raise ConfigError(f"--key {spec}: a second key for every table (use TABLE=FILE)")
    return KeyRing(default, per_table)


def _resend_signer(args: argparse.Namespace) -> ResendSigner | None:
    """Signs the archive's ``cmd/resend`` requests as ``--resend-role`` (key read now)."""
    if args.resend_key is None:
        return None
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,31}", args.resend_role):
        raise ConfigError(f"--resend-role {args.resend_role!r}: a role name ([a-z][a-z0-9_]*)")
    key = read_key_file(args.resend_key, args.resend_role)
    return ResendSigner(role=args.resend_role, key=key, by=args.name)


def _config(args: argparse.Namespace) -> ArchiverConfig:
    """The :class:`ArchiverConfig` of the options (secret files read now)."""
    if not _NAME.fullmatch(args.name):
        raise ConfigError(f"--name {args.name!r}: 1-64 of A-Z a-z 0-9 _ -")
    if args.share is not None and not _NAME.fullmatch(args.share):
        raise ConfigError(f"--share {args.share!r}: 1-64 of A-Z a-z 0-9 _ -")
    if args.share is not None and args.mqtt_version != "5":
        raise ConfigError("--share needs MQTT v5 (shared subscriptions): drop --mqtt-version")
    if args.gap_timeout <= 0 or args.probe_after <= 0 or not 1 <= args.batch_size <= 10_000:
        raise ConfigError("--gap-timeout and --probe-after > 0, --batch-size 1..10000")
    mqtt, security = broker_login(args, args.url, args.prefix)
    host, port, _tls = broker_address(mqtt.url)
    limits, cadence = bounds_of(
        args, Cadence(gap_timeout=args.gap_timeout, probe_after=args.probe_after)
    )
    return ArchiverConfig(
        dsn=check_dsn(args.dsn),
        host=host,
        port=port,
        security=security,
        prefix=args.prefix,
        name=args.name,
        share=args.share,
        cadence=cadence,
        limits=limits,
        keys=_keys(args.key),
        resend_signer=_resend_signer(args),
        batch_size=args.batch_size,
        mqtt_v5=args.mqtt_version == "5",
    )


async def _serve(config: ArchiverConfig, metrics_listen: str | None, stop: asyncio.Event) -> None:
    archiver = Archiver(config)
    async with serving(ArchiveMetrics(archiver), metrics_listen):
        await asyncio.to_thread(archiver.prepare)
        await archiver.run(stop)


def run(args: argparse.Namespace) -> int:
    """``tablectl archive``: returns the exit code (see the module doc)."""
    try:
        config = _config(args)
        check_listen(args.metrics_listen)
        # SIGTERM/Ctrl-C set ``stop``: the archiver stores its last batch and says goodbye.
        stop = asyncio.Event()
        stopping.run(_serve(config, args.metrics_listen, stop), on_signal=stop.set, cancel=False)
    except (ArchiveConfigError, ConfigError) as exc:
        print(f"tablectl archive: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except ArchiveError as exc:
        print(f"tablectl archive: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    return EXIT_OK
