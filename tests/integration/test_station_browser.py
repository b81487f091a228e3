"""``tablectl station`` as a dealer sees it: a real table, a real station, a real touch screen.

A real Mosquitto (the fixture), the table as ``tablectl run`` with simulated devices, the station
as its own process (``python -m tablectl.controller.station``, what ``tablectl station`` runs),
and Debian's headless Chromium at 1280×800 with touch (``has_touch``, ``page.tap``). The table
checks every command's signature (``[security] roles``) and has a ``[staff] roster``: what the
screen sends is what a floor table would judge. ``TABLECTL_STATION_SCREENSHOTS=1`` remakes
docs/images/station-*.png.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.games.cards.baccarat import next_expected
from tablectl.controller.lab.tables import serve_sim
from tablectl.drivers.cards import parse_card
from tablectl.simulators.shoe import ShoeFault, SimShoe
from tablectl.simulators.shuffler import SimShuffler
from tablectl.simulators.ss2 import DEFAULT_MODE
from tests.support.dashboard import browser, page_process
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
    """``tablectl station`` as its own process until the block ends (SIGTERM: a clean stop)."""
    args = ["--config", str(config), "--listen", f"127.0.0.1:{port}"]
    with page_process("station", args, log) as proc:
        yield proc


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


def _device(device_id: str, driver: str, port: str, more: str = "") -> str:
    """One ``[[devices]]`` table of the config, reconnecting quickly."""
    head = f'[[devices]]\nid = "{device_id}"\ndriver = "{driver}"\nport = "{port}"\n'
    return f"{head}reconnect_max_delay = 0.5\n{more}\n"


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


async def key_in(page: Any, first: str, again: str, *, shot: str | None = None) -> None:
    """What a reader missed, entered twice on the keypad (the screen compares them)."""
    await tap(page, "#btn-key-in")
    await type_on_keypad(page, "dlg-key-in", first)
    await page.focus("#key-in-again")
    await type_on_keypad(page, "dlg-key-in", again)
    if shot is not None:
        await screenshot(page, shot)
    await tap(page, "#key-in-go")


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
    """docs/images/station-NAME.png when ``TABLECTL_STATION_SCREENSHOTS=1`` (remaking the docs'
    pictures), else a throwaway file: a test run leaves the checkout as it was."""
    folder = IMAGES if os.environ.get("TABLECTL_STATION_SCREENSHOTS") == "1" else None
    folder = folder or Path(tempfile.gettempdir()) / "tablectl-station-screens"
    folder.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(folder / f"station-{name}.png"))


pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(150)]


def _fan_tan(tmp_path: Path, mosquitto: MosquittoProcess, table: str, **more: str) -> Path:
    """A Fan Tan table: no device, the dealer keys in the count (docs/games/fan_tan.md)."""
    return table_config(tmp_path, table=table, game="fan_tan", mqtt_url=mosquitto.url, **more)


def _records(sub: Subscriber, table: str, kind: str) -> list[dict[str, Any]]:
    return [p for p in sub.payloads(f"it/{table}/events") if p.get("type") == kind]


async def test_fan_tan_betting_and_a_bead_count_keyed_in_twice(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    config = _fan_tan(tmp_path, mosquitto, "FT-ST", body='[betting]\nmode = "dealer"\n')
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
                await key_in(page, "27", "28")
                await toast_is(page, "the two entries differ: enter it again")
                await key_in(page, "27", "27", shot="key-in")
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
    config = _fan_tan(tmp_path, mosquitto, "FT-LOCK", station="max_pin_failures = 3")
    with start_controller(config, tmp_path):
        async with station_page(config, tmp_path) as page:
            for attempt in range(3):
                # Each attempt waits for its own answer, not the one before it on the screen.
                await page.evaluate(
                    "() => { document.getElementById('toast-msg').textContent = '' }"
                )
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
            await toast_is(page, "Ben Okafor is locked out for 15 minutes")
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
    wheel = _device("wheel", "cammegh-ss2", str(link), f"operating_mode = {DEFAULT_MODE}")
    body = f"[rules]\nmin_revolutions = 4\n\n{wheel}"
    config = table_config(
        tmp_path, table="ROU-ST", game="roulette", mqtt_url=mosquitto.url, body=body
    )
    async with Subscriber(mosquitto.host, mosquitto.port, "it/ROU-ST/#") as sub:
        with start_controller(config, tmp_path), contextlib.ExitStack() as wheel:
            async with station_page(config, tmp_path) as page:
                # A dealer on duty before the wheel turns ([staff] dealer_required).
                await sign_on(page, "BADGE-0142", name="Ana Ruiz")
                wheel.enter_context(start_simulator(sim_args, tmp_path))
                # Spin 1 settles on 17; spin 2 powers the wheel down with a latched fault.
                # (Newest first: under load the screen may already show a later spin too.)
                results = page.locator("#results li", has_text="17")
                await results.first.wait_for(timeout=30_000)
                assert "17" in await page.locator("#results li").all_inner_texts()
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


def _baccarat_points(card: str) -> int:
    faces = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}
    return faces[card[0]] if card[0] in faces else int(card[0])


async def _deal_until(page: Any, shoe: SimShoe, *, stop: str) -> None:
    """The dealer pulls cards while the screen asks for them (a burn, the coup) until ``stop``."""
    for _ in range(20):
        text = await page.inner_text("#prompt-text")
        if text == stop:
            return
        if text.startswith(("Burn", "Draw and show", "Deal ", "Dealer change: burn")):
            shoe.request(1)
        await page.wait_for_function(
            "t => document.getElementById('prompt-text').textContent !== t", arg=text
        )
    raise AssertionError(f"the screen never asked for {stop!r}")


@contextlib.asynccontextmanager
async def _baccarat_table(
    tmp_path: Path, mosquitto: MosquittoProcess, shoe: SimShoe, *, rules: str = "", game: str = ""
) -> AsyncIterator[tuple[Any, Subscriber, SimShuffler]]:
    """A card table (``tablectl run``, baccarat unless ``game``; its id ``BAC-ST``, ``TOP-ST``…)
    whose shoe and shuffler are simulated on TCP ports, its station, a touch page on it and a
    subscriber to its topics."""
    game = game or "baccarat"
    table = f"{game[:3].upper()}-ST"
    shuffler = SimShuffler(seed=7, speed=50, decks=shoe.decks)
    async with asyncio.TaskGroup() as group:
        shoe_port = await serve_sim(group, shoe, "shoe")
        shuffler_port = await serve_sim(group, shuffler, "shuffler")
        shoe_device = _device("shoe", "serial-shoe", f"socket://127.0.0.1:{shoe_port}")
        decks = f"decks = {shoe.decks}"
        shuffler_device = _device(
            "shuffler", "tablectl-shuffler", f"socket://127.0.0.1:{shuffler_port}", decks
        )
        body = f'[betting]\nmode = "dealer"\n\n[rules]\n{decks}\n{rules}\n\n'
        body += shoe_device + shuffler_device
        config = table_config(tmp_path, table=table, game=game, mqtt_url=mosquitto.url, body=body)
        try:
            async with Subscriber(mosquitto.host, mosquitto.port, f"it/{table}/#") as sub:
                with start_controller(config, tmp_path):
                    async with station_page(config, tmp_path) as page:
                        yield page, sub, shuffler
        finally:
            for task in group._tasks:
                task.cancel()


async def _first_shoe(page: Any, shoe: SimShoe, shuffler: SimShuffler) -> None:
    """Ana signs on, the shuffler shuffles, the first card is shown and its burn dealt."""
    await sign_on(page, "BADGE-0142", name="Ana Ruiz")
    await prompt_is(page, "Waiting for the shuffler")
    shuffler.press_start(time.monotonic())
    await prompt_is(page, "Draw and show the first card")
    await _deal_until(page, shoe, stop="Open betting")


async def _first_card(page: Any, shoe: SimShoe, *, then: str) -> None:
    """Betting opened and closed by the dealer, the Player's first card dealt: ``then``'s due."""
    await tap(page, "#btn-open")
    await tap(page, "#btn-close")
    await prompt_is(page, "Deal Player's first card")
    shoe.request(1)
    await prompt_is(page, f"Deal {then}'s first card")


async def test_baccarat_a_misread_card_keyed_in_and_a_misdeal_voided_by_a_supervisor(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    plain = SimShoe(seed=7, decks=8, rate=0)
    burn = _baccarat_points(plain.cards[0]) or 10
    banker_first = 1 + burn + 2  # P1 B1: the Banker's first card is the coup's second
    missed = plain.cards[banker_first - 1]
    misread = ShoeFault.from_spec(f"unreadable@{banker_first}")
    shoe = SimShoe(seed=7, decks=8, rate=0, faults=[misread])
    async with _baccarat_table(tmp_path, mosquitto, shoe) as (page, sub, shuffler):
        await _first_shoe(page, shoe, shuffler)
        await _coup(page, shoe, missed)
    cards = _records(sub, "BAC-ST", "card")
    manual = [c for c in cards if c.get("manual")]
    assert [c["card"] for c in manual] == [missed]
    assert [v["code"] for v in _records(sub, "BAC-ST", "verdict")] == ["read_error"]
    (void,) = _records(sub, "BAC-ST", "outcome")
    assert (void["status"], void["reason"]) == ("void", "misdeal")
    commands = [(c["verb"], c["role"], c["by"]) for c in _records(sub, "BAC-ST", "command")]
    assert ("void", "supervisor", "S-0007") in commands
    assert ("event", "dealer", "D-0142") in commands


async def _coup(page: Any, shoe: SimShoe, missed: str) -> None:
    await tap(page, "#btn-open")
    await prompt_is(page, "Close betting")
    await tap(page, "#btn-close")
    await prompt_is(page, "Deal Player's first card")
    await _deal_until(page, shoe, stop="Key in the card the shoe could not read")
    await screenshot(page, "misread")
    await key_in(page, missed, missed)
    await toast_is(page, f"Card {missed} keyed in")
    await prompt_is(page, "Deal Player's second card")
    assert missed in await page.inner_text("#hands")
    await screenshot(page, "baccarat")
    # The dealer exposes a card: a misdeal; the supervisor voids the coup with badge + PIN.
    await tap(page, "#btn-call")
    await page.wait_for_selector("#called:not([hidden])")
    await tap(page, "#btn-supervisor")
    await tap(page, "#dlg-supervisor .reason[data-reason='misdeal']")
    await page.wait_for_selector("#dlg-signer:not([hidden])")
    await page.keyboard.type("BADGE-0007")
    await page.keyboard.press("Enter")
    await type_on_keypad(page, "dlg-signer", "9051")
    await screenshot(page, "supervisor")
    await tap(page, "#signer-go")
    await page.wait_for_function(
        "() => document.getElementById('toast-msg').textContent.endsWith('void: misdeal')"
    )
    await page.wait_for_selector("#results li.void")
    assert await page.inner_text("#results li.void") == "void: misdeal"
    await tap(page, "#btn-uncall")


async def test_a_dealer_change_with_its_burn_and_one_mid_round_signed_by_a_supervisor(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    shoe = SimShoe(seed=7, decks=8, rate=0)
    rules = "burn_after_dealer_change = 1"
    async with _baccarat_table(tmp_path, mosquitto, shoe, rules=rules) as (page, sub, shuffler):
        await _first_shoe(page, shoe, shuffler)
        # Between rounds: Ben takes over by badge, and the change owes a burn (R7).
        await sign_on(page, "BADGE-0177", name="Ben Okafor")
        await prompt_is(page, "Dealer change: burn 1 card face down")
        await page.wait_for_function(
            "() => document.getElementById('on-duty').textContent.includes('Ben Okafor')"
        )
        await screenshot(page, "dealer-change")
        await _deal_until(page, shoe, stop="Open betting")
        await _first_card(page, shoe, then="Banker")
        # In the round Ana cannot take over alone: the screen asks a supervisor to sign it.
        await tap(page, "#btn-sign-on")
        await page.keyboard.type("BADGE-0142")
        await page.keyboard.press("Enter")
        await page.wait_for_selector("#dlg-signer:not([hidden])", timeout=15_000)
        title = await page.inner_text("#signer-title")
        assert title == "A dealer change during a round needs a supervisor"
        await sign_as(page, badge="BADGE-0007", pin="9051")
        await toast_is(page, "Ana Ruiz is on duty as dealer")
    changes = [(r["person"], r.get("supervisor")) for r in _records(sub, "BAC-ST", "staff_on")]
    # The refused attempt is journaled too, then its verdict: the journal says who tried.
    assert changes == [("D-0142", None), ("D-0177", None), ("D-0142", None), ("D-0142", "S-0007")]
    refused = [v for v in _records(sub, "BAC-ST", "verdict")]
    assert [v["code"] for v in refused] == ["dealer_change_mid_round"]
    records = [p for p in sub.payloads("it/BAC-ST/events")]
    ben = next(i for i, r in enumerate(records) if r.get("person") == "D-0177")
    burn = next(r for r in records[ben:] if r["type"] == "card")
    assert burn["card"] is None  # burned unseen (R7)
    staff = sub.payloads("it/BAC-ST/staff")[-1]
    assert staff["dealer"]["person"] == "D-0142"


def _coup_size(cards: list[str]) -> int:
    """How many cards the coup dealt from the top of ``cards`` takes (the game's own rule)."""
    player: list[Any] = []
    banker: list[Any] = []
    for card in cards:
        hand = next_expected(player, banker)
        if hand is None:
            break
        (player if hand == "player" else banker).append(parse_card(card))
    return len(player) + len(banker)


async def test_a_coup_held_by_a_lifted_shoe_is_approved_by_a_supervisor(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    plain = SimShoe(seed=7, decks=8, rate=0)
    burn = _baccarat_points(plain.cards[0]) or 10
    size = _coup_size(list(plain.cards[1 + burn :]))
    last = plain.cards[burn + size]  # the coup's last card, at position 1 + burn + size
    # The shoe is lifted and put back before the coup's last card (baccarat: on_fault = "decide").
    lifted = ShoeFault.from_spec(f"removed@{1 + burn + size}")
    shoe = SimShoe(seed=7, decks=8, rate=0, faults=[lifted])
    async with _baccarat_table(tmp_path, mosquitto, shoe) as (page, sub, shuffler):
        await _first_shoe(page, shoe, shuffler)
        await tap(page, "#btn-open")
        await tap(page, "#btn-close")
        await prompt_is(page, "Deal Player's first card")
        await _deal_until(page, shoe, stop="Fault: shoe_removed")
        assert await page.get_attribute("#prompt", "class") == "tone-stop"
        shoe.request(1)  # put back: the fault clears, the coup still waits for a supervisor
        await prompt_is(page, "Waiting for a supervisor")
        assert await page.inner_text("#prompt-detail") == "The round is held"
        # Baccarat takes no deal_error (a shoe game): the screen offers no Deal error button.
        assert await page.is_hidden("#btn-deal-error")
        shoe.request(1)  # the last card, dealt while the coup is held
        await page.wait_for_function(
            "c => document.getElementById('hands').textContent.includes(c)", arg=last
        )
        await prompt_is(page, "Waiting for a supervisor")
        assert await page.query_selector("#results li") is None
        # Only a supervisor approves: badge and PIN for this one action.
        await tap(page, "#btn-supervisor")
        await tap(page, "#sup-approve")
        assert await page.inner_text("#signer-title") == "Approve: supervisor's badge and PIN"
        await sign_as(page, badge="BADGE-0007", pin="9051")
        await toast_is(page, "Approved")
        await page.wait_for_selector("#results li", timeout=15_000)
        shown = await page.inner_text("#results li")
        await prompt_is(page, "Open betting")
        assert "Carla Maas" not in await page.inner_text("#at-station")  # still Ana's station
    (removed,) = _records(sub, "BAC-ST", "shoe_removed")
    cleared = _records(sub, "BAC-ST", "fault_cleared")
    assert [c["code"] for c in cleared] == ["shoe_removed"]
    (confirm,) = [
        c
        for c in _records(sub, "BAC-ST", "command")
        if c["verb"] == "event" and c.get("event_type") == "confirm"
    ]
    assert (confirm["person"], confirm["role"], confirm["by"]) == ("S-0007", "supervisor", "S-0007")
    assert (confirm["accepted"], confirm["verified"]) == (True, True)
    (event,) = _records(sub, "BAC-ST", "confirm")
    assert event["manual"] is True
    (outcome,) = _records(sub, "BAC-ST", "outcome")
    assert outcome["status"] == "settled"
    assert removed["seq"] < event["seq"] < outcome["seq"]  # the confirm settled the held coup
    result = outcome["result"]
    totals = f"{result['player']['total']}–{result['banker']['total']}"
    assert shown == f"{result['winner']} {totals}"
    assert len(result["player"]["cards"]) + len(result["banker"]["cards"]) == size
    assert _records(sub, "BAC-ST", "verdict") == []


async def test_a_deal_error_reported_by_the_dealer_and_signed_by_a_supervisor_voids_the_round(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    # Top Card is a dealer-screen game: it takes deal errors (a shoe game such as baccarat does
    # not), and its rule book voids the round with stakes returned (seed-001 G1 L59).
    shoe = SimShoe(seed=7, decks=6, rate=0)
    table = "TOP-ST"
    async with _baccarat_table(tmp_path, mosquitto, shoe, game="top_card") as (
        page,
        sub,
        shuffler,
    ):
        await sign_on(page, "BADGE-0142", name="Ana Ruiz")
        await prompt_is(page, "Waiting for the shuffler")
        shuffler.press_start(time.monotonic())
        await prompt_is(page, "Open betting")
        await _first_card(page, shoe, then="Dealer")
        # The dealer flips the Dealer's card face up: a deal error, which only a supervisor signs.
        # The position is optional: left empty, as a dealer in a hurry leaves it.
        await tap(page, "#btn-deal-error")
        await tap(page, "#dlg-deal-error .kind[data-kind='card_exposed']")
        await page.wait_for_selector("#dlg-signer:not([hidden])", timeout=10_000)
        assert await page.inner_text("#signer-title") == "A supervisor must sign this"
        await sign_as(page, badge="BADGE-0007", pin="9051")
        await toast_is(page, "Deal error reported")
        await page.wait_for_selector("#results li.void", timeout=15_000)
        assert await page.inner_text("#results li.void") == "void: misdeal"
        await prompt_is(page, "Open betting")
    commands = [c for c in _records(sub, table, "command") if c.get("event_type") == "deal_error"]
    assert [(c["person"], c["role"], c["by"]) for c in commands] == [
        ("S-0007", "supervisor", "S-0007")
    ]
    (error,) = _records(sub, table, "deal_error")
    assert (error["kind"], error.get("position"), error["manual"]) == ("card_exposed", None, True)
    (outcome,) = _records(sub, table, "outcome")
    assert (outcome["status"], outcome["reason"]) == ("void", "misdeal")
    assert error["seq"] < outcome["seq"]
    result = outcome["result"]
    assert (result["error"], result["remedy"]) == ("card exposed", "refund")
    assert result["rule"] == "seed-001 G1 L59"
