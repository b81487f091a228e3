"""``tablectl diag``: the technician's commands (contracts §4.5, issue 6).

:func:`run` runs its own event loop; :func:`run_async` is for callers that have one (tests). Every
expected error is one line, ``tablectl diag <cmd>: <reason>``, status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TextIO

from tablectl.controller.core.exits import EXIT_ERROR, EXIT_INTERRUPTED
from tablectl.controller.service import stopping
from tablectl.drivers.errors import TablectlError


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, not {text}")
    return value


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, not {text!r}")
    return int(text)


def _probability(text: str) -> float:
    value = _positive(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, not {text}")
    return value


def _send_text(text: str) -> tuple[str, str]:
    return ("text", text)


def _send_hex(text: str) -> tuple[str, str]:
    try:
        bytes.fromhex(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not hex bytes: {text!r}") from None
    return ("hex", text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``diag`` subcommands (``ports``, ``probe``, ``sniff``, ``selftest``, ``stats``)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    device = argparse.ArgumentParser(add_help=False)
    device.add_argument(
        "device", nargs="?", metavar="DEVICE", help="configured device id (optional if only one)"
    )
    device.add_argument("--config", required=True, type=Path, help="table config (TOML)")
    timed = argparse.ArgumentParser(add_help=False)
    timed.add_argument(
        "--seconds", type=_positive, metavar="N", help="stop after N seconds (default: Ctrl-C)"
    )

    sub = parser.add_subparsers(dest="diag_command", required=True, metavar="DIAG_COMMAND")
    ports = sub.add_parser(
        "ports",
        parents=[common],
        help="serial ports, USB devices and CAN interfaces, marked with configured devices",
    )
    ports.add_argument("--config", type=Path, help="mark the devices of this table config")

    sub.add_parser(
        "probe",
        parents=[common, device, timed],
        help="identify a device (SS2 *K, *V; shuffler VERS, STAT), show its status and live "
        "decoded events",
    )

    sniff = sub.add_parser(
        "sniff",
        parents=[common, device, timed],
        help="raw traffic with timestamps, direction, hex and ASCII",
    )
    sniff.add_argument("--capture", type=Path, metavar="FILE", help="also write a capture file")
    sniff.add_argument(
        "--send",
        dest="send",
        action="append",
        type=_send_text,
        metavar="TEXT",
        help="send a device command first, e.g. '*X' or '*P 0' (repeatable)",
    )
    sniff.add_argument(
        "--send-hex",
        dest="send",
        action="append",
        type=_send_hex,
        metavar="HEX",
        help="send raw bytes first, e.g. 2a580d0a (repeatable)",
    )
    sniff.add_argument(
        "--repeat", type=_positive, metavar="SECONDS", help="resend the --send bytes this often"
    )

    selftest = sub.add_parser(
        "selftest",
        parents=[common, device],
        help="run the device's self-test (SS2 *F; shuffler deck check DCHK) and explain each code",
    )
    selftest.add_argument(
        "--timeout", type=_positive, default=300.0, help="give up after this long (default 300 s)"
    )
    selftest.add_argument(
        "--settle",
        type=_positive,
        default=2.0,
        help="after a fault code, wait this long for more (default 2 s)",
    )
    selftest.add_argument(
        "--power-down",
        action="store_true",
        help="SS2: send *P 0 first (the self-test runs only in state 6, closed)",
    )

    stats = sub.add_parser(
        "stats",
        parents=[common],
        help="wheel bias or shuffle randomness from the journal: 3-sigma frequencies, "
        "chi-square p-values, serial correlation",
        # Raw: the description's lines and the examples are laid out by hand.
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Roulette tables: wheel bias of the settled spins.\n"
        "Card tables (every card game but bet21's short deck): shuffle randomness of the\n"
        "dealt shoes (rank and suit at each position, the first card, serial correlation,\n"
        "shoe-to-shoe repetition; for baccarat and dragon tiger, results against theory).\n"
        "The table's game picks which: [table] game of --config, else read from --journal.\n"
        "Reads the journal read-only: safe while the service runs.",
        epilog="examples:\n"
        "  tablectl diag stats --config /etc/tablectl/ROU-01.toml\n"
        "  tablectl diag stats --config /etc/tablectl/BAC-01.toml --last 50\n"
        "  tablectl diag stats --journal /var/lib/tablectl/BAC-01.sqlite --json\n"
        "  tablectl diag stats --config /etc/tablectl/ROU-01.toml --last 500 --svg rou.svg\n"
        "  tablectl diag stats --dsn postgresql://archive@db/tablectl --since 2026-01-01T00:00Z"
        " --per-month\n"
        "  tablectl diag stats --dsn postgresql://archive@db/tablectl --by dealer --json\n"
        "\n"
        "A chi-square test is judged only when every cell expects at least 5 (185 spins on a\n"
        "european wheel, 65 shoes for ranks by position); below that a passing test says\n"
        "'too few: N more spins (shoes) needed' ('verdict': 'too_few', 'needed': N in --json).\n"
        "Text charts fit the terminal's width (80 without one).",
    )
    stats.add_argument("--config", type=Path, help="table config (journal, game, rules, devices)")
    stats.add_argument("--journal", type=Path, help="journal file (default: the config's)")
    stats.add_argument(
        "--variant",
        choices=("european", "american", "french"),
        help="roulette wheel (default: the config's [rules] variant, else european)",
    )
    stats.add_argument(
        "--last",
        type=_count,
        metavar="N",
        help="only the last N settled spins (roulette) or dealt shoes (card tables) "
        "(default: all the journal holds)",
    )
    stats.add_argument(
        "--alpha",
        type=_probability,
        default=None,
        help="risk level of the chi-square and serial tests (default: 0.025 for a wheel, "
        "regulatory R24; 0.05 for a shuffler, R5)",
    )
    stats.add_argument(
        "--sigma",
        type=_positive,
        default=3.0,
        help="flag numbers (first-card ranks, results) beyond this many sigma (default 3)",
    )
    stats.add_argument(
        "--device",
        metavar="DEVICE",
        help="also ask this wheel for its own statistics (SS2 *w, *W); needs the port free "
        "(default: the journal only)",
    )
    stats.add_argument(
        "--svg",
        type=Path,
        metavar="FILE",
        help="also write the charts to FILE as SVG (default: no file)",
    )
    stats.add_argument(
        "--sector",
        type=_count,
        default=5,
        metavar="N",
        help="pockets per sector in the wheel's sector chart (default 5)",
    )
    stats.add_argument(
        "--by",
        choices=("dealer",),
        help="one report of every dealer's rounds, pace, voids, misdeals, manual entries, deal"
        " errors and results against theory, across the journal or the archive's tables"
        " (default: the table's wheel or shuffle report)",
    )
    archive = stats.add_argument_group(
        "the floor's archive (instead of a journal): every table's report, each its game's"
    )
    archive.add_argument(
        "--dsn",
        metavar="DSN",
        help="read the archive in PostgreSQL (postgresql://user@host:port/db), read-only"
        " (default: the journal)",
    )
    archive.add_argument(
        "--table",
        action="append",
        metavar="ID",
        help="with --dsn: only this table (repeatable; default: every table in the archive)",
    )
    archive.add_argument(
        "--since", metavar="ISO", help="with --dsn: records with ts >= ISO (Z or +01:00)"
    )
    archive.add_argument("--until", metavar="ISO", help="with --dsn: records with ts < ISO")
    archive.add_argument(
        "--per-month",
        action="store_true",
        help="with --dsn: one report per table and calendar month of the window (trends)",
    )
    archive.add_argument(
        "--key",
        type=Path,
        metavar="FILE",
        help="with --dsn: the tables' journal key ([journal] key_file's copy): only records"
        " whose own auth it matches count (default: none; the report says authorship unverified)",
    )


def _journal_key(path: Path | None) -> bytes | None:
    """``diag stats --key``'s key (read now: a bad file is a config error before any query)."""
    if path is None:
        return None
    from tablectl.controller.secrets import read_journal_key  # noqa: PLC0415 - only when asked

    return read_journal_key(path, "diag stats --key")


def run(args: argparse.Namespace) -> int:
    """Run one ``diag`` command to completion; Ctrl-C / SIGTERM end probe and sniff cleanly
    (they set ``stop``: :mod:`tablectl.controller.service.stopping`, as every command)."""
    stop = asyncio.Event()
    code = stopping.run(run_async(args, stop=stop), on_signal=stop.set, cancel=False)
    return EXIT_INTERRUPTED if code is None else code


async def run_async(
    args: argparse.Namespace,
    *,
    stop: asyncio.Event | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run one ``diag`` command on the running loop; ``stop`` ends it like Ctrl-C."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    stop = stop if stop is not None else asyncio.Event()
    command: str = args.diag_command
    try:
        return await _dispatch(command, args, stop, out, err)
    except TablectlError as exc:
        err.write(f"tablectl diag {command}: {exc}\n")
        return EXIT_ERROR


async def _dispatch(
    command: str, args: argparse.Namespace, stop: asyncio.Event, out: TextIO, err: TextIO
) -> int:
    # Imports per command (and none at module level beyond the stdlib): building the parser
    # must stay cheap for every other tablectl command, and `diag stats` must not need pyserial.
    if command == "ports":
        from tablectl.controller.tools.diag.ports_command import run_ports  # noqa: PLC0415

        return run_ports(args.config, out=out, as_json=args.json)
    if command == "stats":
        from tablectl.controller.core.time import parse_moment  # noqa: PLC0415
        from tablectl.controller.tools.diag.errors import DiagError  # noqa: PLC0415
        from tablectl.controller.tools.diag.stats.command import StatsRequest, run_stats  # noqa: PLC0415

        archive_flags = (args.table, args.since, args.until, args.per_month, args.key)
        if args.dsn is None and any(archive_flags):
            raise DiagError(
                "--table, --since, --until, --per-month and --key go with --dsn (the archive)"
            )
        request = StatsRequest(
            dsn=args.dsn,
            tables=tuple(args.table or ()),
            since=parse_moment(args.since, "--since") if args.since else None,
            until=parse_moment(args.until, "--until") if args.until else None,
            per_month=args.per_month,
            key=_journal_key(args.key),
            config=args.config,
            journal=args.journal,
            variant=args.variant,
            last=args.last,
            alpha=args.alpha,
            sigma=args.sigma,
            device=args.device,
            svg=args.svg,
            sector=args.sector,
            by=args.by,
        )
        return await run_stats(request, out=out, err=err, as_json=args.json)

    from tablectl.controller.tools.diag.session import until_stopped  # noqa: PLC0415
    from tablectl.controller.tools.diag.target import resolve_target  # noqa: PLC0415

    target = resolve_target(args.config, args.device)
    if command == "probe":
        from tablectl.controller.tools.diag.probe import run_probe  # noqa: PLC0415

        return await run_probe(target, seconds=args.seconds, stop=stop, out=out, as_json=args.json)
    if command == "sniff":
        from tablectl.controller.tools.diag.sniff import run_sniff  # noqa: PLC0415

        sends = [
            bytes.fromhex(value) if kind == "hex" else target.diagnostics.encode_send(value)
            for kind, value in args.send or []
        ]
        return await run_sniff(
            target,
            seconds=args.seconds,
            stop=stop,
            out=out,
            err=err,
            sends=sends,
            repeat=args.repeat,
            capture=args.capture,
            as_json=args.json,
        )
    if command == "selftest":
        from tablectl.controller.tools.diag.devices.plugins import SelfTestOptions  # noqa: PLC0415
        from tablectl.controller.tools.diag.selftest import run_selftest  # noqa: PLC0415

        options = SelfTestOptions(timeout=args.timeout, settle=args.settle, prepare=args.power_down)
        result = await until_stopped(
            run_selftest(target, options, out=out, err=err, as_json=args.json), stop
        )
        return EXIT_INTERRUPTED if result is None else result
    raise AssertionError(command)  # pragma: no cover - argparse restricts the choices
