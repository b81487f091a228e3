"""``tablectl``: the command line (contracts §4.5).

Errors exit non-zero with a one-line reason on stderr. ``simulate`` and ``demo`` are the only
places the controller reaches into ``simulators`` (lazily): composition roots for benches and demos.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any

# Light on purpose (the rest is imported in main, once a long-running command takes its signals):
# until then a Ctrl-C is Python's KeyboardInterrupt, with a traceback from inside some import.
from tablectl.controller.core.exits import EXIT_CONFIG, EXIT_ERROR, EXIT_OK, EXIT_USAGE
from tablectl.controller.service import stopping

_CONFIG_EXIT_COMMANDS = frozenset({"run", "check-config"})
"""Commands whose config error exits :data:`EXIT_CONFIG`; the others exit :data:`EXIT_ERROR`."""
_LONG_RUNNING = frozenset(
    {"run", "demo", "watch", "dashboard", "archive", "simulate", "diag", "station"}
)
"""Commands that run until stopped: SIGINT and SIGTERM stop them in order
(:mod:`tablectl.controller.service.stopping`, docs/operations.md "Stopping")."""


def _plugin_lines() -> list[str]:
    """``check-config``: the drivers and games installed packages register, and their state."""
    from tablectl.controller.plugins import plugin_games  # noqa: PLC0415
    from tablectl.drivers.plugins import RegistryEntry  # noqa: PLC0415
    from tablectl.drivers.registry import available_drivers  # noqa: PLC0415

    found: list[tuple[str, RegistryEntry]] = [
        ("driver", e) for e in available_drivers().values() if e.source != "built-in"
    ]
    found += [("game", g) for g in plugin_games()]
    lines = []
    for kind, entry in found:
        state = f"REFUSED: {entry.refused}" if entry.refused else "available"
        where = f"{entry.module}:{entry.cls} ({entry.source})"
        lines.append(f"plugin {kind} {entry.name}: {where} {state}")
    return lines


def _command_word(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names (its first word that is no option nor an option's value)."""
    words = iter(argv)
    for word in words:
        if word == "--log-format":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """Every subcommand; with ``only="run"`` just ``run``: building the others imports the
    dashboard, the archive and the simulators, half of ``run``'s cold start (docs/performance.md).
    """
    parser = argparse.ArgumentParser(
        prog="tablectl",
        description="Open table-game controller: devices → validated rounds → MQTT.",
    )
    parser.add_argument("--log-format", choices=("auto", "console", "json"), default="auto")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    from tablectl import __version__  # noqa: PLC0415 - see the imports above

    parser.add_argument("--version", action="version", version=f"tablectl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run the table service (one or several tables)")
    run.add_argument(
        "--config",
        required=True,
        type=Path,
        action="append",
        help="table config (TOML); repeat to run several tables in one process",
    )
    run.add_argument(
        "--metrics-listen",
        metavar="HOST:PORT",
        help="serve Prometheus metrics on http://HOST:PORT/metrics (overrides [metrics] listen)",
    )
    if only == "run":
        from tablectl.controller.tools.cli_help import polish  # noqa: PLC0415

        polish(parser, completion=False)
        return parser

    _add_demo(sub)
    _add_simulate(sub)
    _add_dashboard(sub)
    _add_archive(sub)
    replay = sub.add_parser("replay", help="re-validate normalized events (JSONL) offline")
    replay.add_argument("--config", required=True, type=Path)
    replay.add_argument("events", type=Path, help="JSONL file of normalized events, or - for stdin")

    check = sub.add_parser(
        "check-config", help="validate a table config as run does (exit 78 on a bad config)"
    )
    check.add_argument("config", type=Path)

    _add_watch(sub)
    from tablectl.controller.staff import cli as staff_cli  # noqa: PLC0415
    from tablectl.controller.station import cli as station_cli  # noqa: PLC0415

    staff_cli.add_parser(sub)
    station_cli.add_parser(sub)

    cmd = sub.add_parser("cmd", help="sign a command, send it to a table, print the reply")
    from tablectl.controller.tools.commander import add_arguments as add_cmd_arguments  # noqa: PLC0415

    add_cmd_arguments(cmd)

    diag = sub.add_parser("diag", help="technician tools: ports, probe, sniff, selftest, stats")
    from tablectl.controller.tools.diag.cli import add_arguments as add_diag_arguments  # noqa: PLC0415

    add_diag_arguments(diag)

    verify = sub.add_parser(
        "verify",
        help="check a journal's hash chain (files or a folder as one chain); with --key also"
        " its keyed anchors",
    )
    from tablectl.controller.journal import add_verify_arguments  # noqa: PLC0415

    add_verify_arguments(verify)
    _add_archive_verify(verify)

    export = sub.add_parser("export", help="a round or a time range as normalized events (JSONL)")
    from tablectl.controller.tools.export import add_arguments as add_export_arguments  # noqa: PLC0415

    add_export_arguments(export)
    admin = sub.add_parser(
        "archive-admin",
        help="the floor's archive: its monthly partitions, old months detached to files",
        description="The archive's months (docs/fleet.md, Retention and partitions).",
    )
    from tablectl.controller.archive.admin import add_admin_arguments  # noqa: PLC0415

    add_admin_arguments(admin)
    _add_completion(sub)
    from tablectl.controller.tools.cli_help import polish  # noqa: PLC0415

    polish(parser)  # every --help: defaults shown, one example
    return parser


def _add_completion(sub: Any) -> None:
    from tablectl.controller.tools.cli_help import SHELLS  # noqa: PLC0415

    completion = sub.add_parser(
        "completion", help="print the shell completion script (bash, zsh or tcsh)"
    )
    completion.add_argument("shell", choices=SHELLS)


def _add_demo(sub: Any) -> None:
    demo = sub.add_parser(
        "demo", help="simulated wheel + embedded broker + controller + live view, one command"
    )
    demo.add_argument("--speed", type=float, default=4.0, help="simulator speed factor")
    demo.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="stop once every table has shown N outcomes, voids included (0: run on)",
    )
    demo.add_argument("--seed", type=int, default=7, help="the simulators' random seed")
    demo.add_argument(
        "--fault",
        action="append",
        default=None,
        metavar="KIND@GAME[=VALUE]",
        help="inject a wheel fault (default: misspin@3); repeatable; 'none' for none",
    )
    demo.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        help="the journals' folder, kept after the run (default: demo-journals/<start time>/)",
    )
    demo.add_argument(
        "--tables",
        type=_demo_tables,
        default="roulette,baccarat,lucky7,dream_catcher,ultimate_texas_holdem",
        help="comma-separated tables: roulette, baccarat, lucky7, dream_catcher, any house-"
        "banked poker or card game (e.g. ultimate_texas_holdem, andar_bahar) and the dice games "
        "sic_bo, craps, dice_duel, lightning_dice (default: %(default)s; example: --tables "
        "sic_bo,craps)",
    )
    demo.add_argument("--events", action="store_true", help="show every table event too")
    demo.add_argument(
        "--plain",
        action="store_true",
        help="one line per outcome instead of panels (what a pipe gets anyway)",
    )
    demo.add_argument(
        "--record",
        type=Path,
        metavar="SVG",
        help="also save the last screen of panels (120×44) as an SVG picture",
    )


def _add_archive(sub: Any) -> None:
    """``tablectl archive``: the floor's central archive (docs/fleet.md)."""
    archive = sub.add_parser(
        "archive",
        help="the floor's archive: every table's records from the broker into PostgreSQL,"
        " verified, gaps re-asked",
    )
    from tablectl.controller.tools.archive import add_arguments as add_archive_arguments  # noqa: PLC0415

    add_archive_arguments(archive)


def _add_dashboard(sub: Any) -> None:
    """``tablectl dashboard``: the read-only web view of every table under a prefix."""
    dashboard = sub.add_parser(
        "dashboard",
        help="read-only web dashboard of a floor's tables: tiles, history, roulette billboard,"
        " statistics",
    )
    from tablectl.controller.tools.dashboard.command import (  # noqa: PLC0415
        add_arguments as add_dashboard_arguments,
    )

    add_dashboard_arguments(dashboard)


def _add_simulate(sub: Any) -> None:
    """``tablectl simulate DEVICE``: each device family's simulator brings its own options."""
    simulate = sub.add_parser("simulate", help="serve a simulated device on a pty or TCP port")
    sim_sub = simulate.add_subparsers(dest="device", required=True, metavar="DEVICE")
    ss2 = sim_sub.add_parser("ss2", help="Cammegh Slingshot 2 roulette wheel")
    # composition root, see module doc: the simulators' own CLIs, imported only when asked for
    from tablectl.simulators.cli import bigwheel as bigwheel_cli  # noqa: PLC0415
    from tablectl.simulators.cli import drum as drum_cli  # noqa: PLC0415
    from tablectl.simulators.cli import shoe as shoe_cli  # noqa: PLC0415
    from tablectl.simulators.cli import shuffler as shuffler_cli  # noqa: PLC0415
    from tablectl.simulators.cli import ss2 as ss2_cli  # noqa: PLC0415

    ss2_cli.add_arguments(ss2)
    shoe = sim_sub.add_parser("shoe", help="card shoe / barcode scanner (serial lines)")
    shoe_cli.add_arguments(shoe)
    shuffler = sim_sub.add_parser("shuffler", help="card shuffler (reference protocol)")
    shuffler_cli.add_arguments(shuffler)
    bigwheel = sim_sub.add_parser("bigwheel", help="money wheel sensor (reference protocol)")
    bigwheel_cli.add_arguments(bigwheel)
    drum = sim_sub.add_parser("drum", help="lotto/keno ball drum on a CAN bus (reference protocol)")
    drum_cli.add_arguments(drum)
    from tablectl.simulators.cli import dice as dice_cli  # noqa: PLC0415

    dice = sim_sub.add_parser("dice", help="dice shaker and result reader (reference protocol)")
    dice_cli.add_arguments(dice)
    from tablectl.simulators.cli import dice_studio as dice_studio_cli  # noqa: PLC0415

    dice_studio = sim_sub.add_parser(
        "dice-studio", help="studio dice shaker + camera service on an MQTT broker"
    )
    dice_studio_cli.add_arguments(dice_studio)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tablectl`` console script.

    As the script (no ``argv``), a long-running command takes SIGINT and SIGTERM from here on: never
    a ``KeyboardInterrupt`` half-way through an import or a ``finally``. With ``argv`` (tests), the
    process's handlers are left alone outside the command's own loop.
    """
    if argv is not None:
        return _main(argv, deferred=False)
    argv = sys.argv[1:]
    if _command_word(argv) not in _LONG_RUNNING:
        return _main(argv, deferred=False)
    stopping.defer_signals()
    try:
        return _main(argv, deferred=True)
    finally:
        stopping.ignore_signals()  # over: a late signal must not kill the exit half-way


def _main(argv: Sequence[str], *, deferred: bool) -> int:
    from tablectl.controller.core.errors import ConfigError  # noqa: PLC0415
    from tablectl.controller.service.logs import configure_logging  # noqa: PLC0415
    from tablectl.drivers.errors import TablectlError  # noqa: PLC0415

    args = _parser(_command_word(argv)).parse_args(argv)
    # `dashboard --add-user` asks for a password: there Ctrl-C aborts at once.
    if deferred and getattr(args, "add_user", None) is not None and stopping.stop_deferring():
        return EXIT_OK
    # While panels draw, logs go to the footer and a file as JSON lines, never across them.
    log_format = "json" if args.log_format == "auto" and _panels(args) else args.log_format
    configure_logging(log_format, verbose=args.verbose, quiet=args.command == "demo")
    try:
        return _dispatch(args)
    except ConfigError as exc:
        # 78 (EX_CONFIG): the unit's RestartPreventExitStatus stops a restart loop on a bad file.
        # check-config answers the same way, so a deploy script can test a file as run would.
        print(f"tablectl {args.command}: {exc}", file=sys.stderr)
        return EXIT_CONFIG if args.command in _CONFIG_EXIT_COMMANDS else EXIT_ERROR
    except TablectlError as exc:
        print(f"tablectl {args.command}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_OK


def _dispatch(args: argparse.Namespace) -> int:
    command: str = args.command
    if command == "run":
        return _run(args)
    if command == "demo":
        from tablectl.controller.lab.demo import run_demo  # noqa: PLC0415

        faults = args.fault if args.fault is not None else ["misspin@3"]
        return _until_stopped(
            run_demo(
                speed=args.speed,
                rounds=args.rounds,
                seed=args.seed,
                faults=[f for f in faults if f != "none"],
                state_dir=args.state_dir,
                tables=args.tables,
                events=args.events,
                panels=_panels(args),
                record=args.record,
            )
        )
    if command == "simulate":
        return _simulate(args)
    if command == "replay":
        return _replay(args.config, args.events)
    if command == "check-config":
        from tablectl.controller.config import load_config  # noqa: PLC0415
        from tablectl.controller.service.app import check_config  # noqa: PLC0415

        for line in [*check_config(load_config(args.config)), *_plugin_lines()]:
            print(line)
        print("OK")
        return EXIT_OK
    if command == "completion":
        from tablectl.controller.tools.cli_help import completion_script  # noqa: PLC0415

        print(completion_script(_parser(), args.shell))
        return EXIT_OK
    if command == "cmd":
        from tablectl.controller.tools.commander import run as run_cmd  # noqa: PLC0415

        return run_cmd(args)
    if command == "diag":
        from tablectl.controller.tools.diag.cli import run as run_diag  # noqa: PLC0415

        return run_diag(args)
    if command == "archive":
        from tablectl.controller.tools.archive import run as run_archive  # noqa: PLC0415

        return run_archive(args)
    if command == "dashboard":
        from tablectl.controller.tools.dashboard.command import run as run_dashboard  # noqa: PLC0415

        return run_dashboard(args)
    if command == "watch":
        return _watch(args)
    if command in ("staff", "station"):
        from tablectl.controller.staff import cli as staff_cli  # noqa: PLC0415
        from tablectl.controller.station import cli as station_cli  # noqa: PLC0415

        code: int = (staff_cli if command == "staff" else station_cli).run(args)
        return code
    if command == "verify":
        return _verify(args)
    if command == "archive-admin":
        from tablectl.controller.archive.admin import run_admin  # noqa: PLC0415

        return run_admin(args)
    if command == "export":
        from tablectl.controller.tools.export import run as run_export  # noqa: PLC0415

        return run_export(args)
    raise AssertionError(command)  # pragma: no cover - argparse restricts the choices


def _add_watch(sub: Any) -> None:
    """``tablectl watch``'s options (the broker login as the dashboard's and the archive's)."""
    watch = sub.add_parser(
        "watch",
        help="a floor's tables live: a panel per table on a terminal, else one line per message",
    )
    watch.add_argument("--config", type=Path, help="take broker, prefix and table from a config")
    watch.add_argument("--url", help="mqtt://host:port (overrides the config)")
    watch.add_argument(
        "--prefix", default=None, help="topic prefix (default: the config's, else tablectl)"
    )
    watch.add_argument("--table", default=None, help="table id (default: all tables)")
    output = watch.add_mutually_exclusive_group()
    output.add_argument("--raw", action="store_true", help="print topic and raw JSON")
    output.add_argument(
        "--json",
        action="store_true",
        help='one JSON object per message, {"topic","retained","payload"} (for machines)',
    )
    watch.add_argument(
        "--plain",
        action="store_true",
        help="one line per message, no colour, no panels (what a pipe gets anyway)",
    )
    from tablectl.controller.tools.broker_login import add_login_arguments  # noqa: PLC0415

    add_login_arguments(watch)  # with --config: its [mqtt] login where an option is not given


def _add_archive_verify(verify: argparse.ArgumentParser) -> None:
    """``verify --dsn``/``--archive-file``, and ``archive-admin``: the floor's archive, whose
    modules (and psycopg) are imported only when those run."""
    from tablectl.controller.archive.admin import (  # noqa: PLC0415 - no psycopg import here
        add_verify_arguments,
    )

    add_verify_arguments(verify)


def _verify(args: argparse.Namespace) -> int:
    """Journal files, or the archive (``--dsn``, ``--archive-file``, or detached months given)."""
    from tablectl.controller.archive.admin import wants_archive  # noqa: PLC0415

    if wants_archive(args):
        from tablectl.controller.archive.admin import run_verify as verify_archive  # noqa: PLC0415

        return verify_archive(args)
    if args.table:
        print("tablectl verify: --table goes with --dsn or --archive-file", file=sys.stderr)
        return EXIT_USAGE
    if not args.journal:
        print(
            "tablectl verify: give JOURNAL… (files or a folder), or --dsn / --archive-file for"
            " the archive",
            file=sys.stderr,
        )
        return EXIT_USAGE
    from tablectl.controller.journal import run_verify  # noqa: PLC0415

    return run_verify(args)


def _panels(args: argparse.Namespace) -> bool:
    """``demo`` and ``watch`` draw a panel per table on a terminal, unless told to print lines."""
    if args.command not in ("demo", "watch") or not sys.stdout.isatty() or args.plain:
        return False
    return not (getattr(args, "raw", False) or getattr(args, "json", False))


def _demo_tables(text: str) -> list[str]:
    from tablectl.controller.lab.floor import lab_tables  # noqa: PLC0415

    tables = [t.strip() for t in text.split(",") if t.strip()]
    known = lab_tables()
    unknown = sorted(set(tables) - known)
    if unknown or not tables:
        what = f"unknown {', '.join(unknown)}; " if unknown else ""
        raise argparse.ArgumentTypeError(f"{what}choose from {', '.join(sorted(known))}")
    return tables


def _run(args: argparse.Namespace) -> int:
    from tablectl.controller.config import load_config  # noqa: PLC0415
    from tablectl.controller.core.errors import ConfigError  # noqa: PLC0415
    from tablectl.controller.service.process import run_table  # noqa: PLC0415 - keep `replay`/`verify` light

    configs = [load_config(path) for path in args.config]
    listens = {c.metrics.listen for c in configs if c.metrics.listen}
    if args.metrics_listen is None and len(listens) > 1:
        raise ConfigError(
            f"[metrics] listen differs between configs ({sorted(listens)}): use --metrics-listen"
        )
    listen = args.metrics_listen or next(iter(listens), None)
    if len(configs) == 1:
        return _until_stopped(run_table(configs[0], metrics_listen=listen))
    from tablectl.controller.service.host import run_tables  # noqa: PLC0415

    return _until_stopped(run_tables(configs, metrics_listen=listen))


def _until_stopped(command: Coroutine[Any, Any, int | None]) -> int:
    """Run a long-running command until it ends or SIGINT/SIGTERM stops it in order: its exit
    code, :data:`EXIT_OK` after a stop (docs/operations.md, "Stopping")."""
    code = stopping.run(command)
    return EXIT_OK if code is None else code


def _simulate(args: argparse.Namespace) -> int:
    """``tablectl simulate DEVICE``: each device family's simulator brings its own CLI."""
    if args.device == "shoe":
        from tablectl.simulators.cli.shoe import run as run_shoe  # noqa: PLC0415

        return _until_stopped(run_shoe(args))
    if args.device == "dice":
        from tablectl.simulators.cli.dice import run as run_dice  # noqa: PLC0415

        return _until_stopped(run_dice(args))
    if args.device == "dice-studio":
        from tablectl.simulators.cli.dice_studio import run as run_dice_studio  # noqa: PLC0415

        return _until_stopped(run_dice_studio(args))
    if args.device == "drum":
        from tablectl.simulators.cli.drum import run as run_drum  # noqa: PLC0415

        return _until_stopped(run_drum(args))
    if args.device == "bigwheel":
        from tablectl.simulators.cli.bigwheel import run as run_bigwheel  # noqa: PLC0415

        return _until_stopped(run_bigwheel(args))
    if args.device == "shuffler":
        from tablectl.simulators.cli.shuffler import run as run_shuffler  # noqa: PLC0415

        return _until_stopped(run_shuffler(args))
    from tablectl.simulators.cli.ss2 import run as run_ss2  # noqa: PLC0415

    return _until_stopped(run_ss2(args))


def _replay(config_path: Path, events: Path) -> int:
    from tablectl.controller.config import load_config  # noqa: PLC0415
    from tablectl.controller.engines.replay import run_replay  # noqa: PLC0415
    from tablectl.controller.service.app import build_engine_for  # noqa: PLC0415

    engine = build_engine_for(load_config(config_path))
    if str(events) == "-":
        report = run_replay(engine, sys.stdin, sys.stdout, sys.stderr)
    else:
        try:
            with events.open(encoding="utf-8") as source:
                report = run_replay(engine, source, sys.stdout, sys.stderr)
        except OSError as exc:
            print(f"tablectl replay: cannot read {events}: {exc.strerror}", file=sys.stderr)
            return EXIT_ERROR
    print(
        f"replay: {report.events} events, {report.outcomes} outcomes, "
        f"{report.verdicts} verdicts, {report.errors} bad lines",
        file=sys.stderr,
    )
    return EXIT_ERROR if report.errors else EXIT_OK


def _watch(args: argparse.Namespace) -> int:
    from tablectl.controller.mqtt.publisher import broker_address  # noqa: PLC0415
    from tablectl.controller.tools.broker_login import broker_login  # noqa: PLC0415
    from tablectl.controller.tools.watch import watch  # noqa: PLC0415

    url, prefix, table, base = args.url, args.prefix, args.table, None
    if args.config is not None:
        from tablectl.controller.config import load_config  # noqa: PLC0415

        config = load_config(args.config)
        url = url or config.mqtt.url
        prefix = prefix or config.mqtt.topic_prefix
        table = table or config.table.id
        base = config.mqtt
        if url == "embedded":
            url = f"mqtt://{config.mqtt.embedded_listen}"
    mqtt, security = broker_login(args, url or "mqtt://127.0.0.1:1883", prefix or "tablectl", base)
    host, port, _tls = broker_address(mqtt.url)
    topic_filter = f"{prefix or 'tablectl'}/{table or '+'}/#"
    colour = sys.stdout.isatty() and not args.plain
    emit = functools.partial(print, flush=True)
    try:
        if _panels(args):  # a terminal: one live panel per table
            from rich.console import Console  # noqa: PLC0415

            from tablectl.controller.tools.panels.live import watch_panels  # noqa: PLC0415

            return _until_stopped(
                watch_panels(
                    host, port, topic_filter, console=Console(highlight=False), security=security
                )
            )
        return _until_stopped(
            watch(
                host,
                port,
                topic_filter,
                emit=emit,
                colour=colour,
                raw=args.raw,
                as_json=args.json,
                security=security,
            )
        )
    except OSError as exc:  # ConnectionError from watch: unreachable, refused, lost
        print(f"tablectl watch: {exc}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
