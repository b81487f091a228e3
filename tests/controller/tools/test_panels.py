"""The terminal panels (tablectl.controller.tools.panels): the model, each family's picture, the
layout at several widths, the log footer and the exit summary — rendered on a recording console
and read back as a person would see it."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import Console

from tablectl.controller.games.catalog import CATALOG
from tablectl.controller.tools.panels import Floor, FloorScreen, table_panel
from tablectl.controller.tools.panels.layout import floor_list
from tablectl.controller.tools.panels.live import record_svg
from tablectl.controller.tools.panels.logsink import LogSink, readable
from tablectl.controller.tools.panels.model import TableTally
from tablectl.controller.tools.panels.report import tally_lines
from tablectl.controller.tools.panels.results import bead_road, card_text, roulette_strip

DATA = Path(__file__).resolve().parents[2] / "data" / "summary"
PAYLOADS = [json.loads(line) for line in (DATA / "outcomes.jsonl").read_text("utf-8").splitlines()]


def _feed(floor: Floor, table: str, leaf: str, payload: dict[str, Any]) -> None:
    floor.feed(f"tablectl/{table}/{leaf}", json.dumps(payload).encode(), stamp="10:00:01")


def _outcome(
    table: str, number: int, result: dict[str, Any] | None, **extra: Any
) -> dict[str, Any]:
    return {
        "schema": 1,
        "table": table,
        "game": extra.pop("game", "roulette"),
        "round": f"{table}-{number:06d}",
        "status": extra.pop("status", "settled"),
        "reason": extra.pop("reason", None),
        "result": result,
        **extra,
    }


def _spin(table: str, number: int, pocket: int, colour: str) -> dict[str, Any]:
    return _outcome(table, number, {"number": pocket, "color": colour, "revolutions": 6})


def _render(renderable: Any, width: int, height: int = 60) -> list[str]:
    console = Console(
        width=width, height=height, record=True, file=io.StringIO(), color_system="truecolor"
    )
    console.print(renderable, height=height)
    return console.export_text(styles=False).splitlines()


def _floor_of_every_game() -> Floor:
    """Every catalog game's recorded outcomes, each game a table with a state and a device."""
    floor = Floor()
    for index, payload in enumerate(PAYLOADS):
        table = f"T-{payload['game']}"
        _feed(floor, table, "outcome", {**payload, "table": table})
        state = {"game": payload["game"], "phase": "open", "round": f"{table}-{index:06d}"}
        _feed(floor, table, "state", {**state, "rounds": index, "outbox": {"pending": 0}})
        _feed(floor, table, "devices/dev", {"device": "dev", "available": True, "faults": []})
    return floor


# -- the model ----------------------------------------------------------------------------------


def test_the_view_holds_what_the_retained_topics_say() -> None:
    floor = Floor()
    _feed(floor, "ROU-1", "status", {"state": "online", "table": "ROU-1"})
    state = {
        "game": "roulette",
        "phase": "open",
        "round": "ROU-1-000007",
        "rounds": 7,
        "faults": ["ss2_fault_5"],
        "devices": {"wheel": {"faults": ["ss2_fault_5"]}},
        "locked": True,
        "journal": {"available": True},
        "outbox": {"pending": 3},
    }
    _feed(floor, "ROU-1", "state", state)
    _feed(floor, "ROU-1", "devices/wheel", {"device": "wheel", "available": False, "faults": []})
    _feed(floor, "ROU-1", "outcome", _spin("ROU-1", 6, 17, "black"))
    (view,) = floor.tables()
    assert (view.table, view.game, view.family, view.kind) == (
        "ROU-1",
        "roulette",
        *["roulette"] * 2,
    )
    assert (view.online, view.phase, view.round, view.rounds) == (True, "open", "000007", 7)
    assert view.faults == ("ss2_fault_5", "ss2_fault_5 (wheel)")
    assert view.locked
    assert view.journal_ok
    assert view.outbox == 3
    assert [(d.device, d.available) for d in view.devices] == [("wheel", False)]
    assert view.results[-1].summary == "#000006 17 black (6 turns)"
    assert [line.text() for line in floor.footer] == [
        "10:00:01 ROU-1 status online",
        "10:00:01 ROU-1 #000006 17 black (6 turns)",
    ]


def _staff(table: str, person: str | None, name: str = "") -> dict[str, Any]:
    dealer = (
        None
        if person is None
        else {"person": person, "name": name, "since": "2026-12-07T21:00:00Z"}
    )
    return {"schema": 1, "table": table, "dealer": dealer, "supervisors": [], "technicians": []}


def test_the_dealer_on_duty_and_a_change_show_on_the_panel_and_in_the_footer() -> None:
    floor = Floor()
    _feed(floor, "BAC-1", "status", {"state": "online", "table": "BAC-1"})
    _feed(floor, "BAC-1", "state", {"game": "baccarat", "phase": "idle", "rounds": 3})
    assert floor.tables()[0].dealer is None  # a table without staff: nothing said
    # The state (which names the crew too) may come first: the staff topic still says it once.
    ana = _staff("BAC-1", "D-0142", "Ana Ruiz")
    _feed(floor, "BAC-1", "state", {"game": "baccarat", "phase": "idle", "staff": ana})
    assert floor.tables()[0].dealer == "Ana Ruiz (D-0142)"
    _feed(floor, "BAC-1", "staff", ana)
    _feed(floor, "BAC-1", "staff", _staff("BAC-1", "D-0142", "Ana Ruiz"))  # said again: once
    outcome = _outcome("BAC-1", 3, None, game="baccarat", status="void", reason="burn_missed")
    _feed(floor, "BAC-1", "outcome", {**outcome, "dealer": "D-0142"})
    _feed(floor, "BAC-1", "staff", _staff("BAC-1", "D-0260", "Femi Adeyemi"))
    (view,) = floor.tables()
    assert view.dealer == "Femi Adeyemi (D-0260)"
    assert view.results[-1].summary == "#000003 VOID burn_missed"  # the border says who deals
    assert [line.text() for line in floor.footer] == [
        "10:00:01 BAC-1 status online",
        "10:00:01 BAC-1 dealer Ana Ruiz (D-0142) on duty",
        "10:00:01 BAC-1 #000003 VOID burn_missed · dealt by D-0142",
        "10:00:01 BAC-1 dealer Femi Adeyemi (D-0260) on duty",
    ]
    # The panel's border says who deals; a narrow one drops the word, never the table's state.
    assert "online · dealer Femi Adeyemi (D-0260)" in _render(table_panel(view, width=60), 60)[-1]
    assert "online · Femi Adeyemi (D-0260)" in _render(table_panel(view, width=38), 38)[-1]
    assert "BAC-1 Femi Adeyemi" in "\n".join(_render(floor_list([view]), 120))
    _feed(floor, "BAC-1", "staff", _staff("BAC-1", None))  # signed off: nobody deals
    assert floor.tables()[0].dealer is None
    assert len(floor.footer) == 4


def test_the_dealer_comes_from_the_state_without_a_staff_topic_and_is_cleaned() -> None:
    floor = Floor()
    staff = _staff("B", "D-1", "Eve {\u202e}\n" + "x" * 60)
    _feed(floor, "B", "state", {"game": "baccarat", "phase": "idle", "staff": staff})
    dealer = floor.tables()[0].dealer
    assert dealer is not None
    assert dealer.startswith("Eve (")
    assert dealer.endswith("… (D-1)")
    assert not {"{", "\n", "\u202e"} & set(dealer)


def test_tallies_count_rounds_voids_and_faults_per_table() -> None:
    floor = Floor()
    _feed(floor, "R", "outcome", _spin("R", 1, 17, "black"))
    _feed(floor, "R", "outcome", _outcome("R", 2, None, status="void", reason="same_direction"))
    _feed(floor, "R", "alarms", {"type": "fault", "code": "ss2_fault_5", "device": "wheel"})
    _feed(floor, "R", "alarms", {"type": "fault_cleared", "code": "ss2_fault_5"})
    assert floor.tally("R") == TableTally(
        "R", "roulette", 2, {"same_direction": 1}, {"ss2_fault_5": 1}
    )
    lines = tally_lines(floor.tallies(), {"R": Path("j/R.sqlite"), "B": Path("j/B.sqlite")})
    assert lines == [
        "R roulette: 2 rounds, 1 void (same_direction), 1 fault (ss2_fault_5); journal j/R.sqlite",
        "B: 0 rounds, no void, no fault; journal j/B.sqlite",
    ]


def test_a_face_down_card_is_never_drawn() -> None:
    floor = Floor()
    state = {
        "game": "blackjack",
        "phase": "dealing",
        "coup": {"dealer": ["KH", None], "box1": ["9C", "7D"]},
        "shoe": {"remaining": 300, "size": 312},
    }
    _feed(floor, "BJ", "state", state)
    text = "\n".join(_render(table_panel(floor.tables()[0], width=60), 60))
    assert "dealer K♥ ▮" in text
    assert "box1 9♣ 7♦" in text
    assert "shoe 300/312" in text


# -- each family's picture ------------------------------------------------------------------------


def test_roulette_numbers_are_on_their_pockets_colours() -> None:
    floor = Floor()
    for round_no, (pocket, colour) in enumerate([(17, "black"), (0, "green"), (32, "red")], 1):
        _feed(floor, "R", "outcome", _spin("R", round_no, pocket, colour))
    _feed(floor, "R", "outcome", _outcome("R", 4, None, status="void", reason="no_spin"))
    (strip,) = roulette_strip(floor.tables()[0].results, 40)
    assert strip.plain == " ×  32  0  17 "  # newest first
    colours = {strip.plain[s.start : s.end].strip(): str(s.style) for s in strip.spans}
    assert "on red" in colours["32"]
    assert "on green" in colours["0"]
    assert "on black" in colours["17"]


def test_a_strip_keeps_the_newest_that_fit() -> None:
    floor = Floor()
    for round_no in range(1, 31):
        _feed(floor, "R", "outcome", _spin("R", round_no, round_no, "red"))
    lines = roulette_strip(floor.tables()[0].results, 20, rows=2)
    assert [line.plain for line in lines] == [" 30  29  28  27  26 ", " 25  24  23  22  21 "]


def test_the_bead_road_goes_down_then_across() -> None:
    floor = Floor()
    for round_no, winner in enumerate("BPPTBBPB", 1):
        name = {"B": "banker", "P": "player", "T": "tie"}[winner]
        payload = _outcome("B", round_no, {"winner": name}, game="baccarat")
        _feed(floor, "B", "outcome", payload)
    road = bead_road(floor.tables()[0].results, 20, rows=3)
    assert [line.plain.rstrip() for line in road] == ["B T P", "P B B", "P B"]
    # a tie is green, the banker red, the player blue
    tie = road[0].spans[1]
    assert road[0].plain[tie.start : tie.end] == "T"
    assert "green" in str(tie.style)


def test_dragon_tiger_ties_are_not_mistaken_for_the_tiger() -> None:
    floor = Floor()
    for round_no, winner in enumerate(("dragon", "tiger", "tie"), 1):
        payload = _outcome("DT", round_no, {"winner": winner}, game="dragon_tiger")
        _feed(floor, "DT", "outcome", payload)
    road = bead_road(floor.tables()[0].results, 20, rows=1, kind="DragonTiger")
    assert road[0].plain.rstrip() == "D T ="


def test_cards_are_drawn_as_rank_and_suit() -> None:
    text = card_text("P 3D 2C / B QS TH  dealer two pair, kings")
    assert text.plain == "P 3♦ 2♣ / B Q♠ T♥  dealer two pair, kings"
    assert any(text.plain[s.start : s.end] == "3♦" and "red" in str(s.style) for s in text.spans)


@pytest.mark.parametrize("width", [60, 80, 100, 160])
def test_every_game_fits_the_width_and_shows_no_json(width: int) -> None:
    floor = _floor_of_every_game()
    seen = {CATALOG[p["game"]].family for p in PAYLOADS}
    assert seen == {"roulette", "cards", "draw", "wheel", "dice", "beads"}
    for view in floor.tables():
        for compact in (False, True):
            panel = table_panel(view, compact=compact, width=min(width, 50))
            lines = _render(panel, min(width, 50))
            assert all(cell_len(line) <= min(width, 50) for line in lines), (view.game, lines)
            assert not any("{" in line or "}" in line for line in lines), (view.game, lines)
    lines = _render(FloorScreen(floor), width, height=40)
    assert all(cell_len(line) <= width for line in lines)
    assert len(lines) <= 40
    assert not any("{" in line for line in lines)


def test_the_screen_folds_into_a_grid_that_fits() -> None:
    floor = Floor()
    for table in ("ROU-1", "ROU-2", "ROU-3"):
        _feed(floor, table, "state", {"game": "roulette", "phase": "open"})
        _feed(floor, table, "outcome", _spin(table, 1, 5, "red"))
    wide = _render(FloorScreen(floor), 160, height=30)
    narrow = _render(FloorScreen(floor), 60, height=40)
    assert sum("ROU-" in line for line in wide[1:3]) == 1  # one row of three panels
    assert wide[1].count("ROU-") == 3
    assert all(line.count("ROU-") <= 1 for line in narrow[1:])  # one panel a row
    assert any(line.startswith("╭─ log") for line in wide)


def test_a_floor_larger_than_the_screen_gets_a_line_a_table() -> None:
    floor = _floor_of_every_game()
    lines = _render(FloorScreen(floor), 80, height=24)
    assert len(lines) <= 24
    assert all(cell_len(line) <= 80 for line in lines)
    assert lines[1].split() == ["table", "round", "health", "last"]


def test_a_fault_turns_the_panel_red() -> None:
    floor = Floor()
    _feed(floor, "R", "state", {"game": "roulette", "phase": "idle", "faults": ["ss2_fault_5"]})
    panel = table_panel(floor.tables()[0])
    assert panel.border_style == "red"
    _feed(floor, "R", "state", {"game": "roulette", "phase": "idle", "faults": []})
    assert table_panel(floor.tables()[0]).border_style == "blue"


# -- logs, recording ------------------------------------------------------------------------------


def test_logs_go_to_the_file_and_fold_in_the_footer() -> None:
    floor = Floor()
    file = io.StringIO()
    sink = LogSink(lambda text, table: floor.log(text, stamp="10:00:02", table=table), file)
    for table in ("A", "B", "C"):
        record = {"event": "journal_not_keyed", "level": "warning", "table": table, "hint": "h"}
        sink.write(json.dumps(record) + "\n")
    sink.write("a plain line, in ")
    sink.write("two writes\n")
    assert file.getvalue().count("\n") == 4
    assert [line.text() for line in floor.footer] == [
        "10:00:02 warning journal_not_keyed: h (×3)",
        "10:00:02 a plain line, in two writes",
    ]
    assert readable("\x1b[33mwarn\x1b[0m x") == ("warn x", "")


def test_the_screen_is_recorded_as_svg_without_web_fonts(tmp_path: Path) -> None:
    floor = Floor()
    _feed(floor, "ROU-1", "outcome", _spin("ROU-1", 1, 32, "red"))
    path = tmp_path / "docs" / "demo.svg"
    record_svg(FloorScreen(floor), path, size=(80, 20), title="tablectl demo")
    svg = path.read_text("utf-8")
    assert svg.startswith("<svg")
    assert "ROU-1" in svg
    assert "@font-face" not in svg
    assert "cdnjs" not in svg
