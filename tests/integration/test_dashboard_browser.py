"""``tablectl dashboard`` as a person sees it: a real browser against live simulated tables.

A real Mosquitto (the fixture), a simulated roulette wheel and a Lucky 7 drum run by the real
controllers (``start_lab_tables``, as ``tablectl demo`` runs them), the dashboard as its own
process (``python -m tablectl dashboard``), and Debian's headless Chromium driven by playwright.
What is asserted is what is on the screen: a tile per table, a number on the billboard equal to
the spin's published outcome, the tile turning red when the wheel's fault latches, the banner
when the broker goes away, the SVG plot.

The login test runs the dashboard over TLS with a users file and asks it with urllib.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import ssl
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.tools.dashboard.auth import add_user
from tablectl.controller.tools.dashboard.screenshots import start_lab_tables
from tests.support.dashboard import browser as _browser
from tests.support.dashboard import dashboard_process as _dashboard
from tests.support.dashboard import serving as _serving
from tests.support.mosquitto import MosquittoProcess, free_port
from tests.support.mqtt import Subscriber
from tests.support.tls import find_openssl, make_pki
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]
SVG = "{http://www.w3.org/2000/svg}"


class _TablesDoneError(Exception):
    """Leaves the lab tables' task group, which cancels them."""


def _settled_numbers(sub: Subscriber) -> list[int | str]:
    """The roulette table's settled numbers as published on ``outcome``, in seq order."""
    seen: dict[int, int | str] = {}
    for message in sub.messages:
        if message.topic == "tablectl/ROU-DEMO/outcome":
            body = message.json()
            if body["status"] == "settled":
                seen[body["seq"]] = body["result"]["number"]
    return [seen[seq] for seq in sorted(seen)]


async def test_floor_billboard_fault_and_broker_loss_in_a_browser(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "dashboard.log"
    args = ["--url", mosquitto.url, "--listen", f"127.0.0.1:{port}"]
    with _dashboard(args, log) as proc:
        await _serving(proc, log)
        async with (
            _browser() as browser,
            Subscriber(mosquitto.host, mosquitto.port, "tablectl/+/outcome") as sub,
        ):
            floor = await browser.new_page()
            board = await browser.new_page()
            await floor.goto(base + "/")
            # Opened before the first spin: what follows arrives live, without a reload.
            await board.goto(base + "/billboard/ROU-DEMO")
            assert "waiting for the first spin" in await board.inner_text(".last-numbers")

            try:
                async with contextlib.AsyncExitStack() as stack, asyncio.TaskGroup() as group:
                    # The wheel powers down with a latched fault on its 5th game.
                    tables = await start_lab_tables(
                        group,
                        stack,
                        tmp_path,
                        (mosquitto.host, mosquitto.port),
                        tables=("roulette", "lucky7"),
                        speed=20.0,
                        roulette_faults=("fault@5",),
                    )
                    assert tables == ["ROU-DEMO", "L7-DEMO"]
                    await _check_live_floor(floor, board, sub)
                    # Leaving the task group cancels the tables' tasks, then the stack closes them.
                    raise _TablesDoneError
            except* _TablesDoneError:
                pass

            # The SVG plot of the wheel's spins is served, and is an SVG document.
            svg = await floor.request.get(base + "/svg/ROU-DEMO/wheel.svg")
            assert svg.status == 200
            assert svg.headers["content-type"].startswith("image/svg+xml")
            root = ET.fromstring((await svg.body()).split(b"\n", 1)[1])  # noqa: S314 - ours
            assert root.tag == f"{SVG}svg"
            assert {r.get("data-label") for r in root.iter(f"{SVG}rect")} >= {"0", "32", "26"}
            stats = await floor.request.get(base + "/stats/ROU-DEMO")
            assert f"{len(_settled_numbers(sub))} spin" in await stats.text()
            assert "more spins needed" in await stats.text()

            # The broker goes away: every page says so instead of showing stale data silently.
            mosquitto.stop()
            await floor.wait_for_selector("#banner.lost", timeout=20_000)
            assert "broker lost" in await floor.inner_text("#banner")
            await board.wait_for_selector("#banner.lost", timeout=20_000)
            mosquitto.start()
            await floor.wait_for_selector("#banner.ok", state="attached", timeout=30_000)
    assert proc.returncode == 0, log.read_text(errors="replace")


async def _check_live_floor(floor: Any, board: Any, sub: Subscriber) -> None:
    # A tile per table, with its game and phase.
    for table, game in (("ROU-DEMO", "roulette"), ("L7-DEMO", "lucky7")):
        tile = floor.locator(f"#tile-{table}")
        await tile.wait_for(timeout=20_000)
        await tile.locator(".game", has_text=game).wait_for(timeout=20_000)
        await floor.wait_for_function(
            "id => document.getElementById(id).querySelector('.phase').textContent !== '–'",
            arg=f"tile-{table}",
            timeout=20_000,
        )
    # The billboard shows a spin's published number as it comes, without a reload.
    await board.wait_for_selector(".last-numbers .ball.latest", timeout=30_000)
    first = await board.get_attribute(".last-numbers .ball.latest", "data-number")
    await wait_until(
        lambda: first in [str(n) for n in _settled_numbers(sub)],
        timeout=10,
        what=f"{first} among the published outcomes",
    )
    # The wheel's fault latches on its 5th game: its tile turns red and names the fault codes.
    red = floor.locator("#tile-ROU-DEMO.level-fault")
    await red.wait_for(timeout=30_000)
    faults = await red.locator(".faults li").all_inner_texts()
    assert "wheel: ss2_powered_down" in faults
    assert "latched fault" in await red.locator(".alerts").inner_text()
    colour = await red.evaluate("el => getComputedStyle(el).borderLeftColor")
    assert colour == "rgb(198, 40, 40)"
    assert await floor.get_attribute("#tile-L7-DEMO", "data-level") != "fault"

    # No spin after that: the billboard holds every settled number, newest first.
    async def billboard_matches() -> bool:
        shown = await board.eval_on_selector_all(
            ".last-numbers .ball", "balls => balls.map(b => b.dataset.number)"
        )
        return shown == [str(n) for n in reversed(_settled_numbers(sub))]

    await wait_until(billboard_matches, timeout=30, what="the billboard to show every spin")
    assert 1 <= len(_settled_numbers(sub)) <= 4


def _get(url: str, context: ssl.SSLContext, auth: str | None = None) -> tuple[int, str, Any]:
    request = urllib.request.Request(url)  # noqa: S310 - https to our own test server
    if auth is not None:
        request.add_header("Authorization", auth)
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:  # noqa: S310
            return response.status, response.read().decode(), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), exc.headers


async def test_login_over_tls_is_required_when_a_users_file_is_given(tmp_path: Path) -> None:
    if find_openssl() is None:
        pytest.skip("openssl CLI not installed")
    import base64  # noqa: PLC0415

    pki = make_pki(tmp_path / "pki")
    pki.server_key.chmod(0o600)
    users = tmp_path / "users"
    add_user(users, "pit", "correct horse")
    port = free_port()
    log = tmp_path / "dashboard.log"
    nobody = f"mqtt://127.0.0.1:{free_port()}"  # no broker there: the page must say so
    args = ["--url", nobody, "--listen", f"127.0.0.1:{port}", "--users", str(users)]
    args += ["--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key)]
    context = ssl.create_default_context(cafile=str(pki.ca))
    base = f"https://127.0.0.1:{port}"
    with _dashboard(args, log) as proc:
        await _serving(proc, log)
        status, body, headers = await asyncio.to_thread(_get, base + "/", context)
        assert status == 401
        assert headers["WWW-Authenticate"].startswith('Basic realm="tablectl dashboard"')
        assert "login required" in body
        wrong = "Basic " + base64.b64encode(b"pit:wrong").decode()
        assert (await asyncio.to_thread(_get, base + "/", context, wrong))[0] == 401
        good = "Basic " + base64.b64encode(b"pit:correct horse").decode()

        async def unreachable_banner() -> bool:
            status, body, _ = await asyncio.to_thread(_get, base + "/", context, good)
            assert status == 200
            return "cannot reach the broker" in body

        await wait_until(unreachable_banner, timeout=20, what="the unreachable-broker banner")
        status, body, headers = await asyncio.to_thread(
            _get, base + "/static/dashboard.js", context, good
        )
        assert status == 200
        assert "EventSource" in body
        assert "script-src 'self'" in headers["Content-Security-Policy"]
        # Over TLS the browser is told never to come back over plain HTTP (issue 26 #8).
        assert headers["Strict-Transport-Security"] == "max-age=31536000"
        assert (await asyncio.to_thread(_get, base + "/static/dashboard.js", context))[0] == 401
    assert proc.returncode == 0, log.read_text(errors="replace")


STAFF = {
    "schema": 1,
    "table": "ROU-01",
    "ts": "2026-11-30T10:00:00Z",
    "dealer": {"person": "D-0142", "name": "Ana Ruiz", "since": "2026-11-30T09:58:00Z"},
    "supervisors": [{"person": "S-0007", "name": "Carla Maas"}],
    "technicians": [],
}


async def _archive_of_dealers(tmp_path: Path, dsn: str) -> dict[str, Any]:
    """The generated rounds of tests/controller/tools/test_diag_staff.py, stored and verified
    as the archiver does; each dealer's figures as ``diag stats --by dealer --dsn`` gives them."""
    import psycopg  # noqa: PLC0415

    from tablectl.controller.archive.schema import migrate  # noqa: PLC0415
    from tests.controller.tools.test_diag_staff import (  # noqa: PLC0415
        baccarat_script,
        by_dealer,
        journal,
        roulette_script,
    )
    from tests.integration.test_archive_use import _store, _verify  # noqa: PLC0415

    with psycopg.connect(dsn) as conn:
        migrate(conn)
    for script in (roulette_script(), baccarat_script()):
        records = journal(tmp_path / f"{script.table}.sqlite", script)
        await asyncio.to_thread(_store, dsn, records)
    await asyncio.to_thread(_verify, dsn)
    code, out, err = await by_dealer("--dsn", dsn, "--json")
    assert code == 0, err
    return {d["dealer"]: d for d in json.loads(out)["dealers"]}


async def _on_duty(mosquitto: MosquittoProcess, tile: Any, shot: Path) -> None:
    """A table's staff and spins published; the tile names the dealer and the pace; poison on
    ``staff`` changes nothing; the dealer's break shows."""
    import aiomqtt  # noqa: PLC0415

    from tests.support.dashboard import Chain  # noqa: PLC0415

    async with aiomqtt.Client(mosquitto.host, mosquitto.port, timeout=10) as client:

        async def send(leaf: str, body: object, retain: bool = False) -> None:
            raw = body if isinstance(body, bytes) else json.dumps(body).encode()
            await client.publish(f"tablectl/ROU-01/{leaf}", raw, qos=1, retain=retain)

        chain = Chain("ROU-01")
        await send("status", {"state": "online"}, retain=True)
        await send("staff", STAFF, retain=True)
        for i in range(13):  # one spin every 30 s: 120 an hour
            await send("events", chain.spin(i, f"2026-11-30T10:{i // 2:02d}:{i % 2 * 30:02d}Z"))
        await send("state", chain.state(), retain=True)
        await tile.locator(".dealer", has_text="Ana Ruiz").wait_for(timeout=20_000)
        await tile.locator(".pace", has_text="120 rounds/h").wait_for(timeout=20_000)
        assert "Carla Maas (supervisor)" in await tile.locator(".crew").inner_text()
        await tile.screenshot(path=str(shot))
        for payload in (b'{"dealer":{"person":[1]}}', b'{"a":' * 5000 + b"1" + b"}" * 5000):
            await send("staff", payload, retain=True)
        await send("staff", {**STAFF, "dealer": None})
        await tile.locator(".dealer.none").wait_for(timeout=20_000)


async def test_who_is_on_duty_the_pace_and_the_staff_page_in_a_browser(
    tmp_path: Path, mosquitto: MosquittoProcess, postgres_dsn: str
) -> None:
    """A table's retained ``staff`` and its outcomes on a real Mosquitto, an archive in a real
    PostgreSQL: the tile names the dealer and the pace, poison on ``staff`` is counted, the
    staff page shows what ``diag stats --by dealer --dsn`` gives. With
    ``TABLECTL_DASHBOARD_SCREENSHOTS=1`` it remakes docs/images/dashboard-on-duty.png and
    dashboard-staff.png (else the pictures go to ``tmp_path``: the checkout stays as it was)."""
    from tests.support.dashboard import REPO  # noqa: PLC0415
    from tests.support.tables import scrape  # noqa: PLC0415

    want = await _archive_of_dealers(tmp_path, postgres_dsn)
    port, metrics = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "dashboard.log"
    args = ["--url", mosquitto.url, "--listen", f"127.0.0.1:{port}"]
    args += ["--archive-dsn", postgres_dsn, "--staff-days", "36500"]
    args += ["--metrics-listen", f"127.0.0.1:{metrics}"]
    remake = os.environ.get("TABLECTL_DASHBOARD_SCREENSHOTS") == "1"
    images = REPO / "docs" / "images" if remake else tmp_path
    with _dashboard(args, log) as proc:
        await _serving(proc, log)
        async with _browser() as browser:
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            await page.goto(base + "/")
            await page.wait_for_selector("#banner.ok", state="attached", timeout=30_000)
            tile = page.locator("#tile-ROU-01")
            await _on_duty(mosquitto, tile, images / "dashboard-on-duty.png")
            _, text = await scrape(metrics)
            assert 'tablectl_dashboard_malformed_total{reason="bad_field"} 1' in text
            assert 'tablectl_dashboard_malformed_total{reason="too_deep"} 1' in text

            await page.click("nav.top a[href='/staff']")
            await page.wait_for_selector("#staff table", timeout=30_000)
            for person in ("D-1", "D-2", "D-3"):
                row = page.locator(f"#staff tr[data-dealer='{person}']")
                assert await row.locator(".rounds").inner_text() == str(want[person]["rounds"])
                pace = f"{want[person]['pace_per_hour']:.1f}"
                assert await row.locator(".pace").inner_text() == pace
            flags = await page.locator("#staff tr[data-dealer='D-2'] .flags").inner_text()
            assert "wheel sectors" in flags
            assert "authorship unverified" in await page.locator("#staff .notes").inner_text()
            svg = await page.request.get(base + "/staff.svg")
            assert svg.status == 200
            assert svg.headers["content-type"].startswith("image/svg+xml")
            await page.screenshot(path=str(images / "dashboard-staff.png"), full_page=True)
    assert proc.returncode == 0, log.read_text(errors="replace")
