"""Fan Tan (seed-001 §8.1, L3981–4003) as pure rules: the bead count and what it settles.

"The dealer separates a random number of beads with a cup, then uses a special stick to sort the
selected beads into lines – four beads in each lines … The dealer places the last four or fewer
beads in a line in the center of the table. This line is the final result of the game – 1, 2, 3
or 4 beads" (L3985, L3989). So the result is ``((N - 1) mod 4) + 1`` for the N beads under the cup
(seed-001 §8.1 [DERIVED]). A ``beads`` event carries N (a counter's reading) or only the last line
(1–4, keyed in by the dealer): the formula gives the same result for both.

- Bets are placed "during the time when the beads are under the cup" (L3987): the count comes
  after ``bets_closed``; one before it voids the round (the engine's ``result_before_bets_closed``,
  the code the dice and the wheels use).
- N = 0 is undefined (§8.1 [GAP]): an empty cup, or a counter that saw nothing, is
  :data:`NO_BEADS`, never a result; the round waits for a recount (or a hand entry) or a
  supervisor's void.
- The book gives no bead total (§8.1 [GAP]): ``max_beads`` is the table's own figure (the beads
  under the dome); a count above it is :data:`BEADS_OUT_OF_RANGE` and waits for a recount too.
- Fan Tan has no void clause (seed-001 §2.2 "No void clause … any dice game or Fan Tan"): G1, G3
  and G4 are the fallback, as for the draws.

The bets settle on the result alone (L3991–4003): Fan (the number), Big (3, 4) / Small (1, 2),
Odd (1, 3) / Even (2, 4), Nim ("aNimb": a wins, b pushes), Kwok (two numbers win), Ssh (three
numbers win). The result carries the number and the two splits. No I/O, no clock: the engine
(:mod:`tablectl.controller.engines.beads`) owns the round.
"""

from __future__ import annotations

from typing import Any, Final

import pydantic

from tablectl.controller.games.findings import Finding

LINE: Final = 4
"""Beads per line as the dealer sorts them: "four beads in each lines" (L3985)."""

# Verdict codes (docs/games/fan_tan.md).
NO_BEADS: Final = "no_beads"
BEADS_OUT_OF_RANGE: Final = "beads_out_of_range"

RULE_COUNT: Final = "seed-001 L3985–3989, §8.1 [GAP]"


class FanTanRules(pydantic.BaseModel):
    """The ``[rules]`` of a Fan Tan table, validated strictly (unknown keys are errors)."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, strict=True)

    max_beads: int | None = pydantic.Field(default=None, ge=1)
    """The most beads the cup can separate: the beads under the table's dome. The book gives no
    figure (§8.1 [GAP]); ``None`` leaves the count unchecked."""


def last_line(count: int) -> int:
    """The beads left in the last line when ``count`` (≥ 1) beads are laid out in lines of four
    (L3985, L3989): ``((count - 1) mod 4) + 1``, so 1–4, never 0."""
    return (count - 1) % LINE + 1


def check_count(rules: FanTanRules, count: int) -> Finding | None:
    """Why a count cannot be the round's result (``None``: it can). The round then waits for a
    recount, a hand entry or a supervisor's void."""
    if count < 1:
        return Finding(
            NO_BEADS,
            RULE_COUNT,
            "no beads counted: the result is undefined for an empty cup; recount or void",
            {"count": count},
        )
    if rules.max_beads is not None and count > rules.max_beads:
        return Finding(
            BEADS_OUT_OF_RANGE,
            RULE_COUNT,
            f"{count} beads is more than the table's {rules.max_beads}: recount or void",
            {"count": count, "max_beads": rules.max_beads},
        )
    return None


def fan_tan_result(count: int) -> dict[str, Any]:
    """The settled ``result``: ``{"count", "beads", "big", "odd"}``.

    ``beads`` is the last line, 1–4 (L3989; Fan bets, and Nim, Kwok and Ssh by their numbers,
    L3993, L3999–4003); ``big`` is 3 or 4 and ``odd`` is 1 or 3 (L3995, L3997: Small and Even
    are their negations). ``count`` is the count as reported.
    """
    beads = last_line(count)
    return {"count": count, "beads": beads, "big": beads >= 3, "odd": beads % 2 == 1}
