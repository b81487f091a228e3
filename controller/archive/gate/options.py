"""``tablectl archive``'s options for what it takes from the broker: admission's limits and the
resend caps, with their defaults and checks beside the code that applies them."""

from __future__ import annotations

import argparse
from dataclasses import replace
from datetime import timedelta

from tablectl.controller.archive.gate.admission import Limits
from tablectl.controller.archive.upkeep import Cadence
from tablectl.controller.core.errors import ConfigError

_DEFAULT = Limits()
_CADENCE = Cadence()


def add_bound_arguments(parser: argparse.ArgumentParser) -> None:
    """The options bounding what the archiver takes (with their defaults)."""
    group = parser.add_argument_group(
        "bounds", "what a message may be before it is quarantined (docs/fleet.md)"
    )
    group.add_argument(
        "--max-message-bytes",
        type=int,
        default=_DEFAULT.max_bytes,
        help="a larger message is quarantined (too_large), never stored",
    )
    group.add_argument(
        "--max-json-depth",
        type=int,
        default=_DEFAULT.max_depth,
        help="JSON nested deeper is quarantined (too_deep)",
    )
    group.add_argument(
        "--seq-window",
        type=int,
        default=_DEFAULT.seq_window,
        help="seq values a record may be ahead of its table's verified head (beyond: seq_ahead)",
    )
    group.add_argument(
        "--seq-rate",
        type=float,
        default=_DEFAULT.seq_rate,
        help="records per second a table may have journaled since its verified head's ts, "
        "added to the window",
    )
    group.add_argument(
        "--ts-slack-back",
        type=float,
        default=_DEFAULT.ts_back.total_seconds(),
        help="seconds a record may be dated before its table's verified head (ts_behind)",
    )
    group.add_argument(
        "--ts-slack-ahead",
        type=float,
        default=_DEFAULT.ts_ahead.total_seconds(),
        help="seconds a record may be dated after now (ts_ahead)",
    )
    group.add_argument(
        "--max-age-days",
        type=float,
        default=_DEFAULT.max_age.days,
        help="days before now a record may be dated at all, and the span a table with nothing "
        "verified yet gets (ts_too_old); partitions are made for these months only",
    )
    group.add_argument(
        "--resend-per-table",
        type=int,
        default=_CADENCE.resend_per_table,
        help="cmd/resend requests for one table in one verification pass at most",
    )
    group.add_argument(
        "--resend-per-pass",
        type=int,
        default=_CADENCE.resend_per_pass,
        help="cmd/resend requests in one verification pass at most (probes included)",
    )


def bounds_of(args: argparse.Namespace, cadence: Cadence) -> tuple[Limits, Cadence]:
    """The :class:`Limits` of the options, and ``cadence`` with their resend caps."""
    checks = (
        ("--max-message-bytes", args.max_message_bytes, 1_024, 16 * 1024 * 1024),
        ("--max-json-depth", args.max_json_depth, 4, 512),
        ("--seq-window", args.seq_window, 1, 2**62),
        ("--seq-rate", args.seq_rate, 0, 1_000_000),
        ("--ts-slack-back", args.ts_slack_back, 0, 366 * 86_400),
        ("--ts-slack-ahead", args.ts_slack_ahead, 0, 366 * 86_400),
        ("--max-age-days", args.max_age_days, 1, 36_600),
        ("--resend-per-table", args.resend_per_table, 1, 10_000),
        ("--resend-per-pass", args.resend_per_pass, 1, 1_000_000),
    )
    for name, value, low, high in checks:
        if not low <= value <= high:  # NaN too
            raise ConfigError(f"{name} {value}: must be {low}..{high}")
    limits = Limits(
        max_bytes=args.max_message_bytes,
        max_depth=args.max_json_depth,
        seq_window=args.seq_window,
        seq_rate=args.seq_rate,
        ts_back=timedelta(seconds=args.ts_slack_back),
        ts_ahead=timedelta(seconds=args.ts_slack_ahead),
        max_age=timedelta(days=args.max_age_days),
    )
    return limits, replace(
        cadence, resend_per_table=args.resend_per_table, resend_per_pass=args.resend_per_pass
    )
