"""The station's view of its table: whatever arrives on the broker, the screen still draws.

Every retained topic is fed well-formed and hostile payloads (not JSON, too deep, fields of the
wrong type, control characters); the view counts what it drops and the screen model is built
after each one without raising.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tablectl.controller.staff.gate import Gate
from tablectl.controller.station.desk import Desk
from tablectl.controller.station.live import RESULTS, TableView
from tablectl.controller.station.prompts import Table
from tablectl.controller.station.screen import model
from tests.support.staff import make_roster

BASE = "it/BAC-1/"
ROSTER = make_roster()


async def _nothing(verb: str, request: dict[str, Any]) -> dict[str, Any] | None:
    return None


def _screen(view: TableView, game: str = "baccarat") -> dict[str, Any]:
    desk = Desk("BAC-1", Gate(ROSTER, "st"), None, {}, _nothing)
    screen = model(view, Table(game, "dealer"), desk, station="st")
    json.dumps(screen)  # what the stream sends
    return screen


def test_the_round_as_read_hides_face_down_cards_and_keeps_the_last_results() -> None:
    view = TableView("it", "BAC-1")
    state = {
        "phase": "dealing",
        "round": "BAC-1-000004",
        "faults": [],
        "coup": {"banker": ["KH"], "player": ["2D", None]},
    }
    assert view.ingest(BASE + "state", json.dumps(state).encode())
    hands = _screen(view)["hands"]
    assert hands == [{"name": "Player", "cards": ["2D", None]}, {"name": "Banker", "cards": ["KH"]}]
    for n in range(RESULTS + 3):
        outcome = {"type": "outcome", "round": f"R{n}", "status": "settled", "result": {"count": n}}
        view.ingest(BASE + "events", json.dumps(outcome).encode())
        view.ingest(BASE + "outcome", json.dumps(outcome).encode())  # the retained copy: once
    results = _screen(view, "fan_tan")["results"]
    assert [r["round"] for r in results] == [f"R{n}" for n in range(RESULTS + 2, 2, -1)]


def test_a_read_error_asks_for_the_card_until_one_comes() -> None:
    view = TableView("it", "BAC-1")
    state = {"phase": "dealing", "round": "R1", "faults": [], "coup": {"player": [], "banker": []}}
    view.ingest(BASE + "state", json.dumps(state).encode())
    verdict = {"type": "verdict", "code": "read_error", "round": "R1", "message": "unreadable"}
    view.ingest(BASE + "events", json.dumps(verdict).encode())
    assert _screen(view)["prompt"]["key_in"] == "card"
    view.ingest(BASE + "events", json.dumps({"type": "card", "card": "KH"}).encode())
    assert _screen(view)["prompt"]["text"] == "Deal Player's first card"


HOSTILE = [
    b"not json",
    b"[1, 2]",
    b"[" * 100 + b"]" * 100,
    b'{"phase": 5, "round": ["x"], "faults": 7, "coup": "x", "shoe": [], "deal": 3}',
    b'{"phase": "dealing", "faults": [null, {"a": 1}], "coup": {"player": 5, "x": [1, 2]}}',
    b'{"phase": "burn", "shoe": {"burn": {"shown": "KH", "expected": "x", "burned": null}}}',
    b'{"phase": "dealing", "coup": {"player": ["ZZ"], "banker": []}}',
    b'{"phase": "idle", "faults": ["\\u202eevil\\u0000"], "balls": {"a": 1}, "spins": 3}',
    json.dumps({"phase": "x" * 10_000}).encode(),
    b"\xff\xfe",
]


@pytest.mark.parametrize("payload", HOSTILE)
@pytest.mark.parametrize(
    "leaf", ["state", "status", "staff", "devices/shoe", "events", "outcome", "nonsense"]
)
def test_hostile_payloads_never_stop_the_screen(leaf: str, payload: bytes) -> None:
    view = TableView("it", "BAC-1")
    view.ingest(BASE + leaf, payload)
    screen = _screen(view)
    assert screen["prompt"]["text"]
    assert len(screen["phase"]) <= 48
    view.ingest(BASE + "devices/shoe", b"")  # a retained topic deleted
    view.ingest("it/OTHER/state", b"{}")
    assert view.dropped["foreign_topic"] == 1
