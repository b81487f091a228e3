"""The roulette round engine (roulette, lightning_roulette, double_ball_roulette): the strict
machine of :mod:`.roulette_machine` around the pure rules of
:mod:`tablectl.controller.games.roulette`.

- ``ball_launched`` is accepted while ``open`` too: the SS2 launches before "no more bets"
  (seed-002-004 C-A11).
- A result must be the round's own spin (seed-001 G1/G3, R15), read consistently (R22) from a
  rotor that kept its direction (seed-001 §4.1 L95); events without spin or direction are not
  checked, so older journals replay as before.
- ``held`` ends only by ``void`` or a ``manual`` number, and stays held over a restart (the
  restart gate confirms rounds in play only).
- Lightning: one ``rng_draw`` before the result (seed-001 L115). Double Ball: one bad ball voids
  (L119).

Pure; refusals are verdicts (docs/verdicts.md)."""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from tablectl.controller.core.events import (
    BallLaunched,
    Fault,
    NoSpin,
    RngDraw,
    RoundOpen,
    TableEvent,
    WinningNumber,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines.base import (
    DECISION_PENDING,
    DEVICE_FAULT,
    FaultAnswer,
    RoundEngine,
)
from tablectl.controller.engines.roulette_machine import CLOSED, HELD, IDLE, OPEN, Flavour
from tablectl.controller.engines.roulette_machine import MACHINES as _MACHINES
from tablectl.controller.engines.roulette_round import RoundExtras
from tablectl.controller.games.double_ball import place_ball
from tablectl.controller.games.findings import Finding
from tablectl.controller.games.lightning_roulette import RULE as RULE_LIGHTNING
from tablectl.controller.games.lightning_roulette import with_lightning
from tablectl.controller.games.rng import RNG_MISSING
from tablectl.controller.games.roulette import (
    Pocket,
    RouletteRules,
    check_provenance,
    check_result_lines,
    check_rotor,
    check_spin,
    spin_result,
)

# Void reasons produced by the engine itself (the spin checks are in
# tablectl.controller.games.roulette).
VOID_RESULT_BEFORE_BETS_CLOSED: Final = "result_before_bets_closed"
# Used when a no_spin event carries an empty reason: a void always has a code.
VOID_NO_SPIN_DEFAULT: Final = "no_spin"

# The rule of a decision_pending verdict: an event the held round refuses, waiting for a supervisor.
RULE_DECISION: Final = "R22; seed-000 GEN-11"
# What a held round refuses (a manual winning_number is the supervisor's answer, not refused).
_WAIT_FOR_SUPERVISOR: Final = frozenset(
    {"round_open", "bets_closed", "ball_launched", "no_spin", "winning_number"}
)


class RouletteEngine(RoundEngine):
    """One roulette table's rounds, built as :class:`~tablectl.controller.engines.EngineClass`
    says."""

    _FAULT_IN_PLAY = (OPEN, CLOSED)
    _BETS_LATCHED = None  # bets close whatever is latched (a fault in play voids, or stays: R23)

    def __init__(
        self,
        table_id: str,
        rules: RouletteRules | None = None,
        *,
        game: str = "roulette",
        next_round: int = 1,
    ) -> None:
        self._rules = rules if rules is not None else RouletteRules()
        flavour: Flavour = (
            "double_ball" if self._rules.balls > 1
            else "lightning" if self._rules.lightning
            else "roulette"
        )  # fmt: skip
        super().__init__(
            table_id,
            game,
            _MACHINES[self._rules.void_on_fault, flavour],
            handlers={
                "ball_launched": self._ball_launched,
                "winning_number": self._winning_number,
                "no_spin": self._no_spin,
                "rng_draw": self._rng_draw,
                "confirm": self._confirm,
            },
            family="roulette",
            next_round=next_round,
        )
        self._ball_in_play = False
        self._launch: BallLaunched | None = None
        self._round_spin: int | None = None
        self._held: WinningNumber | None = None
        self._held_reason: str | None = None
        self._held_result: dict[str, Any] | None = None
        """Held for ``rng_missing``: the spin's result, settled as it is on ``confirm``."""
        self._last_number: Pocket | None = None
        self._extras = RoundExtras(self._rules)
        """Lightning and double ball: the round's lightning numbers and balls in."""
        self._last_numbers: list[Pocket] | None = None
        self._last_round: str | None = None

    @property
    def rules(self) -> RouletteRules:
        return self._rules

    def snapshot(self) -> dict[str, Any]:
        """Table state for the retained ``state`` topic; ``last_number`` is the last settled one (a
        void's number was never a result)."""
        return self._state(
            ball_in_play=self._ball_in_play,
            last_number=self._last_number,
            **self._extras.state(self._last_numbers),
        )

    def _intercept(self, event: TableEvent) -> list[EngineOutput] | None:
        """A held round waits for a supervisor: the wheel's own events are refused (and, when it
        waits for a confirm of its known result, a number entered by hand too)."""
        if (
            self.phase == HELD
            and event.type in _WAIT_FOR_SUPERVISOR
            and not (
                isinstance(event, WinningNumber) and event.manual and self._held_result is None
            )
        ):
            answer = (
                "void it, or confirm it (settled at the base odds)"
                if self._held_result is not None
                else "void it, or enter the winning number by hand"
            )
            return [
                self._verdict(
                    DECISION_PENDING,
                    f"{event.type} refused: the round waits for a supervisor "
                    f"({self._held_reason}): {answer}",
                    event,
                    RULE_DECISION,
                )
            ]
        return None

    # -- handlers (each fires the machine first: a refusal must leave no partial change) -------

    def _round_opened(self, event: RoundOpen) -> None:
        self._round_spin = event.spin

    def _ball_launched(self, event: BallLaunched) -> list[EngineOutput]:
        # A second launch in one round is the wheel retrying (SS2 warn 8): the last one counts.
        self._machine.fire("ball_launched")
        self._ball_in_play = True
        self._launch = event
        return []

    def _winning_number(self, event: WinningNumber) -> list[EngineOutput]:
        was = self.phase
        if not self._machine.can_fire("winning_number"):
            self._machine.fire("winning_number")  # refused (raises): nothing has changed
        if was == HELD:
            event = self._with_held_data(event)
        # Whose result is it? A number of another spin is not this round's at all (seed-001
        # G1/G3, R15), so this comes before every other check.
        finding = check_provenance(event, round_spin=self._round_spin, launch=self._launch)
        if finding is not None:
            return [self._void_for(finding, event, self._extras.reported(event.number, None))]
        ball: int | None = None
        if self._rules.balls > 1 or event.ball is not None:
            # seed-001 L119: which of the wheel's balls this is (a repeat is refused, R15).
            placed = place_ball(self._extras.numbers, event.ball, balls=self._rules.balls)
            if isinstance(placed, Finding):
                return [self._finding(placed, event)]
            ball = placed
        reported = self._extras.reported(event.number, ball)
        if was == OPEN:
            # seed-000 V-RL-3, seed-004 ROU 2.1.1: a result is valid only after "no more bets".
            self._machine.fire("winning_number")
            return [self._end("void", VOID_RESULT_BEFORE_BETS_CLOSED, event, reported)]
        # R22: the wheel contradicts itself; then seed-001 §4.1 L95: the rotor kept its way.
        finding = check_result_lines(event)
        if finding is not None and self._rules.on_result_mismatch == "hold":
            return [self._hold(finding, event)]
        finding = finding or check_rotor(event, self._launch)
        if finding is not None:
            return [self._void_for(finding, event, reported)]
        spin = self._with_launch_data(event)
        code = check_spin(self._rules, spin)
        if code is not None:
            # One ball invalid voids the spin (double ball: seed-001 L97 applied to both).
            self._machine.fire("winning_number")
            return [self._end("void", code, event, reported)]
        result = spin_result(
            self._rules.variant,
            spin.number,
            spin.revolutions,
            ball_direction=spin.ball_direction,
            rotor_direction=spin.rotor_direction,
            spin=spin.spin,
        )
        if self._rules.balls > 1:
            assert ball is not None  # placed above on every double-ball table
            return self._double_ball(event, ball, result)
        if self._rules.lightning:
            return self._settle_lightning(event, result)
        self._machine.fire("winning_number")
        self._last_number = spin.number
        return [self._end("settled", None, event, result)]

    def _rng_draw(self, event: RngDraw) -> list[EngineOutput]:
        if not self._rules.lightning:
            self._machine.fire("rng_draw")  # refused (raises): no RNG at this table
        refused = self._extras.draw_refused(event, phase=self.phase, last_round=self._last_round)
        if refused is not None:
            code, message, data = refused
            return [self._verdict(code, message, event, RULE_LIGHTNING, **data)]
        self._machine.fire("rng_draw")  # idle before any round: refused
        finding = self._extras.take_draw(event)
        return [] if finding is None else [self._finding(finding, event)]

    def _confirm(self, event: TableEvent) -> list[EngineOutput]:
        if self._rules.lightning and self.phase == HELD and self._held_result is None:
            message = f"confirm cannot settle a round held for {self._held_reason}"
            return [self._verdict(DECISION_PENDING, message, event, RULE_DECISION)]
        self._machine.fire("confirm")  # only a lightning round held for its RNG draw
        assert self._held_result is not None  # set whenever that round is held
        # seed-001 G4: the organizer settles it; no lightning numbers, so the base odds pay.
        self._last_number = self._held_result["number"]
        return [self._end("settled", None, event, with_lightning(self._held_result, ()))]

    def _no_spin(self, event: NoSpin) -> list[EngineOutput]:
        # seed-000 RL-I1/RL-I2, regulatory R2: "no spin", no payouts, a new spin follows.
        self._machine.fire("no_spin")
        reason = event.reason.strip() or VOID_NO_SPIN_DEFAULT
        return [self._end("void", reason, event, self._partial())]

    def _on_fault(self, event: Fault, phase: str) -> FaultAnswer:
        if self.phase == IDLE:
            # The machine ended the round (void_on_fault): seed-001 G1/G3, seed-004 ROU 2.1.6.
            return [self._end("void", DEVICE_FAULT, event, self._partial())]
        return []  # R23 (operator terms): the round stays in play, the fault latched (R14)

    # -- lightning and double ball --------------------------------------------------------------

    def _settle_lightning(self, event: WinningNumber, result: dict[str, Any]) -> list[EngineOutput]:
        """seed-001 L115: the spin pays by the round's lightning numbers; without them the round
        is void or held (``on_rng_missing``), never settled as if none had been drawn."""
        if self._extras.lightning is None:
            number = result["number"]
            message = "a result with no lightning numbers drawn"
            missing = self._verdict(RNG_MISSING, message, event, RULE_LIGHTNING, number=number)
            if self._rules.on_rng_missing == "void":
                self._machine.fire("winning_number")
                return [missing, self._end("void", RNG_MISSING, event, {"number": number})]
            self._machine.fire("hold")
            self._held, self._held_reason, self._held_result = event, RNG_MISSING, result
            return [missing]
        self._machine.fire("winning_number")
        self._last_number = result["number"]
        lightning = self._extras.lightning
        return [self._end("settled", None, event, with_lightning(result, lightning))]

    def _double_ball(
        self, event: WinningNumber, ball: int, result: dict[str, Any]
    ) -> list[EngineOutput]:
        """seed-001 L117–177: the round settles once both balls are in (in either order)."""
        pair = self._extras.add_ball(ball, result)
        if pair is None:
            self._machine.fire("ball")
            return []
        self._machine.fire("winning_number")
        self._last_numbers = pair["numbers"]
        return [self._end("settled", None, event, pair)]

    def _partial(self) -> dict[str, Any] | None:
        held = None if self._held_result is None else self._held_result["number"]
        return self._extras.partial(held)

    # -- helpers --------------------------------------------------------------------------------

    def _void_for(
        self, finding: Finding, event: WinningNumber, reported: dict[str, Any]
    ) -> Outcome:
        """End the round void with ``finding``: its code, and in ``result`` the number reported,
        what was compared and the sentence (for a dispute)."""
        self._machine.fire("winning_number")
        result = {**reported, **finding.data, "detail": finding.message}
        return self._end("void", finding.code, event, result)

    def _hold(self, finding: Finding, event: WinningNumber) -> Verdict:
        """R22: keep the round for a supervisor; the verdict says why and what was reported."""
        verdict = self._verdict(
            finding.code,
            f"{finding.message}: the round waits for a supervisor (void it, or enter the winning "
            "number by hand)",
            event,
            finding.rule,
            number=event.number,
            **finding.data,
        )
        self._machine.fire("hold")
        self._held, self._held_reason = event, finding.code
        return verdict

    def _with_held_data(self, event: WinningNumber) -> WinningNumber:
        """A number entered by hand for a held round: the spin it settles is the one the wheel
        measured (revolutions, directions, spin number); only its number was in doubt."""
        held = self._held
        assert held is not None  # set whenever the machine enters held
        return dataclasses.replace(
            event,
            revolutions=event.revolutions if event.revolutions is not None else held.revolutions,
            ball_direction=event.ball_direction or held.ball_direction,
            rotor_direction=event.rotor_direction or held.rotor_direction,
            spin=event.spin if event.spin is not None else held.spin,
        )

    def _with_launch_data(self, event: WinningNumber) -> WinningNumber:
        """The launch's direction and spin where the result lacks them: the rotor cannot reverse
        mid-spin (seed-001 §4.1 L95)."""
        launch = self._launch
        if launch is None:
            return event
        return dataclasses.replace(
            event,
            rotor_direction=event.rotor_direction or launch.rotor_direction,
            spin=event.spin if event.spin is not None else launch.spin,
        )

    def _round_ended(self, outcome: Outcome) -> None:
        self._last_round = outcome.round
        self._ball_in_play = False
        self._launch = None
        self._round_spin = None
        self._held = self._held_reason = None
        self._held_result = None
        self._extras.clear()
