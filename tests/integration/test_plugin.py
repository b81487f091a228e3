"""A third-party driver package, installed for real, found through its entry point and run.

``tests/plugins/tablectl-acme`` is what an integrator writes for a shoe whose protocol is under
NDA (docs/writing-a-driver.md): a codec, a driver, a simulator, and a ``tablectl.drivers`` entry
point. Here it is built and installed with pip into a folder of its own (``--target``), and
tablectl run with that folder on ``PYTHONPATH``: ``diag ports`` and ``check-config`` list it, a
second entry point that reuses a built-in name is refused, and a baccarat table journals the
cards its simulated shoe deals, through a real Mosquitto.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "tests" / "plugins" / "tablectl-acme"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

_TABLECTL = (sys.executable, "-m", "tablectl")
_PIP_INSTALL = (sys.executable, "-m", "pip", "install", "--quiet", "--no-deps")


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("plugin-site")
    subprocess.run(
        [*_PIP_INSTALL, "--target", str(site), str(PLUGIN)],
        check=True,
        timeout=240,
        cwd=site,
    )
    assert (site / "tablectl_acme" / "driver.py").is_file()
    return site


def _env(site: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(site)])
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _tablectl(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_TABLECTL, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(site),
        check=False,
    )


def _config(tmp_path: Path, port: str, mqtt_url: str = "mqtt://127.0.0.1:1") -> Path:
    path = tmp_path / "BAC-P.toml"
    path.write_text(
        f"""[table]
id = "BAC-P"
game = "baccarat"
[rules]
decks = 8
[betting]
mode = "external"
[mqtt]
url = "{mqtt_url}"
topic_prefix = "it"
reconnect_max_delay = 0.5
[journal]
path = "{tmp_path / "BAC-P.sqlite"}"
[security]
insecure_commands = true
[[devices]]
id = "shoe"
driver = "acme-shoe"
port = "{port}"
""",
        encoding="utf-8",
    )
    return path


def test_diag_ports_lists_the_plugin_and_refuses_a_shadow(plugin_site: Path) -> None:
    result = _tablectl(plugin_site, "diag", "ports")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    acme = [line for line in lines if line.startswith("acme-shoe ")]
    assert len(acme) == 1, result.stdout
    assert "tablectl_acme.driver:AcmeShoeDriver" in acme[0]
    assert "tablectl-acme 0.1.0" in acme[0]
    assert acme[0].rstrip().endswith("ok")
    # the built-in keeps its name; the plugin's copy is listed, refused, never used
    builtin = [line for line in lines if line.startswith("cammegh-ss2 ")]
    assert any("built-in" in line and "SS2Driver" in line for line in builtin), result.stdout
    shadow = [line for line in builtin if "tablectl-acme 0.1.0" in line]
    assert len(shadow) == 1, result.stdout
    assert "REFUSED: reuses the built-in driver name 'cammegh-ss2'" in shadow[0]


def test_without_the_package_the_driver_is_unknown(tmp_path: Path) -> None:
    config = _config(tmp_path, "socket://127.0.0.1:9")
    result = _tablectl(tmp_path, "check-config", str(config))  # tmp_path: no plugin there
    assert result.returncode == 78
    assert "unknown driver 'acme-shoe'" in result.stderr


@pytest.fixture
def acme_shoe(plugin_site: Path) -> Iterator[str]:
    """The plugin's own simulator dealing three cards; yields its ``socket://`` URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tablectl_acme.simulator", "--interval", "0.05", "AS", "KH", "9D"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(plugin_site),
    )
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline().decode().split()
        assert ready[:2] == ["READY", "tcp"], ready
        yield f"socket://{ready[2]}"
    finally:
        proc.kill()
        proc.wait(timeout=5)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


async def test_a_table_runs_the_plugin_device(
    tmp_path: Path, plugin_site: Path, acme_shoe: str, mosquitto: MosquittoProcess
) -> None:
    config = _config(tmp_path, acme_shoe, mosquitto.url)
    checked = _tablectl(plugin_site, "check-config", str(config))
    assert checked.returncode == 0, checked.stderr
    assert "plugin driver acme-shoe: tablectl_acme.driver:AcmeShoeDriver" in checked.stdout
    assert checked.stdout.rstrip().endswith("OK")
    async with Subscriber(mosquitto.host, mosquitto.port, "it/BAC-P/#") as sub:
        with (tmp_path / "controller.log").open("wb") as log:
            ctl = await asyncio.create_subprocess_exec(
                *_TABLECTL,
                *("--log-format", "json", "run", "--config", str(config)),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=log,
                env=_env(plugin_site),
            )
            try:
                events = await sub.wait_until(
                    lambda ms: (
                        [m.json().get("card") for m in ms if m.topic == "it/BAC-P/events"].count(
                            "9D"
                        )
                        == 1
                    ),
                    timeout=30,
                )
            finally:
                ctl.terminate()
                await ctl.wait()
    cards = [
        (m.json()["card"], m.json()["device"])
        for m in events
        if m.topic == "it/BAC-P/events" and m.json().get("type") == "card"
    ]
    assert cards == [("AS", "shoe"), ("KH", "shoe"), ("9D", "shoe")]


def _stream(path: Path, *cards: str) -> Path:
    events: list[dict[str, object]] = [
        {"type": "shuffle_started"},
        {"type": "shuffle_completed", "cards": 52},
    ]
    for player, dealer in zip(cards[::2], cards[1::2], strict=True):
        events += [{"type": "round_open"}, {"type": "bets_closed"}]
        events += [{"type": "card", "card": player}, {"type": "card", "card": dealer}]
    lines = [
        json.dumps({**event, "ts": f"2026-12-01T10:00:{n:02d}Z"}) for n, event in enumerate(events)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_game_from_a_package_runs_on_the_card_engine(tmp_path: Path, plugin_site: Path) -> None:
    config = tmp_path / "HC.toml"
    config.write_text(
        f"""[table]
id = "HC-1"
game = "acme_high_card"
[mqtt]
url = "mqtt://127.0.0.1:1"
[journal]
path = "{tmp_path / "HC.sqlite"}"
""",
        encoding="utf-8",
    )
    events = _stream(tmp_path / "hc.jsonl", "KH", "7S", "9C", "9D", "2H", "AS")
    replayed = _tablectl(plugin_site, "replay", "--config", str(config), str(events))
    assert replayed.returncode == 0, replayed.stderr
    outcomes = [json.loads(line) for line in replayed.stdout.splitlines()]
    assert [(o["game"], o["status"], o["result"]) for o in outcomes] == [
        ("acme_high_card", "settled", {"player": "KH", "dealer": "7S", "winner": "player"}),
        ("acme_high_card", "settled", {"player": "9C", "dealer": "9D", "winner": "tie"}),
        ("acme_high_card", "settled", {"player": "2H", "dealer": "AS", "winner": "dealer"}),
    ]
    # the engine's own rules apply to it like to every card game: a card nobody called for
    extra = _stream(tmp_path / "extra.jsonl", "KH", "7S")
    extra.write_text(
        extra.read_text() + json.dumps({"type": "card", "card": "QS", "ts": "2026-12-01T10:01:00Z"})
    )
    refused = _tablectl(plugin_site, "replay", "--config", str(config), str(extra))
    assert '"code":"extra_card"' in refused.stderr.replace(" ", ""), refused.stderr
    checked = _tablectl(plugin_site, "check-config", str(config))
    assert "plugin game acme_high_card: tablectl_acme.game:HighCard" in checked.stdout
    # without the package the key is unknown, as any typo would be
    missing = _tablectl(tmp_path, "check-config", str(config))
    assert missing.returncode == 78
    assert "unknown game 'acme_high_card'" in missing.stderr
