"""A tiny strict state machine: states and transitions are data, checked when they are defined.

Why not a library: the engines need only "is this event allowed here, and where does it lead",
and they must be pure (no asyncio, no I/O, no clock). What we keep from python-statemachine
(``statemachine/factory.py``) is the part that catches bugs early: a :class:`MachineDefinition`
is validated when it is built, which for the engines means at import time. Unknown states,
states that cannot be reached from the initial one, and trap states (no way out, yet not declared
final) raise :class:`InvalidDefinitionError` there instead of wedging a table at 3 a.m.

At run time the machine is strict: :meth:`StateMachine.fire` raises
:class:`~tablectl.controller.core.errors.TransitionNotAllowedError` for any (state, event) pair that
was not declared. Engines catch it and turn it into a verdict value; it never leaves ``apply``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from tablectl.controller.core.errors import InvalidDefinitionError, TransitionNotAllowedError


@dataclass(frozen=True, slots=True)
class Transition:
    """On ``event`` in state ``source``, go to ``target`` (which may be ``source`` itself)."""

    source: str
    event: str
    target: str


class MachineDefinition:
    """An immutable, validated set of states and transitions.

    Args:
        name: used in error messages only.
        states: every state, in a stable order (snapshots and docs list them this way).
        initial: the state a new :class:`StateMachine` starts in.
        transitions: the only moves allowed; at most one per (source, event).
        final: states that may legitimately have no way out.

    Raises:
        InvalidDefinitionError: naming every problem found, not only the first.
    """

    __slots__ = ("_final", "_initial", "_name", "_states", "_table")

    def __init__(
        self,
        name: str,
        *,
        states: Iterable[str],
        initial: str,
        transitions: Iterable[Transition],
        final: Iterable[str] = (),
    ) -> None:
        state_list = tuple(states)
        final_set = frozenset(final)
        transition_list = tuple(transitions)
        problems = _problems(state_list, initial, transition_list, final_set)
        if problems:
            raise InvalidDefinitionError(f"state machine {name!r}: " + "; ".join(problems))
        table: dict[str, dict[str, str]] = {state: {} for state in state_list}
        for t in transition_list:
            table[t.source][t.event] = t.target
        self._name = name
        self._states = state_list
        self._initial = initial
        self._final = final_set
        self._table: Mapping[str, Mapping[str, str]] = MappingProxyType(
            {state: MappingProxyType(moves) for state, moves in table.items()}
        )

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        """Plain dicts for pickling (recovery checkpoints); :meth:`__setstate__` re-freezes."""
        table = {state: dict(moves) for state, moves in self._table.items()}
        return None, {
            "_name": self._name,
            "_states": self._states,
            "_initial": self._initial,
            "_final": self._final,
            "_table": table,
        }

    def __setstate__(self, state: tuple[None, dict[str, Any]]) -> None:
        slots = dict(state[1])
        table = slots.pop("_table")
        for key, value in slots.items():
            object.__setattr__(self, key, value)
        self._table = MappingProxyType(
            {source: MappingProxyType(moves) for source, moves in table.items()}
        )

    @property
    def name(self) -> str:
        return self._name

    @property
    def states(self) -> tuple[str, ...]:
        return self._states

    @property
    def initial(self) -> str:
        return self._initial

    @property
    def final(self) -> frozenset[str]:
        return self._final

    def allowed(self, state: str) -> frozenset[str]:
        """The events accepted in ``state``."""
        return frozenset(self._moves(state))

    def target(self, state: str, event: str) -> str:
        """Where ``event`` leads from ``state``.

        Raises:
            TransitionNotAllowedError: the pair was not declared.
        """
        try:
            return self._moves(state)[event]
        except KeyError:
            allowed = ", ".join(sorted(self._moves(state))) or "nothing"
            raise TransitionNotAllowedError(
                f"{self._name}: {event!r} is not allowed in state {state!r} (allowed: {allowed})"
            ) from None

    def _moves(self, state: str) -> Mapping[str, str]:
        try:
            return self._table[state]
        except KeyError:
            raise TransitionNotAllowedError(f"{self._name}: unknown state {state!r}") from None


def _problems(
    states: tuple[str, ...],
    initial: str,
    transitions: tuple[Transition, ...],
    final: frozenset[str],
) -> list[str]:
    """Everything wrong with a definition; empty when it is sound."""
    problems: list[str] = []
    known = set(states)
    if not states:
        return ["no states"]
    if len(known) != len(states):
        dupes = sorted({s for s in states if states.count(s) > 1})
        problems.append(f"states listed twice: {dupes}")
    if initial not in known:
        problems.append(f"initial state {initial!r} is not a state")
    for state in sorted(final - known):
        problems.append(f"final state {state!r} is not a state")
    seen: dict[tuple[str, str], str] = {}
    for t in transitions:
        for end in (t.source, t.target):
            if end not in known:
                problems.append(f"transition {t.source}-{t.event}->{t.target}: unknown {end!r}")
        if not t.event:
            problems.append(f"transition {t.source}->{t.target} has an empty event name")
        key = (t.source, t.event)
        if key in seen:
            # Two entries for one (state, event) would make fire() depend on declaration order
            # (or, if identical, hide a copy-paste slip): one declaration per pair.
            problems.append(
                f"{t.event!r} in {t.source!r} is declared twice ({seen[key]!r}, {t.target!r})"
            )
        seen.setdefault(key, t.target)
        if t.source in final:
            problems.append(f"final state {t.source!r} has a way out ({t.event!r})")
    if problems:
        return problems
    exits = {s: {t.target for t in transitions if t.source == s} for s in states}
    reachable = _closure({initial}, exits)
    for state in states:
        if state not in reachable:
            problems.append(f"state {state!r} is unreachable from {initial!r}")
    for state in states:
        if state not in final and not exits[state]:
            problems.append(f"state {state!r} is a trap: no way out and not declared final")
    if final:
        # With final states declared, every state must still be able to finish: a cycle that
        # never reaches a final state is a trap too, just a bigger one.
        entries = {s: {t.source for t in transitions if t.target == s} for s in states}
        can_finish = _closure(set(final), entries)
        for state in states:
            if state not in can_finish and exits[state]:
                problems.append(f"state {state!r} can never reach a final state")
    return problems


def _closure(start: set[str], edges: Mapping[str, set[str]]) -> set[str]:
    seen = set(start)
    todo = list(start)
    while todo:
        for nxt in edges[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


class StateMachine:
    """One running instance of a :class:`MachineDefinition`: its current state, nothing more."""

    __slots__ = ("_definition", "_state")

    def __init__(self, definition: MachineDefinition, state: str | None = None) -> None:
        """Start in ``state`` (default: the initial state); restoring a snapshot uses ``state``.

        Raises:
            TransitionNotAllowedError: ``state`` is not a state of the definition.
        """
        self._definition = definition
        if state is None:
            state = definition.initial
        if state not in definition.states:
            raise TransitionNotAllowedError(f"{definition.name}: unknown state {state!r}")
        self._state = state

    @property
    def definition(self) -> MachineDefinition:
        return self._definition

    @property
    def state(self) -> str:
        return self._state

    def can_fire(self, event: str) -> bool:
        """Whether :meth:`fire` would accept ``event`` now (a pure query)."""
        return event in self._definition.allowed(self._state)

    def fire(self, event: str) -> str:
        """Take the declared transition for ``event`` and return the new state.

        Raises:
            TransitionNotAllowedError: not declared for the current state; the state is unchanged.
        """
        self._state = self._definition.target(self._state, event)
        return self._state

    def __repr__(self) -> str:
        return f"<StateMachine {self._definition.name} state={self._state!r}>"
