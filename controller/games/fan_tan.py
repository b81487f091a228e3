"""Fan Tan (seed-001 §8.1, L3981–4003) as pure rules: the bead count and what it settles.

The result is the last line of four or fewer beads (L3985, L3989): ``((N - 1) mod 4) + 1``
[DERIVED], the same whether the event carries N or only that line. The count comes after
``bets_closed`` (L3987). Gaps: N = 0 is undefined, so :data:`NO_BEADS` waits for a recount; the
bead total is the table's ``max_beads`` (:data:`BEADS_OUT_OF_RANGE`). No void clause (§2.2): G1,
G3, G4. The bets settle on the result alone (L3991–4003). Readings: docs/games/fan_tan.md."""

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
    """The settled ``result``: ``beads`` is the last line (L3989; L3993, L3999–4003), ``big`` and
    ``odd`` the splits (L3995, L3997), ``count`` as reported."""
    beads = last_line(count)
    return {"count": count, "beads": beads, "big": beads >= 3, "odd": beads % 2 == 1}
