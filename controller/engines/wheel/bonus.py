"""Monopoly's dice bonus in the wheel engine (seed-001 §5.2 L1891–1921): the layer between the round
template and the wheel engine that handles the dice while a bonus is in play (otherwise
``dice_without_bonus``). Pure."""

from __future__ import annotations

from abc import abstractmethod

from tablectl.controller.core.events import Dice, RollInvalid, TableEvent
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines.base import RoundEngine
from tablectl.controller.engines.wheel.machine import BONUS_HELD, DICE_WITHOUT_BONUS, RULE_BONUS
from tablectl.controller.games.monopoly_bonus import (
    RULE_REROLL,
    DiceBonus,
    check_roll,
    reroll,
    roll,
)
from tablectl.controller.games.wheel import WheelRules


class BonusRounds(RoundEngine):
    """A wheel engine's handlers of the dice bonus: ``dice``, ``roll_started``, ``roll_invalid``."""

    _rules: WheelRules
    _bonus: DiceBonus | None
    """The bonus in play (``None``: none)."""
    _held_roll: tuple[tuple[int, ...], str | None] | None
    """A roll read while held, judged on confirm: its faces and time, not the Dice event (whose
    module the checkpoint's restricted unpickler does not load)."""

    @abstractmethod
    def _settle(self, event: TableEvent) -> Outcome:
        """End the round with its result (the wheel's, plus the bonus)."""

    def _dice(self, event: Dice) -> list[EngineOutput]:
        if self._bonus is None:
            return [self._no_bonus(event)]
        finding = check_roll(event.dice)
        if finding is not None:
            return [self._finding(finding, event)]  # not counted; a corrected reading may follow
        if self.phase == BONUS_HELD:
            # As a held segment: kept, and counted only if a supervisor confirms (G3, G4).
            self._machine.fire("held_roll")
            self._held_roll = (event.dice, event.ts)
            return []
        return self._roll(event)

    def _roll_started(self, event: TableEvent) -> list[EngineOutput]:
        if self._bonus is None:
            return [self._no_bonus(event)]
        self._machine.fire("roll_started")
        return []

    def _roll_invalid(self, event: RollInvalid) -> list[EngineOutput]:
        if self._bonus is None:
            return [self._no_bonus(event)]
        self._machine.fire("roll_invalid")
        # The dice are rolled again: a roll kept while held is replaced by the re-roll.
        self._bonus, self._held_roll = reroll(self._bonus), None
        # Coded as a dice table's re-roll (docs/games/dice.md): the reader's code, data.reroll.
        message = f"roll gives no result ({event.code}): rolled again, bets stand"
        data = {"reroll": True, "rerolls": self._bonus.rerolls, "detail": event.detail}
        return [self._verdict(event.code, message, event, RULE_REROLL, **data)]

    def _roll(self, event: Dice) -> list[EngineOutput]:
        """Count one roll of two dice; the last one due settles the round."""
        assert self._bonus is not None, "only a bonus in play rolls"
        after = roll(self._bonus, event.dice)
        self._machine.fire("settle" if after.done else "roll")
        self._bonus = after
        return [self._settle(event)] if after.done else []

    def _no_bonus(self, event: TableEvent) -> Verdict:
        """A dice table's event with no bonus in play: refused, the round (if any) unchanged."""
        why = "no dice bonus in play" if self._rules.dice_bonus else "no dice bonus at this table"
        return self._verdict(
            DICE_WITHOUT_BONUS, f"{event.type!r} refused: {why}", event, RULE_BONUS,
            dice_bonus=self._rules.dice_bonus,
        )  # fmt: skip
