"""The dashboard's people: who is on duty on each tile (the retained ``staff`` topic, read bounded
like every topic), the table's pace from the outcomes it saw, and the staff page's figures by
dealer from a real archive (the same as ``diag stats --by dealer --dsn``)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.tools.dashboard.floor import Floor
from tablectl.controller.tools.dashboard.pages import page, staff_page
from tablectl.controller.tools.dashboard.staff import StaffSource
from tests.support.dashboard import Chain

P = "tablectl"
STAFF = {
    "schema": 1,
    "table": "ROU-01",
    "ts": "2026-11-30T10:00:00Z",
    "dealer": {"person": "D-0142", "name": "Ana Ruiz", "since": "2026-11-30T09:58:00Z"},
    "supervisors": [{"person": "S-0007", "name": "Carla Maas", "since": "2026-11-30T08:00:00Z"}],
    "technicians": [],
}


def _send(floor: Floor, leaf: str, body: object, table: str = "ROU-01") -> str | None:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return floor.ingest(f"{P}/{table}/{leaf}", raw, retained=True)


def _spins(floor: Floor, chain: Chain, start: datetime, every: float, count: int) -> None:
    for i in range(count):
        moment = start + timedelta(seconds=every * i)
        _send(floor, "events", chain.spin(i % 37, moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")))
    _send(floor, "state", chain.state())


def test_a_tile_names_the_dealer_on_duty_and_the_supervisors() -> None:
    floor = Floor(P)
    _send(floor, "status", {"state": "online"})
    html = page(floor, "floor")
    assert 'class="dealer' not in html  # a table with no roster publishes no staff: as before
    assert _send(floor, "staff", STAFF) == "ROU-01"
    tile = floor.tile("ROU-01")
    assert tile is not None
    assert tile.staff is not None
    assert tile.staff.dealer is not None
    assert tile.staff.dealer.person == "D-0142"
    html = page(floor, "floor")
    assert '<dd class="dealer" data-person="D-0142">Ana Ruiz <small>since <time' in html
    assert "Carla Maas (supervisor)" in html
    # The dealer goes on a break: nobody on duty, said on the tile.
    _send(floor, "staff", {**STAFF, "dealer": None, "supervisors": []})
    assert '<dd class="dealer none">nobody on duty</dd>' in page(floor, "floor")
    # The retained topic deleted: the tile says nothing of staff, the table stays.
    assert floor.ingest(f"{P}/ROU-01/staff", b"", retained=True) == "ROU-01"
    assert 'class="dealer' not in page(floor, "floor")
    assert floor.tables() == ["ROU-01"]


def test_published_names_are_bounded_and_escaped() -> None:
    floor = Floor(P)
    hostile = {"person": "D-1", "name": "<script>x</script>\u202e" + "n" * 500}
    _send(floor, "staff", {**STAFF, "dealer": hostile})
    html = page(floor, "floor")
    assert "<script>x" not in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html
    assert "\u202e" not in html
    tile = floor.tile("ROU-01")
    assert tile is not None
    assert tile.staff is not None
    assert tile.staff.dealer is not None
    assert len(tile.staff.dealer.name or "") <= 200


def test_a_staff_topic_holds_at_most_32_per_role() -> None:
    floor = Floor(P)
    many = [{"person": f"S-{i}"} for i in range(1000)]
    _send(floor, "staff", {**STAFF, "supervisors": many})
    tile = floor.tile("ROU-01")
    assert tile is not None
    assert tile.staff is not None
    assert len(tile.staff.supervisors) == 32


def test_the_pace_is_rounds_per_hour_over_the_last_hour_of_outcomes() -> None:
    floor = Floor(P)
    chain = Chain("ROU-01")
    _send(floor, "status", {"state": "online"})
    assert floor.tile("ROU-01").pace is None  # type: ignore[union-attr]
    start = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
    _spins(floor, chain, start, 20.0, 30)  # 180 an hour, two hours before …
    _spins(floor, chain, start + timedelta(hours=3), 45.0, 41)  # … then 80 an hour for 30 min
    tile = floor.tile("ROU-01")
    assert tile is not None
    assert tile.pace == pytest.approx(3600 / 45)  # 40 intervals of 45 s: only the last hour
    assert '<dd class="pace">80 rounds/h</dd>' in page(floor, "floor")
    # One outcome: no pace.
    lone = Floor(P)
    _spins(lone, Chain("ROU-01"), start, 45.0, 1)
    assert lone.tile("ROU-01").pace is None  # type: ignore[union-attr]


async def test_without_an_archive_the_staff_page_says_so() -> None:
    floor = Floor(P)
    source = StaffSource(None)
    assert await source.figures() is None
    html = staff_page(floor, None)
    assert "No archive" in html
    assert "--archive-dsn" in html
    assert '<a href="/staff">staff</a>' in html


async def test_an_archive_that_cannot_be_read_is_said_on_the_page() -> None:
    source = StaffSource("postgresql://nobody:secret@127.0.0.1:1/none", refresh=300)
    figures = await source.figures()
    assert figures is not None
    assert figures.error is not None
    assert "secret" not in figures.error
    html = staff_page(Floor(P), figures)
    assert "the archive cannot be read" in html
    assert "secret" not in html


@pytest.mark.slow
async def test_the_staff_page_shows_diag_stats_by_dealer_from_the_archive(
    tmp_path: Path, postgres_dsn: str
) -> None:
    """The generated rounds of test_diag_staff, stored and verified; the page's figures are the
    command's for the same window."""
    import psycopg  # noqa: PLC0415 - only with a server

    from tablectl.controller.archive.schema import migrate  # noqa: PLC0415
    from tests.controller.tools.test_diag_staff import (  # noqa: PLC0415
        baccarat_script,
        by_dealer,
        journal,
    )
    from tests.integration.test_archive_use import _store, _verify  # noqa: PLC0415

    with psycopg.connect(postgres_dsn) as conn:
        migrate(conn)
    records = journal(tmp_path / "BAC-1.sqlite", baccarat_script())
    await asyncio.to_thread(_store, postgres_dsn, records)
    await asyncio.to_thread(_verify, postgres_dsn)
    now = datetime(2026, 12, 7, 12, 0, tzinfo=UTC).timestamp()
    source = StaffSource(postgres_dsn, days=30, clock=lambda: now)
    figures = await source.figures()
    assert figures is not None
    assert figures.error is None, figures.error
    assert await source.figures() is figures  # kept until the refresh

    code, out, err = await by_dealer(
        "--dsn", postgres_dsn, "--since", "2026-11-07T12:00:00Z", "--json"
    )
    assert code == 0, err
    want: dict[str, Any] = {d["dealer"]: d for d in json.loads(out)["dealers"]}
    got = {r.tally.person: r.tally for r in figures.reports}
    assert set(got) == set(want) == {"D-1", "D-3"}
    for person, tally in got.items():
        assert (tally.rounds, tally.counts["misdeals"], tally.counts["manual"]) == (
            want[person]["rounds"],
            want[person]["misdeals"],
            want[person]["manual"],
        )
        assert tally.pace == pytest.approx(want[person]["pace_per_hour"])
    assert "authorship unverified" in " ".join(figures.notes)
    html = staff_page(Floor(P), figures)
    row = html[html.index('data-dealer="D-1"') :]
    row = row[: row.index("</tr>")]
    assert f'<td class="num rounds">{want["D-1"]["rounds"]}</td>' in row
    assert f'<td class="num pace">{want["D-1"]["pace_per_hour"]:.1f}</td>' in row
    assert '<img class="chart" src="/staff.svg?at=' in html
    assert figures.svg is not None
    assert figures.svg.count('<g class="chart"') == 3  # the pace, each dealer's results
