"""What a Lightning or Double Ball round holds besides its spin, kept apart so the engine reads as
the spin it judges. Pure."""

from __future__ import annotations

import dataclasses
from typing import Any

from tablectl.controller.core.events import RngDraw
from tablectl.controller.games.double_ball import pair_result
from tablectl.controller.games.findings import Finding
from tablectl.controller.games.lightning_roulette import (
    LightningNumbers,
    check_lightning,
    lightning_data,
)
from tablectl.controller.games.rng import RNG_AFTER_RESULT, Stage, rng_order
from tablectl.controller.games.roulette import Pocket, RouletteRules


class RoundExtras:
    """One round's lightning numbers and balls, cleared at every round's end."""

    def __init__(self, rules: RouletteRules) -> None:
        self._rules = rules
        self.lightning: LightningNumbers | None = None
        self.balls: dict[int, dict[str, Any]] = {}

    def clear(self) -> None:
        """The round ended: nothing of it carries over."""
        self.lightning = None
        self.balls = {}

    @property
    def numbers(self) -> dict[int, Pocket]:
        """Each ball's number in so far, by ball."""
        return {ball: result["number"] for ball, result in self.balls.items()}

    def picks(self) -> list[dict[str, Any]] | None:
        """The lightning numbers as published (``None``: not drawn)."""
        return None if self.lightning is None else lightning_data(self.lightning)

    def state(self, last_numbers: list[Pocket] | None) -> dict[str, Any]:
        """The ``state`` snapshot's extra keys (none on a plain roulette table)."""
        extra: dict[str, Any] = {}
        if self._rules.lightning:
            extra["lightning"] = self.picks()
        if self._rules.balls > 1:
            extra["balls"] = {str(b): n for b, n in sorted(self.numbers.items())}
            extra["last_numbers"] = last_numbers
        return extra

    def reported(self, number: Pocket, ball: int | None) -> dict[str, Any]:
        """A void caused by a winning number: that number (plain roulette: only that), which
        ball and every ball's number in so far, and the lightning numbers, for a dispute."""
        reported: dict[str, Any] = {"number": number}
        if ball is not None and self._rules.balls > 1:
            numbers = self.numbers | {ball: number}
            reported |= {"ball": ball, "numbers": [numbers[b] for b in sorted(numbers)]}
        if self.lightning is not None:
            reported["lightning"] = self.picks()
        return reported

    def partial(self, held_number: Pocket | None) -> dict[str, Any] | None:
        """A void not caused by a number: the round so far (``None``: nothing in; always so on a
        plain roulette table, whose voids carry no result)."""
        out: dict[str, Any] = {}
        if self.balls:
            out["numbers"] = [r["number"] for _, r in sorted(self.balls.items())]
        if held_number is not None:
            out["number"] = held_number
        if self.lightning is not None:
            out["lightning"] = self.picks()
        return out or None

    def draw_refused(
        self, event: RngDraw, *, phase: str, last_round: str | None
    ) -> tuple[str, str, dict[str, Any]] | None:
        """Only while bets are closed, before the result, once a round (seed-001 L115, §2.2 (d))."""
        stage: Stage = (
            "betting" if phase == "open"
            else "result" if phase == "held"
            else "closed" if phase == "closed"
            else "ended" if last_round is not None
            else "none"
        )  # fmt: skip
        refused = rng_order(expected=True, stage=stage, drawn=self.lightning is not None)
        if refused is None:
            return None
        code, message = refused
        data: dict[str, Any] = {"numbers": [dataclasses.asdict(p) for p in event.numbers]}
        if code == RNG_AFTER_RESULT and stage == "ended":
            data["last_round"] = last_round
        return code, message, data

    def take_draw(self, event: RngDraw) -> Finding | None:
        """Keep the draw's picks as the round's lightning numbers, or say why they cannot be."""
        checked = check_lightning(
            event.numbers,
            variant=self._rules.variant,
            multipliers=self._rules.lightning_multipliers,
            count=(self._rules.lightning_min, self._rules.lightning_max),
        )
        if isinstance(checked, Finding):
            return checked
        self.lightning = checked
        return None

    def add_ball(self, ball: int, result: dict[str, Any]) -> dict[str, Any] | None:
        """Keep one ball's spin result; the pair's result once every ball is in (L117–177)."""
        self.balls[ball] = result
        if len(self.balls) < self._rules.balls:
            return None
        return pair_result(self.balls[1], self.balls[2])
