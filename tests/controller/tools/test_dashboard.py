"""The dashboard's pure parts: the floor state, the billboard, the statistics, the HTML.

Fed with payloads shaped as the tables publish them (docs/mqtt.md; the recorded outcomes of
``tests/data/summary``), topic by topic, as the subscriber would.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.tools.dashboard.billboard import billboard
from tablectl.controller.tools.dashboard.charts import shuffle_figures, wheel_figures
from tablectl.controller.tools.dashboard.floor import Floor, Link
from tablectl.controller.tools.dashboard.pages import fragments, page
from tablectl.controller.tools.diag.stats.shoes import shoes_from_records
from tablectl.controller.tools.diag.stats.wheel import Spin, Window, numbers_report, wheel_report

DATA = Path(__file__).resolve().parents[2] / "data" / "summary"
PREFIX = "tablectl"


def _chained(table: str, body: dict[str, Any]) -> dict[str, Any]:
    """A record with the ``hash`` and ``prev_hash`` of an unbroken chain (made up, but linked:
    the record at seq N's prev_hash is the hash of the one at N - 1)."""
    seq = body.get("seq")
    if not isinstance(seq, int) or "hash" in body:
        return body
    return {**body, "hash": f"{table}:{seq}", "prev_hash": f"{table}:{seq - 1}"}


def _send(floor: Floor, table: str, leaf: str, body: dict[str, Any], **kw: bool) -> str | None:
    if leaf in ("events", "outcome"):
        body = _chained(table, body)
    payload = json.dumps({"schema": 1, "table": table, **body}).encode()
    return floor.ingest(f"{PREFIX}/{table}/{leaf}", payload, **kw)


def _spin(table: str, seq: int, number: int | str, *, status: str = "settled") -> dict[str, Any]:
    return {
        "type": "outcome",
        "game": "roulette",
        "seq": seq,
        "round": f"{table}-{seq:06d}",
        "ts": f"2026-11-30T10:00:{seq % 60:02d}.000000Z",
        "status": status,
        "reason": None if status == "settled" else "same_direction",
        "result": {"number": number, "color": "red", "revolutions": 6, "variant": "european"}
        if status == "settled"
        else None,
    }


def _roulette_floor(table: str = "ROU-01") -> Floor:
    floor = Floor(PREFIX)
    _send(floor, table, "status", {"state": "online", "ts": "2026-11-30T10:00:00.000000Z"})
    _send(
        floor,
        table,
        "state",
        {
            "game": "roulette",
            "phase": "open",
            "round": f"{table}-000007",
            "rounds": 7,
            "faults": [],
            "devices": {"wheel": {"faults": []}},
            "locked": False,
            "journal": {"available": True},
        },
    )
    _send(floor, table, "devices/wheel", {"device": "wheel", "available": True, "faults": []})
    return floor


def test_a_table_gets_a_tile_with_game_phase_round_and_devices() -> None:
    floor = _roulette_floor()
    _send(floor, "ROU-01", "outcome", _spin("ROU-01", 41, 17))
    tile = floor.tile("ROU-01")
    assert tile is not None
    assert (tile.game, tile.family, tile.phase, tile.round, tile.rounds) == (
        "roulette",
        "roulette",
        "open",
        "ROU-01-000007",
        7,
    )
    assert tile.online is True
    assert [(d.device, d.available, d.faults) for d in tile.devices] == [("wheel", True, ())]
    assert tile.level == "ok"
    assert tile.last_outcome is not None
    assert tile.last_outcome.summary == "ROU-01 #000041 17 red (6 turns)"
    assert tile.last_outcome.text == "17 red (6 turns)"
    assert floor.tables() == ["ROU-01"]


def test_a_latched_fault_turns_the_tile_red_with_its_code() -> None:
    floor = _roulette_floor()
    _send(
        floor,
        "ROU-01",
        "state",
        {
            "game": "roulette",
            "phase": "idle",
            "faults": ["ss2_fault_1"],
            "devices": {"wheel": {"faults": ["ss2_fault_1", "ss2_powered_down"]}},
            "locked": True,
            "journal": {"available": True},
        },
    )
    tile = floor.tile("ROU-01")
    assert tile is not None
    assert tile.level == "fault"
    assert tile.faults == ("wheel: ss2_fault_1", "wheel: ss2_powered_down")
    assert "latched fault" in tile.alerts
    html = fragments(floor, "floor")[1].html
    assert 'data-level="fault"' in html
    assert "ss2_powered_down" in html


@pytest.mark.parametrize(
    ("leaf", "body", "level", "reason"),
    [
        ("status", {"state": "offline"}, "fault", "offline"),
        (
            "status",
            {
                "state": "online",
                "locked": True,
                "faults": ["journal_unavailable"],
                "journal": {"since": "2026-11-30T10:00:00Z"},
            },
            "fault",
            "journal unavailable",
        ),
        ("devices/wheel", {"device": "wheel", "available": False, "faults": []}, "warn", None),
    ],
)
def test_offline_a_journal_outage_or_a_link_down_show_on_the_tile(
    leaf: str, body: dict[str, Any], level: str, reason: str | None
) -> None:
    floor = _roulette_floor()
    _send(floor, "ROU-01", leaf, body)
    tile = floor.tile("ROU-01")
    assert tile is not None
    assert tile.level == level
    if reason is not None:
        assert reason in tile.alerts
    else:
        assert tile.warnings == ("wheel link down",)


def test_history_is_bounded_and_newest_first() -> None:
    floor = Floor(PREFIX, history=3)
    for seq in range(1, 6):
        _send(floor, "ROU-01", "events", _spin("ROU-01", seq, seq))
    assert [e.seq for e in floor.history("ROU-01")] == [5, 4, 3]
    # The billboard and the statistics keep more than the history page shows.
    assert floor.spins("ROU-01") == (1, 2, 3, 4, 5)


def test_an_outcome_counts_once_by_table_and_seq_whatever_the_topic_or_order() -> None:
    floor = _roulette_floor()
    _send(floor, "ROU-01", "events", _spin("ROU-01", 10, 3))
    _send(floor, "ROU-01", "outcome", _spin("ROU-01", 10, 3), retained=True)
    _send(floor, "ROU-01", "events", _spin("ROU-01", 12, 5))
    _send(floor, "ROU-01", "events", _spin("ROU-01", 10, 3))  # a redelivery after a reconnect
    _send(floor, "ROU-01", "events", _spin("ROU-01", 11, 4))  # late, but new
    _send(floor, "OTHER", "events", _spin("OTHER", 10, 3))  # same seq, another table
    assert [e.seq for e in floor.history("ROU-01")] == [12, 11, 10]
    assert sorted(floor.spins("ROU-01"), key=int) == [3, 4, 5]
    assert [e.seq for e in floor.history("OTHER")] == [10]


def test_a_void_adds_no_number_and_says_its_reason() -> None:
    floor = _roulette_floor()
    _send(floor, "ROU-01", "events", _spin("ROU-01", 3, 0, status="void"))
    (entry,) = floor.history("ROU-01")
    assert (entry.status, entry.reason, entry.numbers) == ("void", "same_direction", ())
    assert floor.spins("ROU-01") == ()
    assert "VOID same_direction" in entry.summary


def test_double_ball_rounds_put_both_numbers_on_the_billboard() -> None:
    floor = Floor(PREFIX)
    body = {
        "type": "outcome",
        "game": "double_ball_roulette",
        "seq": 9,
        "round": "DB-1-000001",
        "status": "settled",
        "result": {"numbers": [5, 32], "same_number": False, "variant": "european"},
    }
    _send(floor, "DB-1", "outcome", body)
    assert floor.spins("DB-1") == (5, 32)


def test_commands_and_unknown_topics_are_ignored() -> None:
    floor = Floor(PREFIX)
    assert _send(floor, "ROU-01", "cmd/void", {"id": "x", "reason": "foreign_object"}) is None
    assert floor.ingest("elsewhere/ROU-01/state", b"{}") is None
    assert floor.ingest(f"{PREFIX}/ROU-01/state", b"not json") is None
    assert floor.tables() == []


def test_a_withheld_face_down_card_stays_hidden() -> None:
    floor = Floor(PREFIX)
    _send(floor, "BJ-1", "state", {"game": "blackjack", "phase": "dealing"})
    _send(floor, "BJ-1", "events", {"type": "shuffle_completed", "seq": 1, "cards": 416})
    _send(floor, "BJ-1", "events", {"type": "card", "seq": 2, "card": "KH", "device": "shoe"})
    hole = {"type": "card", "seq": 3, "card": None, "withheld": True, "face_down": True}
    _send(floor, "BJ-1", "events", hole)
    tile = floor.tile("BJ-1")
    assert tile is not None
    assert tile.last_event == "#3 card face_down card=withheld"
    records = floor.shoe_records("BJ-1")
    assert [r.get("card") for r in records if r["type"] == "card"] == ["KH", None]
    html = "".join(f.html for f in fragments(floor, "table", "BJ-1"))
    assert "withheld" in html


def test_every_recorded_outcome_renders_one_line_without_json() -> None:
    floor = Floor(PREFIX)
    payloads = [json.loads(line) for line in (DATA / "outcomes.jsonl").read_text().splitlines()]
    for seq, payload in enumerate(payloads, 1):
        table = payload["table"]
        body = _chained(table, {**payload, "seq": seq})
        floor.ingest(f"{PREFIX}/{table}/outcome", json.dumps(body).encode())
    assert floor.tables()
    for table in floor.tables():
        html = page(floor, "table", table)
        rows = re.findall(r'<td class="summary">(.*?)</td>', html)
        assert rows, table
        assert all("{" not in row for row in rows)


def test_published_text_is_escaped() -> None:
    floor = _roulette_floor("R<b>1")
    evil = {**_spin("R<b>1", 5, 7, status="void"), "reason": "<script>alert(1)</script>"}
    _send(floor, "R<b>1", "events", evil)
    for view in ("floor", "table", "billboard", "stats"):
        html = page(floor, view, None if view == "floor" else "R<b>1")  # type: ignore[arg-type]
        assert "<script>alert" not in html
        assert "<b>1" not in html


def test_the_banner_says_when_the_broker_is_lost() -> None:
    floor = _roulette_floor()
    floor.set_link(Link("connected", "mqtt://broker:1883", "2026-11-30T10:00:00Z"))
    assert " hidden>" in fragments(floor, "floor")[0].html
    floor.set_link(Link("lost", "mqtt://broker:1883", "2026-11-30T10:05:00Z", "connection lost"))
    banner, tile = fragments(floor, "floor")
    assert "broker lost" in banner.html
    assert "last known state" in banner.html
    assert "stale" in tile.html


# --- the billboard ------------------------------------------------------------------------------


def test_billboard_last_numbers_hot_cold_and_shares() -> None:
    spins = [0, 1, 2, 3, 13, 25, 36, 19, 1, 1, 36]
    board = billboard(spins, "european", last=5, hot=2)
    assert [b.number for b in board.last] == [36, 1, 1, 19, 36]  # newest first
    assert [b.color for b in board.last] == ["red", "red", "red", "red", "red"]
    assert [(b.number, b.count) for b in board.hot] == [(1, 3), (36, 2)]
    assert [(b.number, b.count) for b in board.cold] == [(4, 0), (5, 0)]
    shares = {
        title: {s.label: (s.count, round(s.percent, 1)) for s in g} for title, g in board.groups
    }
    assert shares["colour"] == {"red": (8, 72.7), "black": (2, 18.2), "green": (1, 9.1)}
    assert shares["odd / even"] == {"odd": (7, 63.6), "even": (3, 27.3)}
    assert shares["low / high"] == {"1–18": (6, 54.5), "19–36": (4, 36.4)}
    assert shares["dozens"] == {"1st 12": (5, 45.5), "2nd 12": (2, 18.2), "3rd 12": (3, 27.3)}


def test_billboard_counts_the_window_and_the_american_double_zero() -> None:
    board = billboard(["00", 5, "00", 99, True], "american", window=2)
    assert board.spins == 2  # 99 and True are no pockets; the window keeps the last two
    assert [(b.number, b.color) for b in board.last] == [("00", "green"), (5, "red")]
    assert billboard([], "european").hot == ()


# --- statistics: diag stats' own code over published data ---------------------------------------


def test_wheel_figures_warn_on_a_small_sample_and_draw_valid_svg() -> None:
    figures = wheel_figures("ROU-01", [17, 3, 0, 26, 17, 5, 9, 22, 31, 14, 8, 2], "european")
    assert figures.verdict == "too_few"
    assert "173 more spins needed" in figures.lines[1]
    assert figures.svg is not None
    root = ET.fromstring(figures.svg.split("\n", 1)[1])  # noqa: S314 - our own SVG
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert len(root.findall(".//{http://www.w3.org/2000/svg}rect[@class='bar']")) == 37 + 8
    assert wheel_figures("ROU-01", [], "european").svg is None


def test_numbers_report_is_the_journal_report_of_the_same_spins() -> None:
    numbers: list[int | str] = [1, 5, 5, 36, 0]
    window = Window(tuple(Spin(i, None, None, n) for i, n in enumerate(numbers)))
    assert numbers_report(numbers, "european") == wheel_report(window, "european")


def _shoe(seq: int, cards: list[str | None]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = [{"type": "shuffle_completed", "seq": seq, "cards": 52}]
    records += [{"type": "card", "seq": seq + 1 + i, "card": c} for i, c in enumerate(cards)]
    records.append({"type": "shoe_end", "seq": seq + 1 + len(cards)})
    return records


def test_shoes_from_published_records_keep_a_withheld_card_in_its_place() -> None:
    records = _shoe(1, ["KH", None, "2C"]) + _shoe(10, ["AS"])
    window = shoes_from_records(records)
    assert [s.cards for s in window.shoes] == [("KH", "", "2C"), ("AS",)]


def test_shuffle_figures_need_five_shoes_then_draw_chi_square_by_position() -> None:
    ranks, suits = "A23456789TJQK", "SHDC"
    deck = [r + s for s in suits for r in ranks]
    assert shuffle_figures("BAC-1", _shoe(1, list(deck))).svg is None
    records = []
    for i in range(6):
        rotated = deck[i * 7 :] + deck[: i * 7]
        records += _shoe(1 + i * 100, list(rotated))
    figures = shuffle_figures("BAC-1", records)
    assert figures.svg is not None
    assert figures.lines[0].startswith("6 shoes, 312 cards")
    ET.fromstring(figures.svg.split("\n", 1)[1])  # noqa: S314 - our own SVG


# --- the feed the live views wait on -------------------------------------------------------------


async def test_live_views_wake_on_a_change_and_on_close() -> None:
    import asyncio  # noqa: PLC0415

    from tablectl.controller.tools.dashboard.subscriber import FloorFeed  # noqa: PLC0415

    feed = FloorFeed(Floor(PREFIX), clock=lambda: 1_800_000_000.0)
    version = feed.floor.version
    waiting = asyncio.create_task(feed.wait(version))
    await asyncio.sleep(0)
    assert not waiting.done()
    feed.ingest(f"{PREFIX}/ROU-01/status", b'{"state": "online"}', retained=True)
    await asyncio.wait_for(waiting, 1)
    feed.ingest(f"{PREFIX}/ROU-01/status", b'{"state": "online"}', retained=True)  # a repeat
    assert feed.floor.version == version + 1

    feed.set_link("lost", "mqtt://b:1883", "gone")
    since = feed.floor.link.since
    feed.set_link("connecting", "mqtt://b:1883")  # a retry: still lost, since then
    assert (feed.floor.link.state, feed.floor.link.since) == ("lost", since)

    closing = asyncio.create_task(feed.wait(feed.floor.version))
    await asyncio.sleep(0)
    feed.close()
    await asyncio.wait_for(closing, 1)
