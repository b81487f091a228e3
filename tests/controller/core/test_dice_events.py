"""The dice and RNG events of contracts §4.4 (extended): strict parsing, the JSON form, the mapping
from the dice drivers' device events."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.controller.core.dice_events import ROLL_INVALID_CODES
from tablectl.controller.core.errors import EventFormatError
from tablectl.controller.core.events import (
    Dice,
    RngDraw,
    RngPick,
    RollInvalid,
    RollStarted,
    RoundOpen,
    event_to_dict,
    parse_event,
)
from tablectl.controller.core.mapping import to_table_event
from tablectl.drivers import events as dev

AT = 1_764_496_800.0  # 2025-11-30T10:00:00Z
TS = "2025-11-30T10:00:00.000000Z"

faces = st.integers(min_value=1, max_value=6)


@given(
    dice=st.lists(faces, min_size=1, max_size=6),
    confidence=st.none() | st.floats(min_value=0, max_value=1),
)
def test_dice_round_trip_through_their_json_form(dice: list[int], confidence: float | None) -> None:
    event = Dice(dice=tuple(dice), confidence=confidence, reader="cam-1")
    assert parse_event(event_to_dict(event)) == event


@given(
    st.lists(
        st.builds(
            RngPick,
            value=st.integers(0, 36) | st.sampled_from(["KH", "2C", "00"]),
            multiplier=st.none() | st.integers(1, 1000),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_rng_draws_round_trip_and_leave_unset_multipliers_out(picks: list[RngPick]) -> None:
    event = RngDraw(numbers=tuple(picks))
    form = event_to_dict(event)
    assert parse_event(form) == event
    for pick, obj in zip(picks, form["numbers"], strict=True):
        assert ("multiplier" in obj) is (pick.multiplier is not None)


@pytest.mark.parametrize(
    ("obj", "names"),
    [
        ({"type": "dice", "dice": [7]}, "dice.0"),
        ({"type": "dice", "dice": [0, 3]}, "dice.0"),
        ({"type": "dice", "dice": []}, "dice"),
        ({"type": "dice", "dice": ["4"]}, "dice.0"),
        ({"type": "dice", "dice": [1, 2, 3, 4, 5, 6, 1]}, "dice"),
        ({"type": "dice", "dice": [1], "confidence": 1.5}, "confidence"),
        ({"type": "dice", "dice": [1], "colour": "red"}, "colour"),
        ({"type": "roll_invalid", "code": "cocked"}, "code"),
        ({"type": "rng_draw", "numbers": []}, "numbers"),
        ({"type": "rng_draw", "numbers": [{"value": 11, "multiplier": 0}]}, "multiplier"),
        ({"type": "rng_draw", "numbers": [{"value": 1.5}]}, "value"),
    ],
)
def test_bad_dice_and_rng_events_are_refused_naming_the_field(
    obj: dict[str, Any], names: str
) -> None:
    with pytest.raises(EventFormatError, match=rf"bad {obj['type']} event: .*{names}"):
        parse_event(obj)


@pytest.mark.parametrize("code", ROLL_INVALID_CODES)
def test_every_roll_invalid_code_parses(code: str) -> None:
    assert parse_event({"type": "roll_invalid", "code": code}) == RollInvalid(code=code)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("device_event", "table_event"),
    [
        (dev.BettingOpened(device="dice", at=AT), RoundOpen(ts=TS, device="dice")),
        (dev.DiceRollStarted(device="dice", at=AT), RollStarted(ts=TS, device="dice")),
        (
            dev.DiceRead(device="dice", at=AT, dice=(2, 5), colors=("red", "blue"), reader="c1"),
            Dice(ts=TS, device="dice", dice=(2, 5), colors=("red", "blue"), reader="c1"),
        ),
        (
            dev.DiceRollInvalid(device="dice", at=AT, code="die_cocked"),
            RollInvalid(ts=TS, device="dice", code="die_cocked"),
        ),
        (
            dev.DiceRollInvalid(device="dice", at=AT, code="die_off_table", detail="die 2"),
            RollInvalid(ts=TS, device="dice", code="die_off_table", detail="die 2"),
        ),
    ],
)
def test_dice_device_events_map_to_their_table_events(
    device_event: dev.DeviceEvent, table_event: object
) -> None:
    assert to_table_event(device_event) == table_event
