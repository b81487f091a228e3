"""``python -m tablectl.controller.station``: the station alone, as ``tablectl station`` runs it
(the same parser and the same one-line errors), for tests and a kiosk's unit file."""

from __future__ import annotations

import argparse
import sys

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.service.logs import configure_logging
from tablectl.controller.station.cli import add_parser, run
from tablectl.drivers.errors import TablectlError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tablectl")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["station", *(sys.argv[1:] if argv is None else argv)])
    configure_logging("json", verbose=False, quiet=False)
    try:
        return run(args)
    except (ConfigError, TablectlError) as exc:
        print(f"tablectl station: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
