"""A touch on the station → the command it sends, who must sign it, and its reply in words.

Every action is a command of the table's own path (docs/mqtt.md "Commands"): ``cmd/event``
with a normalized event (journaled by the table as manual), ``cmd/void``, ``cmd/clear_fault``,
``cmd/status``. Who may sign one is the table's ``[security] require`` read from the same config
(:func:`signers`), so the station asks for a supervisor exactly when the table would refuse the
dealer. A value keyed in is entered twice and must match (R11: rectify a dealer's error without
making a new one); a refusal's stable ``code`` becomes a sentence a dealer can act on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from tablectl.controller.config import DEFAULT_REQUIRE, SecurityConfig
from tablectl.controller.core.errors import ControllerError
from tablectl.controller.mqtt.authority import action_for
from tablectl.drivers.cards import parse_card

MAX_TEXT: Final = 64
DEAL_ERRORS: Final = ("card_exposed", "wrong_count")
VOID_REASONS: Final = ("misdeal", "card_exposed", "foreign_object", "dealer_error", "device_fault")
"""The reasons a supervisor picks from on the screen (any code the table takes would do)."""


class ActionError(ControllerError, ValueError):
    """An action the station refuses before sending anything (the message is for the screen)."""


@dataclass(frozen=True, slots=True)
class Command:
    """A command ready to sign: its verb, its body, and what the screen says once accepted."""

    verb: str
    payload: dict[str, Any]
    done: str

    @property
    def action(self) -> str | None:
        """The ``[security] require`` action it needs (``None``: a read)."""
        return action_for(self.verb, self.payload)


def signers(command: Command, security: SecurityConfig | None) -> frozenset[str]:
    """The roles that may sign ``command`` on this table (a lab table: the default roles)."""
    action = command.action
    if action is None:
        return frozenset({"dealer", "supervisor", "technician"})
    if security is None or not security.roles:
        return frozenset(DEFAULT_REQUIRE.get(action, ("supervisor",)))
    return security.required.get(action, frozenset())


def build(action: str, fields: Mapping[str, Any], state: Mapping[str, Any] | None) -> Command:
    """The command of one of the screen's actions (sign-on and dealer change: :mod:`.desk`).

    Raises:
        ActionError: a missing or bad field, two entries that differ, no round to void.
    """
    maker = _MAKERS.get(action)
    if maker is None:
        raise ActionError(f"unknown action {action!r}")
    return maker(fields, state or {})


def _event(event: dict[str, Any], done: str) -> Command:
    return Command("event", {"event": event}, done)


def _open(fields: Mapping[str, Any], state: Mapping[str, Any]) -> Command:
    return _event({"type": "round_open"}, "Betting is open")


def _close(fields: Mapping[str, Any], state: Mapping[str, Any]) -> Command:
    return _event({"type": "bets_closed"}, "No more bets")


def _confirm(fields: Mapping[str, Any], state: Mapping[str, Any]) -> Command:
    return _event({"type": "confirm"}, "Decision window closed")


def _approve(fields: Mapping[str, Any], state: Mapping[str, Any]) -> Command:
    return _event({"type": "confirm"}, "Approved")


def _deal_error(fields: Mapping[str, Any], state: Mapping[str, Any]) -> Command:
    kind = fields.get("kind")
    if kind not in DEAL_ERRORS:
        raise ActionError("say what went wrong: a card exposed or a wrong count")
    event: dict[str, Any] = {"type": "deal_error", "kind": kind}
    position = _text(fields.get("position"), "position", optional=True)
    if position:
        event["position"] = position
    return _event(event, "Deal error reported")


def _void(fields: Mapping[str, Any], state: Mapping[str, Any]) -> Command:
    reason = _text(fields.get("reason"), "reason")
    current = state.get("round")
    if not isinstance(current, str):
        raise ActionError("no round in play: nothing to void")
    return Command("void", {"reason": reason, "round": current}, f"Round {current} void: {reason}")


def _clear_fault(fields: Mapping[str, Any], state: Mapping[str, Any]) -> Command:
    device = _text(fields.get("device"), "device")
    code = _text(fields.get("code"), "fault code")
    return Command("clear_fault", {"device": device, "code": code}, f"{code} cleared on {device}")


def _status(fields: Mapping[str, Any], state: Mapping[str, Any]) -> Command:
    return Command("status", {}, "The table answered")


def _key_in(fields: Mapping[str, Any], state: Mapping[str, Any]) -> Command:
    kind = fields.get("kind")
    value, again = fields.get("value"), fields.get("again")
    parse = _KEY_INS.get(kind) if isinstance(kind, str) else None
    if parse is None:
        raise ActionError(f"nothing to key in of kind {kind!r}")
    if not isinstance(value, str) or not value.strip():
        raise ActionError("enter the value")
    event, shown = parse(value.strip().upper())
    if not isinstance(again, str) or parse(again.strip().upper())[0] != event:
        raise ActionError("the two entries differ: enter it again")
    return _event(event, f"{shown} keyed in")


def _card(text: str) -> tuple[dict[str, Any], str]:
    try:
        card = parse_card(text)
    except ValueError:
        raise ActionError(f"{text} is not a card (e.g. KH, 7D, TS)") from None
    return {"type": "card", "card": card.code}, f"Card {card.code}"


def _number(text: str) -> tuple[dict[str, Any], str]:
    if text == "00":
        return {"type": "winning_number", "number": "00"}, "Number 00"
    number = _whole(text, "number", 0, 36)
    return {"type": "winning_number", "number": number}, f"Number {number}"


def _dice(text: str) -> tuple[dict[str, Any], str]:
    faces = [c for c in text if not c.isspace() and c not in ",-"]
    if not 1 <= len(faces) <= 6 or any(c not in "123456" for c in faces):
        raise ActionError(f"{text}: enter each die's face, 1 to 6 (e.g. 3 5 6)")
    return {"type": "dice", "dice": [int(c) for c in faces]}, f"Dice {' '.join(faces)}"


def _beads(text: str) -> tuple[dict[str, Any], str]:
    count = _whole(text, "bead count", 1, 9999)
    return {"type": "beads", "count": count}, f"Bead count {count}"


def _segment(text: str) -> tuple[dict[str, Any], str]:
    index = _whole(text, "segment", 0, 999)
    return {"type": "segment", "index": index}, f"Segment {index}"


def _ball(text: str) -> tuple[dict[str, Any], str]:
    ball = _whole(text, "ball", 1, 999)
    return {"type": "ball_drawn", "ball": ball}, f"Ball {ball}"


_KEY_INS: Final = {
    "card": _card,
    "number": _number,
    "dice": _dice,
    "beads": _beads,
    "segment": _segment,
    "ball": _ball,
}

_MAKERS: Final = {
    "open_betting": _open,
    "close_betting": _close,
    "confirm": _confirm,
    "approve": _approve,
    "deal_error": _deal_error,
    "void": _void,
    "clear_fault": _clear_fault,
    "status": _status,
    "key_in": _key_in,
}
ACTIONS: Final = tuple(_MAKERS)


def _whole(text: str, what: str, low: int, high: int) -> int:
    if not text.isdigit() or not low <= int(text) <= high:
        raise ActionError(f"{text}: a {what} is a whole number from {low} to {high}")
    return int(text)


def _text(value: object, what: str, *, optional: bool = False) -> str:
    if optional and (value is None or (isinstance(value, str) and not value.strip())):
        return ""  # an optional field left empty (the page sends ``""``): not given
    if not isinstance(value, str) or not value.strip():
        raise ActionError(f"the {what} is missing")
    if len(value) > MAX_TEXT or not value.isprintable():
        raise ActionError(f"the {what} is too long or not plain text")
    return value.strip()


CODE_WORDS: Final[Mapping[str, str]] = {
    "unauthorised": "The table did not accept the signature: call a supervisor",
    "commands_disabled": "This table takes no commands (no [security] in its config)",
    "clock_suspect": "The table's clock is in doubt: a supervisor must confirm it first",
    "wrong_round": "That round is already over: nothing was voided",
    "clock_trusted": "There is no clock step to confirm",
    "payload_too_large": "The station sent too much: call a technician",
    "field_too_long": "An entry is too long",
    "bad_request": "The table refused it",
    "unknown_command": "The table does not know this command: call a technician",
    "journal_unavailable": "The table cannot record anything now: stop and call a supervisor",
    "not_journaled": "The table could not record it: call a supervisor",
    "rate_limited": "Too many requests: wait a moment",
    "offline": "The table is reconnecting: try again in a moment",
    "internal": "The table failed on it: call a technician",
    "unknown_person": "That person is not on the table's roster",
    "not_in_role": "That person may not do this",
    "dealer_change_mid_round": "A dealer change during a round needs a supervisor",
    "no_dealer": "No dealer is on duty: sign on first",
    "not_on_duty": "That person is not on duty",
}
"""Refusal codes (docs/mqtt.md) in a dealer's words; an unknown code shows the table's
``error``."""
REFUSING: Final = frozenset({"dealer_change_mid_round", "not_on_duty", "no_dealer"})
"""Verdict codes that mean the event was refused (docs/station.md), though accepted as a
command."""


@dataclass(frozen=True, slots=True)
class Said:
    """What the screen says after an action: ``ok`` and one sentence (plus the table's words)."""

    ok: bool
    message: str
    detail: str | None = None
    code: str | None = None
    reply: Mapping[str, Any] | None = None


def words(command: Command, reply: Mapping[str, Any] | None) -> Said:
    """The reply to ``command`` in words; ``None`` (no reply in time) says so."""
    if reply is None:
        return Said(False, "The table did not answer: is it running?", code="no_reply")
    if reply.get("ok") is True:
        refusal = _refusal(reply.get("outputs"))
        if refusal is not None:
            return refusal
        detail = _verdicts(reply.get("outputs"))
        if detail:
            return Said(True, f"{command.done}, but the table says:", detail, reply=reply)
        return Said(True, command.done, reply=reply)
    code = reply.get("code")
    error = reply.get("error")
    shown = str(error)[:200] if isinstance(error, str) else None
    if not isinstance(code, str):
        return Said(False, "The table refused it", shown, reply=reply)
    return Said(False, CODE_WORDS.get(code, "The table refused it"), shown, code, reply)


def _refusal(outputs: object) -> Said | None:
    """An accepted event the table's rules refused with a code of :data:`REFUSING` (a dealer
    change in a round): to the screen it is a refusal, and it says what to do."""
    for output in outputs if isinstance(outputs, Sequence) else ():
        if isinstance(output, Mapping) and output.get("code") in REFUSING:
            code = str(output["code"])
            message = output.get("message")
            return Said(False, CODE_WORDS[code], str(message)[:200] if message else None, code)
    return None


def _verdicts(outputs: object) -> str | None:
    """The verdicts an accepted event caused (a card the rules refused), as one line."""
    if not isinstance(outputs, Sequence):
        return None
    found = [
        str(o.get("message") or o.get("code"))
        for o in outputs
        if isinstance(o, Mapping) and o.get("type") == "verdict"
    ]
    return "; ".join(found)[:300] or None
