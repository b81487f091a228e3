"""The simulated SS2's fault table: the kinds a scenario or ``--fault kind@game[=value]`` may
script, and :class:`FaultSpec`, one scripted fault."""

from __future__ import annotations

from typing import Final

from tablectl.simulators.faults import FaultKinds, ValueRule
from tablectl.simulators.faults import FaultSpec as BaseFaultSpec

FAULTS: Final = FaultKinds(
    "game",
    {
        "misspin": ValueRule.nothing(
            note="the ball runs with the rotor: warn 2, no result; a new game after 10 s or *R"
        ),
        "no_ball": ValueRule.nothing(
            note="the ball is never sensed: warn 1 in state 4; the wheel stops itself after 75 s"
        ),
        "misfire": ValueRule.seconds(2.0, note="warn 8 (launch failed) in state 2 for s"),
        "misfire_stuck": ValueRule.seconds(2.0, note="as misfire; warn 8 stays through state 3"),
        "sensor_fault": ValueRule.whole(
            "code",
            choices=(11, 12, 13, 21, 22, 23),
            default=21,
            metavar="CODE",
            note="*F CODE; 21-23 also drop that rim sensor from the *I 4 stream",
        ),
        "fault": ValueRule.whole(
            "*F code",
            low=1,
            high=255,
            default=1,
            metavar="CODE",
            note="*F CODE 1 s into state 3: the wheel powers down (state 6)",
        ),
        "short_spin": ValueRule.whole(
            "revolutions",
            low=1,
            high=100,
            default=2,
            metavar="revolutions",
            note="the ball makes this many revolutions in the *I 4 stream",
        ),
        "same_direction_sensor": ValueRule.nothing(
            note="the rim sensors see the ball run with the rotor (no warning bit)"
        ),
        "result_mismatch": ValueRule.whole(
            "number",
            low=0,
            high=36,
            note="the status line shows N (default: the next pocket up), the bare line the ball",
        ),
        "rotor_reversal": ValueRule.nothing(note="the rotor turns the other way from state 4"),
        "garbage": ValueRule.nothing(note="line noise before the game's * lines"),
        "split": ValueRule.nothing(note="the game's lines in pieces of 1-4 bytes"),
        "silence": ValueRule.seconds(3.0, note="the wheel says nothing for s, 1 s into state 3"),
        "disconnect": ValueRule.seconds(3.0, note="the link drops for s, 1 s into state 3"),
    },
    examples=("misspin@2", "silence@3=4"),
    counts="games since start, from 1",
)
"""The wheel's fault kinds; ``value`` by kind (default in brackets):

- ``misfire`` / ``misfire_stuck``: wheel seconds of warn 8 in state 2 [2]; ``misfire_stuck``
  also keeps warn 8 through state 3.
- ``sensor_fault``: the ``*F`` code [21]; 21–23 also drop that sensor from the ``*I 4`` stream.
- ``fault``: the ``*F`` code that powers the wheel down [1].
- ``short_spin``: ball revolutions in the sensor stream [2].
- ``result_mismatch``: the number the status lines show from the result on (0–36), while
  the bare line and the ``bn`` pocket report the ball's [the next pocket up, 36 → 0]. The
  lines then disagree for the same spin, as on a peer project's recorded SS2 traffic (a
  value equal to the ball's number makes them agree).
- ``silence`` / ``disconnect``: wheel seconds without output / without a link [3].
- ``rotor_reversal``: the rotor turns the other way from "no more bets" (state 4) to the
  result: a direction change during play (seed-001 §4.1 L95), seen on the status lines.
- ``misspin``, ``no_ball``, ``same_direction_sensor``, ``rotor_reversal``, ``garbage``,
  ``split``: no value.
"""
FAULT_KINDS: Final = FAULTS.names


class FaultSpec(BaseFaultSpec):
    """A scripted wheel fault (:data:`FAULTS`) for game number ``at`` (1-based count of games
    since start, so a misspin's respin is the next game)."""

    KINDS = FAULTS


from_spec = FaultSpec.from_spec
"""Module-level alias of :meth:`FaultSpec.from_spec` (used by the CLI and the demo)."""
