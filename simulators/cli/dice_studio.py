"""``tablectl simulate dice-studio``: a simulated studio dice shaker and camera service on a broker.

Speaks ``docs/protocols/dice-mqtt.md`` (the ``mqtt-dice`` defaults, or a ``--shapes`` file).
Prints ``READY mqtt URL`` once connected; exits 0 on SIGINT/SIGTERM or after ``--shakes N``, 2 on
bad arguments, 1 when serving failed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tomllib
from collections.abc import Awaitable
from pathlib import Path

import pydantic

from tablectl.drivers.dice_mqtt.driver import DiceMqttSettings
from tablectl.drivers.dice_mqtt.messages import StudioShape
from tablectl.drivers.errors import DriverInitError
from tablectl.drivers.transports.mqtt import endpoint_from_url
from tablectl.drivers.transports.pubsub import broker_url_problem
from tablectl.simulators.cli import kit as clikit
from tablectl.simulators.dice_studio import FaultSpec, SimDiceStudio, StudioService
from tablectl.simulators.errors import SimulatorError

_NAME = "tablectl simulate dice-studio"
_EXAMPLE = """example:
  tablectl simulate dice-studio --url mqtt://127.0.0.1:1883 --speed 5 --fault unreadable@2

  and in the table's config (same broker as [mqtt] url, so no url of its own):
    [[devices]]
    id = "dice"
    driver = "mqtt-dice"
"""


def _url(text: str) -> str:
    problem = broker_url_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{text!r}: {problem}")
    return text


def load_shapes(path: Path | None) -> StudioShape:
    """The wiring from a TOML file of ``mqtt-dice`` device keys (a pasted entry's ``id`` and
    ``driver`` are ignored), or the driver's defaults; ``SimulatorError`` if unreadable or wrong.
    """
    if path is None:
        return StudioShape()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SimulatorError(f"--shapes {path}: {exc}") from None
    data.pop("id", None)
    data.pop("driver", None)
    try:
        return DiceMqttSettings.model_validate(data).shape()
    except pydantic.ValidationError as exc:
        raise SimulatorError(f"--shapes {path}: {exc}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``simulate dice-studio`` options to ``parser`` (and its example)."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = _EXAMPLE
    parser.add_argument(
        "--url",
        type=_url,
        default="mqtt://127.0.0.1:1883",
        help="the broker, mqtt://HOST[:PORT] or mqtts:// (default mqtt://127.0.0.1:1883)",
    )
    parser.add_argument("--username", help="broker login (default: anonymous)")
    parser.add_argument(
        "--password-file", type=Path, metavar="FILE", help="first line: the password (mode 0600)"
    )
    parser.add_argument("--ca-file", type=Path, metavar="FILE", help="mqtts:// only: CA bundle")
    parser.add_argument("--client-id", help="MQTT client id (default: a random one)")
    parser.add_argument(
        "--dice",
        type=clikit.whole_type(1, 6, "dice"),
        default=3,
        metavar="N",
        help="dice in the shaker, 1-6 (default 3)",
    )
    clikit.add_seed_argument(parser, "RNG seed of the dice")
    clikit.add_speed_argument(parser)
    clikit.add_seconds_argument(
        parser,
        "--camera-delay",
        0.3,
        "studio seconds the camera takes to answer a read (default 0.3)",
        low=0,
        high=60,
    )
    parser.add_argument(
        "--shapes",
        type=Path,
        metavar="FILE",
        help="TOML with the mqtt-dice device's shape keys (topics, status_words, shake_command, "
        "camera_keys, detect_args, camera_errors; default: the driver's defaults)",
    )
    clikit.add_fault_argument(parser, FaultSpec)
    clikit.add_count_argument(parser, "--shakes", "shakes")


async def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM, or until ``--shakes`` shakes are over."""
    try:
        if args.shakes < 0:
            raise SimulatorError("--shakes must be >= 0")
        model = SimDiceStudio(
            load_shapes(args.shapes),
            dice=args.dice,
            seed=args.seed,
            speed=args.speed,
            faults=args.fault,
            camera_delay=args.camera_delay,
        )
        endpoint = endpoint_from_url(
            args.url,
            username=args.username,
            password_file=args.password_file,
            ca_file=args.ca_file,
        )
    except (ValueError, DriverInitError) as exc:
        return clikit.usage_error(_NAME, exc)
    service = StudioService(model, endpoint, client_id=args.client_id)
    ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def report(url: str) -> None:
        if not ready.done():  # once: a reconnect is not a new start
            print(f"READY mqtt {url}", flush=True)
            ready.set_result(None)

    shaken = clikit.until_results(args.shakes, settle=1.0 / args.speed)
    done: Awaitable[None] | None = None if shaken is None else shaken(model, ready)
    return await clikit.serve_until_stopped(
        _NAME, service.run(on_ready=report), done=done, task_name="sim:dice-studio"
    )


main = clikit.main_for(
    "dice_studio",
    "Serve a simulated studio dice shaker and camera service on an MQTT broker.",
    add_arguments,
    run,
)
"""``python -m tablectl.simulators.cli.dice_studio``: ``tablectl simulate dice-studio`` without
the service."""


if __name__ == "__main__":
    sys.exit(main())
