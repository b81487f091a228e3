"""The strict state machine: bad definitions fail when built, undeclared events raise."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.controller.core.errors import ControllerError, TransitionNotAllowedError
from tablectl.controller.core.statemachine import (
    InvalidDefinitionError,
    MachineDefinition,
    StateMachine,
    Transition,
)

LIGHT = MachineDefinition(
    "light",
    states=("off", "on", "broken"),
    initial="off",
    transitions=[
        Transition("off", "switch", "on"),
        Transition("on", "switch", "off"),
        Transition("on", "surge", "broken"),
    ],
    final=("broken",),
)


def test_fire_follows_declared_transitions() -> None:
    machine = StateMachine(LIGHT)
    assert machine.state == "off"
    assert machine.fire("switch") == "on"
    assert machine.fire("switch") == "off"
    assert machine.fire("switch") == "on"
    assert machine.fire("surge") == "broken"
    assert machine.state == "broken"


@pytest.mark.parametrize(
    ("state", "event"),
    [
        pytest.param("off", "surge", id="declared-elsewhere-not-here"),
        pytest.param("off", "unplug", id="never-declared"),
        pytest.param("broken", "switch", id="final-state-accepts-nothing"),
    ],
)
def test_undeclared_event_raises_and_keeps_state(state: str, event: str) -> None:
    machine = StateMachine(LIGHT, state)
    with pytest.raises(TransitionNotAllowedError, match=repr(event)):
        machine.fire(event)
    assert machine.state == state
    assert not machine.can_fire(event)


def test_error_message_lists_what_is_allowed() -> None:
    with pytest.raises(TransitionNotAllowedError, match=r"allowed: surge, switch"):
        StateMachine(LIGHT, "on").fire("unplug")


def test_transition_error_is_a_controller_error() -> None:
    assert issubclass(TransitionNotAllowedError, ControllerError)
    assert issubclass(InvalidDefinitionError, ControllerError)
    assert issubclass(InvalidDefinitionError, ValueError)


def test_starting_in_an_unknown_state_is_refused() -> None:
    with pytest.raises(TransitionNotAllowedError, match="unknown state 'dim'"):
        StateMachine(LIGHT, "dim")


def test_allowed_lists_events_per_state() -> None:
    assert LIGHT.allowed("on") == frozenset({"switch", "surge"})
    assert LIGHT.allowed("broken") == frozenset()


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        pytest.param(
            {"states": ("a", "b"), "initial": "a", "transitions": [Transition("a", "go", "c")]},
            "unknown 'c'",
            id="unknown-target-state",
        ),
        pytest.param(
            {"states": ("a",), "initial": "z", "transitions": [Transition("a", "go", "a")]},
            "initial state 'z' is not a state",
            id="unknown-initial-state",
        ),
        pytest.param(
            {
                "states": ("a", "b", "island"),
                "initial": "a",
                "transitions": [
                    Transition("a", "go", "b"),
                    Transition("b", "go", "a"),
                    Transition("island", "go", "a"),
                ],
            },
            "state 'island' is unreachable",
            id="unreachable-state",
        ),
        pytest.param(
            {"states": ("a", "b"), "initial": "a", "transitions": [Transition("a", "go", "b")]},
            "state 'b' is a trap",
            id="trap-state",
        ),
        pytest.param(
            {
                "states": ("a", "b", "done"),
                "initial": "a",
                "transitions": [
                    Transition("a", "go", "b"),
                    Transition("a", "end", "done"),
                    Transition("b", "go", "b"),
                ],
                "final": ("done",),
            },
            "state 'b' can never reach a final state",
            id="trap-cycle",
        ),
        pytest.param(
            {
                "states": ("a", "done"),
                "initial": "a",
                "transitions": [Transition("a", "end", "done"), Transition("done", "go", "a")],
                "final": ("done",),
            },
            "final state 'done' has a way out",
            id="final-with-exit",
        ),
        pytest.param(
            {
                "states": ("a", "b"),
                "initial": "a",
                "transitions": [
                    Transition("a", "go", "b"),
                    Transition("a", "go", "a"),
                    Transition("b", "go", "a"),
                ],
            },
            "'go' in 'a' is declared twice",
            id="ambiguous-transition",
        ),
        pytest.param(
            {"states": ("a", "a"), "initial": "a", "transitions": [Transition("a", "go", "a")]},
            "states listed twice",
            id="duplicate-state",
        ),
        pytest.param(
            {"states": ("a",), "initial": "a", "transitions": [], "final": ("b",)},
            "final state 'b' is not a state",
            id="unknown-final-state",
        ),
        pytest.param(
            {"states": (), "initial": "a", "transitions": []},
            "no states",
            id="empty",
        ),
    ],
)
def test_bad_definitions_fail_when_defined(kwargs: dict[str, object], problem: str) -> None:
    with pytest.raises(InvalidDefinitionError, match=problem):
        MachineDefinition("bad", **kwargs)  # type: ignore[arg-type]


def test_definition_reports_all_problems_at_once() -> None:
    with pytest.raises(InvalidDefinitionError) as info:
        MachineDefinition(
            "bad",
            states=("a", "b", "c"),
            initial="a",
            transitions=[Transition("a", "go", "b")],
        )
    assert "'b' is a trap" in str(info.value)
    assert "'c' is unreachable" in str(info.value)


STATES = ("s0", "s1", "s2", "s3")
EVENTS = ("e0", "e1", "e2")


@st.composite
def machines(draw: st.DrawFn) -> tuple[MachineDefinition, dict[tuple[str, str], str]]:
    """Random valid machines: a ring keeps every state reachable and non-trap, extras on top."""
    table = {(STATES[i], "e0"): STATES[(i + 1) % len(STATES)] for i in range(len(STATES))}
    extra = draw(
        st.dictionaries(
            st.tuples(st.sampled_from(STATES), st.sampled_from(EVENTS[1:])),
            st.sampled_from(STATES),
        )
    )
    table.update(extra)
    definition = MachineDefinition(
        "random",
        states=STATES,
        initial="s0",
        transitions=[Transition(s, e, t) for (s, e), t in table.items()],
    )
    return definition, table


@given(machines(), st.lists(st.sampled_from((*EVENTS, "nope")), max_size=30))
def test_fire_matches_the_declared_table(
    machine_and_table: tuple[MachineDefinition, dict[tuple[str, str], str]], events: list[str]
) -> None:
    definition, table = machine_and_table
    machine = StateMachine(definition)
    for event in events:
        before = machine.state
        expected = table.get((before, event))
        if expected is None:
            with pytest.raises(TransitionNotAllowedError):
                machine.fire(event)
            assert machine.state == before
        else:
            assert machine.fire(event) == expected
            assert machine.state == expected


# -- the engines' machines ------------------------------------------------------------------------


def test_every_engine_machine_is_a_validated_definition_built_at_import() -> None:
    from tablectl.controller.engines import beads, dice, draw, roulette_machine  # noqa: PLC0415
    from tablectl.controller.engines.cards import phases, shoe  # noqa: PLC0415
    from tablectl.controller.engines.wheel import machine  # noqa: PLC0415

    machines = [
        phases.MACHINE,
        shoe.SHOE_MACHINE,
        draw._MACHINE,
        machine.MACHINE,
        dice._MACHINE,
        beads._MACHINE,
        *roulette_machine.MACHINES.values(),
    ]
    assert all(isinstance(m, MachineDefinition) for m in machines)


def test_the_shoe_lifecycle_is_a_strict_machine() -> None:
    from tablectl.controller.engines.cards.shoe import SHOE_MACHINE  # noqa: PLC0415

    assert SHOE_MACHINE.states == ("unknown", "ready", "rejected", "ended")
    assert SHOE_MACHINE.initial == "unknown"
    life = StateMachine(SHOE_MACHINE)
    assert life.fire("shuffled") == "ready"
    assert life.fire("burn_done") == "ready"
    assert life.fire("last_coup") == "ended"
    assert life.fire("rejected") == "rejected"
    # A rejected shoe deals no round and has no burn: only a new shuffle (or its end) moves it.
    assert SHOE_MACHINE.allowed("rejected") == {"shuffled", "rejected", "emptied"}
    with pytest.raises(TransitionNotAllowedError):
        life.fire("last_coup")
    assert life.state == "rejected"
    assert "burn_done" not in SHOE_MACHINE.allowed("unknown")
