"""The screen's model: one JSON document the page draws, sent again whenever it changes.

Built from the table's view (:mod:`.live`), the prompt (:mod:`.prompts`) and the desk
(:mod:`.desk`). Everything from the broker is cut to a printable length here
(:func:`~tablectl.controller.tools.summary.printable`) and the page puts it into text nodes only,
so a hostile payload can neither break the layout nor run. Face-down cards are ``null`` in the
table's state and stay so: the page draws a card back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tablectl.controller.station.desk import Desk
from tablectl.controller.station.live import TableView
from tablectl.controller.station.prompts import Table, expects, position_name
from tablectl.controller.tools.summary import printable

_SHORT = 48
_FIRST = ("player", "banker", "dragon", "tiger", "andar", "bahar")
"""Positions a dealer reads left to right in this order; any other keeps the engine's order."""


def _p(value: object, limit: int = _SHORT) -> str:
    return printable(value, limit)


def model(view: TableView, table: Table, desk: Desk, *, station: str) -> dict[str, Any]:
    """The screen as JSON (see the module docstring)."""
    state = view.state or {}
    on_duty = desk.on_duty
    staff = _staff(view.staff)
    dealer = staff["dealer"] is not None if view.staff else on_duty is not None
    prompt = expects(table, view.state, view.status, view.asking, dealer=dealer)
    return {
        "table": _p(view.table),
        "game": table.game,
        "family": table.family,
        "station": station,
        "dealer_betting": table.betting == "dealer",
        "decisions": table.decisions,
        "lab": desk.lab,
        "link": view.link,
        "online": (view.status or {}).get("state") != "offline" and view.status is not None,
        "phase": _p(state.get("phase") or "–"),
        "round": _p(state.get("round")) if state.get("round") else None,
        "prompt": {
            "text": _p(prompt.text, 120),
            "tone": prompt.tone,
            "key_in": prompt.key_in,
            "detail": _p(prompt.detail, 120) if prompt.detail else None,
        },
        "hands": _hands(state),
        "devices": _devices(view),
        "faults": _faults(view),
        "results": [_result(r) for r in view.results],
        "staff": staff,
        "at_station": None
        if on_duty is None
        else {"person": on_duty.person.id, "name": on_duty.person.name, "role": on_duty.role},
        "supervisor_called": desk.supervisor_called is not None,
        "verdict": _p(view.last_verdict.get("message"), 120) if view.last_verdict else None,
    }


def _hands(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The round as read: card positions (``null``: face down), or the family's result so far."""
    coup = state.get("coup")
    if isinstance(coup, Mapping):
        hands = []
        first = {name: i for i, name in enumerate(_FIRST)}
        ordered = sorted(list(coup.items())[:12], key=lambda item: first.get(item[0], len(first)))
        for position, cards in ordered:
            if isinstance(cards, list):
                shown = [None if c is None else _p(c, 4) for c in cards[:12]]
                hands.append({"name": position_name(_p(position, 24)), "cards": shown})
        return hands
    for key, name in (("balls", "Balls"), ("spins", "Spins")):
        values = state.get(key)
        if isinstance(values, list) and values:
            return [{"name": name, "values": [_p(v, 12) for v in values[-20:]]}]
    return []


def _devices(view: TableView) -> list[dict[str, Any]]:
    out = []
    for name, body in sorted(view.devices.items()):
        faults = body.get("faults")
        out.append(
            {
                "id": _p(name, 32),
                "available": body.get("available") is True,
                "faults": [_p(f) for f in faults[:8]] if isinstance(faults, list) else [],
            }
        )
    return out


def _faults(view: TableView) -> list[dict[str, str]]:
    """Latched faults by device (what a fault clear names), then any only the state names."""
    found = [{"device": d["id"], "code": code} for d in _devices(view) for code in d["faults"]]
    named = {f["code"] for f in found}
    state_faults = (view.state or {}).get("faults")
    for code in map(_p, state_faults[:8] if isinstance(state_faults, list) else []):
        if code not in named:
            found.append({"device": "", "code": code})
    return found


def _result(record: Mapping[str, Any]) -> dict[str, Any]:
    found = record.get("result")
    result: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    status = _p(record.get("status") or "")
    return {
        "round": _p(record.get("round") or ""),
        "status": status,
        "text": _summary(result, record)
        if status != "void"
        else f"void: {_p(record.get('reason'))}",
        "dealer": _p(record.get("dealer")) if record.get("dealer") else None,
    }


def _summary(result: Mapping[str, Any], record: Mapping[str, Any]) -> str:
    """A result in a few words, whatever the game: the fields a dealer calls out."""
    for key in ("number", "count", "winner", "segment", "total"):
        if key in result:
            extra = ""
            if key == "winner":
                player, banker = result.get("player"), result.get("banker")
                if isinstance(player, Mapping) and isinstance(banker, Mapping):
                    extra = f" {_p(player.get('total'))}–{_p(banker.get('total'))}"
            if key == "count" and "beads" in result:
                extra = f" ({_p(result.get('beads'))})"
            return f"{_p(result[key])}{extra}"
    if "dice" in result:
        dice = result["dice"]
        return " ".join(_p(d, 2) for d in dice) if isinstance(dice, list) else _p(dice)
    return _p(record.get("status") or "settled")


def _staff(staff: Mapping[str, Any] | None) -> dict[str, Any]:
    if not staff:
        return {"dealer": None, "supervisors": [], "technicians": []}

    def person(entry: object) -> dict[str, Any] | None:
        if not isinstance(entry, Mapping):
            return None
        return {"person": _p(entry.get("person"), 32), "name": _p(entry.get("name") or "", 64)}

    def people(key: str) -> list[dict[str, Any]]:
        found = staff.get(key)
        return [p for p in map(person, found[:8]) if p] if isinstance(found, list) else []

    return {
        "dealer": person(staff.get("dealer")),
        "supervisors": people("supervisors"),
        "technicians": people("technicians"),
    }
