"""``tablectl station`` as a dealer sees it: a real table, a real station, a real touch screen.

A real Mosquitto (the fixture), the table as ``tablectl run`` with simulated devices, the station
as its own process (``python -m tablectl.controller.station``, what ``tablectl station`` runs),
and Debian's headless Chromium at 1280×800 with touch (``has_touch``, ``page.tap``). The table
checks every command's signature (``[security] roles``) and has a ``[staff] roster``: what the
screen sends is what a floor table would judge. Screenshots go to docs/images/station-*.png.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tablectl.simulators.ss2 import DEFAULT_MODE
from tests.support.dashboard import browser, env
from tests.support.mosquitto import MosquittoProcess, free_port
from tests.support.mqtt import Subscriber
from tests.support.processes import start_controller, start_simulator
from tests.support.staff import write_roster
from tests.support.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
IMAGES = REPO / "docs" / "images"
VIEWPORT = {"width": 1280, "height": 800}


def table_config(
    tmp_path: Path,
    *,
    table: str,
    game: str,
    mqtt_url: str,
    body: str = "",
    station: str = "",
) -> Path:
    """A floor-like table: signed commands by role ([security] roles), a roster, a station."""
    keys = []
    for role in ("dealer", "supervisor", "technician"):
        key = tmp_path / f"{role}.key"
        key.write_text(f"{role}-{'0123456789abcdef' * 2}\n", encoding="utf-8")
        key.chmod(0o600)
        keys.append(f'{role} = "{key}"')
    roster = write_roster(tmp_path / "roster.toml")
    path = tmp_path / f"{table}.toml"
    path.write_text(
        f"""[table]
id = "{table}"
game = "{game}"

[mqtt]
url = "{mqtt_url}"
topic_prefix = "it"
reconnect_max_delay = 0.5

[journal]
path = "{tmp_path / "journal.sqlite"}"

[security]
roles = {{ {", ".join(keys)} }}

[staff]
roster = "{roster}"

[station]
id = "st-{table}"
{station}

{body}
""",
        encoding="utf-8",
    )
    return path


@contextlib.contextmanager
def station_process(config: Path, port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The station as its own process until the block ends (SIGTERM: a clean stop)."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tablectl.controller.station",
                "--config",
                str(config),
                "--listen",
                f"127.0.0.1:{port}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env(),
            cwd=REPO,
        )
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.asynccontextmanager
async def station_page(config: Path, tmp_path: Path) -> AsyncIterator[Any]:
    """A station serving ``config`` and a touch page on it, once the table's state is shown."""
    port = free_port()
    log = tmp_path / "station.log"
    with station_process(config, port, log) as proc:

        def serving() -> bool:
            assert proc.poll() is None, log.read_text(errors="replace")
            return "serving http" in log.read_text(errors="replace")

        await wait_until(serving, timeout=30, what="the station to serve")
        async with browser() as chromium:
            context = await chromium.new_context(viewport=VIEWPORT, has_touch=True)
            page = await context.new_page()
            await page.goto(f"http://127.0.0.1:{port}/")
            await page.wait_for_selector("body[data-ready]", timeout=20_000)
            yield page
            await context.close()


async def tap(page: Any, selector: str) -> None:
    await page.tap(selector, timeout=10_000)


async def prompt_is(page: Any, text: str) -> None:
    await page.wait_for_function(
        "t => document.getElementById('prompt-text').textContent === t",
        arg=text,
        timeout=20_000,
    )


async def toast_is(page: Any, text: str) -> None:
    await page.wait_for_function(
        "t => document.getElementById('toast-msg').textContent === t",
        arg=text,
        timeout=20_000,
    )


async def type_on_keypad(page: Any, dialog: str, text: str) -> None:
    for key in text:
        await tap(page, f"#{dialog} .keypad button[data-key='{key}']")


async def sign_on(page: Any, badge: str, *, name: str) -> None:
    """A dealer's badge swiped: the HID wedge types it and Enter into the focused field."""
    await tap(page, "#btn-sign-on")
    await page.keyboard.type(badge)
    await page.keyboard.press("Enter")
    await page.wait_for_function(
        "n => document.getElementById('at-station').textContent.includes(n)",
        arg=name,
        timeout=15_000,
    )


async def sign_as(page: Any, *, badge: str, pin: str) -> None:
    """A supervisor or technician authenticates for one action: badge, then PIN on the pad."""
    await page.wait_for_selector("#dlg-signer:not([hidden])", timeout=10_000)
    await page.keyboard.type(badge)
    await page.keyboard.press("Enter")
    await type_on_keypad(page, "dlg-signer", pin)
    await tap(page, "#signer-go")


async def screenshot(page: Any, name: str) -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(IMAGES / f"station-{name}.png"))


pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(150)]


def _records(sub: Subscriber, table: str, kind: str) -> list[dict[str, Any]]:
    return [p for p in sub.payloads(f"it/{table}/events") if p.get("type") == kind]


async def test_fan_tan_betting_and_a_bead_count_keyed_in_twice(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    config = table_config(
        tmp_path,
        table="FT-ST",
        game="fan_tan",
        mqtt_url=mosquitto.url,
        body='[betting]\nmode = "dealer"\n',
    )
    async with Subscriber(mosquitto.host, mosquitto.port, "it/FT-ST/#") as sub:
        with start_controller(config, tmp_path):
            async with station_page(config, tmp_path) as page:
                await sign_on(page, "BADGE-0142", name="Ana Ruiz")
                await prompt_is(page, "Open betting")
                await screenshot(page, "signed-on")
                await tap(page, "#btn-open")
                await prompt_is(page, "Close betting")
                await tap(page, "#btn-close")
                await prompt_is(page, "Key in the bead count")
                # Entered twice: a slip of the finger is caught before anything is sent.
                await tap(page, "#btn-key-in")
                await type_on_keypad(page, "dlg-key-in", "27")
                await page.focus("#key-in-again")
                await type_on_keypad(page, "dlg-key-in", "28")
                await tap(page, "#key-in-go")
                await toast_is(page, "the two entries differ: enter it again")
                await tap(page, "#btn-key-in")
                await type_on_keypad(page, "dlg-key-in", "27")
                await page.focus("#key-in-again")
                await type_on_keypad(page, "dlg-key-in", "27")
                await screenshot(page, "key-in")
                await tap(page, "#key-in-go")
                await toast_is(page, "Bead count 27 keyed in")
                await page.wait_for_selector("#results li", timeout=15_000)
                assert await page.inner_text("#results li") == "27 (3)"
                await prompt_is(page, "Open betting")
                await screenshot(page, "fan-tan")
        (beads,) = _records(sub, "FT-ST", "beads")
        assert beads["manual"] is True
        assert beads["count"] == 27
        commands = _records(sub, "FT-ST", "command")
        assert {c["role"] for c in commands} == {"dealer"}
        assert {c["by"] for c in commands} == {"D-0142"}
        (outcome,) = _records(sub, "FT-ST", "outcome")
        assert (outcome["status"], outcome["result"]["beads"]) == ("settled", 3)


async def test_wrong_pins_lock_the_person_out_and_the_station_counts_it(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    config = table_config(
        tmp_path,
        table="FT-LOCK",
        game="fan_tan",
        mqtt_url=mosquitto.url,
        station="max_pin_failures = 3\nlockout_seconds = 600",
    )
    with start_controller(config, tmp_path):
        async with station_page(config, tmp_path) as page:
            for attempt in range(3):
                await tap(page, "#btn-sign-on")
                await page.fill("#sign-on-person", "D-0177")
                await page.focus("#sign-on-pin")
                await type_on_keypad(page, "dlg-sign-on", "1111")
                await tap(page, "#sign-on-go")
                expected = "Wrong PIN" if attempt < 2 else "Wrong PIN: Ben Okafor is locked for"
                await page.wait_for_function(
                    "t => document.getElementById('toast-msg').textContent.startsWith(t)",
                    arg=expected,
                    timeout=15_000,
                )
            # The right PIN now: still locked out.
            await tap(page, "#btn-sign-on")
            await page.fill("#sign-on-person", "D-0177")
            await page.fill("#sign-on-pin", "7730")
            await tap(page, "#sign-on-go")
            await toast_is(page, "Ben Okafor is locked out for 10 minutes")
            assert await page.get_attribute("#toast", "data-code") == "locked_out"
            await screenshot(page, "locked-out")
            port = page.url.split(":")[2].split("/")[0]
            status = await page.request.get(f"http://127.0.0.1:{port}/status.json")
            counters = await status.json()
            assert counters["pin_failures_total"] == 3
            assert counters["lockouts_total"] >= 1
            metrics = await (await page.request.get(f"http://127.0.0.1:{port}/metrics")).text()
            assert 'tablectl_station_pin_failures_total{station="st-FT-LOCK"} 3' in metrics
    log = (tmp_path / "station.log").read_text(errors="replace")
    assert log.count("staff_wrong_pin") == 3


async def test_a_technician_clears_the_wheels_fault_from_the_screen(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    link = tmp_path / "wheel"
    sim_args = ["--pty", "--link", str(link), "--speed", "20", "--seed", "3", "--wait-for-host"]
    sim_args += ["--fault", "fault@2", "--numbers", "17,0,32,5"]
    device = (
        f'[[devices]]\nid = "wheel"\ndriver = "cammegh-ss2"\nport = "{link}"\n'
        f"reconnect_max_delay = 0.5\noperating_mode = {DEFAULT_MODE}\n"
    )
    config = table_config(
        tmp_path,
        table="ROU-ST",
        game="roulette",
        mqtt_url=mosquitto.url,
        body=f"[rules]\nmin_revolutions = 4\n\n{device}",
    )
    async with Subscriber(mosquitto.host, mosquitto.port, "it/ROU-ST/#") as sub:
        with start_controller(config, tmp_path), contextlib.ExitStack() as wheel:
            async with station_page(config, tmp_path) as page:
                # A dealer on duty before the wheel turns ([staff] dealer_required).
                await sign_on(page, "BADGE-0142", name="Ana Ruiz")
                wheel.enter_context(start_simulator(sim_args, tmp_path))
                # Spin 1 settles on 17; spin 2 powers the wheel down with a latched fault.
                await page.wait_for_selector("#results li", timeout=30_000)
                assert await page.inner_text("#results li") == "17"
                clear = page.locator("#faults button.clear")
                await clear.first.wait_for(timeout=30_000)
                assert await page.get_attribute("#prompt", "class") == "tone-stop"
                assert "Stop the game and call a supervisor" in await page.inner_text("#faults")
                await screenshot(page, "fault")
                # The technician looks first: the self-test view asks the table (cmd/status).
                await tap(page, "#btn-tech")
                await tap(page, "#tech-run")
                await page.wait_for_function(
                    "() => document.getElementById('tech-status').textContent.includes('faults')",
                    timeout=15_000,
                )
                assert "wheel" in await page.inner_text("#tech-devices")
                await screenshot(page, "technician")
                await tap(page, "#dlg-tech .cancel")
                # A dealer may not clear them: the technician authenticates for each one.
                codes = await clear.evaluate_all("bs => bs.map(b => b.dataset.code)")
                assert "ss2_powered_down" in codes
                for code in codes:
                    await page.locator(f"#faults button.clear[data-code='{code}']").tap()
                    await page.wait_for_selector("#dlg-signer:not([hidden])", timeout=10_000)
                    await page.fill("#signer-person", "T-0300")
                    await page.focus("#signer-pin")
                    await type_on_keypad(page, "dlg-signer", "3141")
                    await tap(page, "#signer-go")
                    await toast_is(page, f"{code} cleared on wheel")
                await page.wait_for_selector("#faults li.none", timeout=15_000)
        cleared = [r for r in _records(sub, "ROU-ST", "fault_cleared") if r.get("manual")]
        assert sorted((r["device"], r["code"]) for r in cleared) == sorted(
            ("wheel", c) for c in codes
        )
        commands = [c for c in _records(sub, "ROU-ST", "command") if c["verb"] == "clear_fault"]
        assert {(c["role"], c["by"]) for c in commands} == {("technician", "T-0300")}
