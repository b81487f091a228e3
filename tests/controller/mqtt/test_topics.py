"""The topic scheme (contracts §4.3) and where each journal record is routed."""

from __future__ import annotations

import pytest

from tablectl.controller.mqtt.topics import Topics

T = Topics("tablectl", "BAC-01")


def test_fixed_topics() -> None:
    assert T.status == "tablectl/BAC-01/status"
    assert T.state == "tablectl/BAC-01/state"
    assert T.events == "tablectl/BAC-01/events"
    assert T.outcome == "tablectl/BAC-01/outcome"
    assert T.alarms == "tablectl/BAC-01/alarms"
    assert T.device("shoe") == "tablectl/BAC-01/devices/shoe"
    assert T.command("void") == "tablectl/BAC-01/cmd/void"
    assert T.reply("void") == "tablectl/BAC-01/cmd/void/reply"
    assert T.command_filter == "tablectl/BAC-01/cmd/+"


def test_multi_level_prefix() -> None:
    assert Topics("site/studio1", "R1").outcome == "site/studio1/R1/outcome"


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"type": "card"}, [("tablectl/BAC-01/events", False)]),
        (
            {"type": "outcome"},
            [("tablectl/BAC-01/events", False), ("tablectl/BAC-01/outcome", True)],
        ),
        ({"type": "fault"}, [("tablectl/BAC-01/events", False), ("tablectl/BAC-01/alarms", False)]),
        (
            {"type": "fault_cleared"},
            [("tablectl/BAC-01/events", False), ("tablectl/BAC-01/alarms", False)],
        ),
        ({"type": "verdict"}, [("tablectl/BAC-01/events", False)]),
        ({}, [("tablectl/BAC-01/events", False)]),
    ],
)
def test_routes(record: dict[str, str], expected: list[tuple[str, bool]]) -> None:
    assert T.routes(record) == expected


def test_command_verb() -> None:
    assert T.command_verb("tablectl/BAC-01/cmd/void") == "void"
    assert T.command_verb("tablectl/BAC-01/cmd/void/reply") is None
    assert T.command_verb("tablectl/BAC-02/cmd/void") is None
    assert T.command_verb("tablectl/BAC-01/cmd/") is None
    assert T.command_verb("tablectl/BAC-01/events") is None


@pytest.mark.parametrize("bad", ["", "a/b", "a+", "#"])
def test_bad_levels_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="single MQTT topic level"):
        T.command(bad)
    with pytest.raises(ValueError, match="single MQTT topic level"):
        T.device(bad)
    with pytest.raises(ValueError, match="single MQTT topic level"):
        Topics("tablectl", bad)


@pytest.mark.parametrize("bad", ["", "a/+", "#", "/abs", "trail/"])
def test_bad_prefix_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="prefix"):
        Topics(bad, "T1")
