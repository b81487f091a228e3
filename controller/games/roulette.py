"""Roulette rules as pure functions: wheels, the published result, and whether a spin is valid.

Rule ids: seed-000 §3 RL-I1, RL-I2, V-RL-1..5; seed-001 §4.1, §4.4, §4.5; seed-002-004 §A.3 (ROU
3.1.1, ROU 2.1.x); regulatory R1/R2, R15, R22. The order of all checks and the ``[rules]`` keys:
docs/games/roulette.md."""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import BallLaunched, Direction, WinningNumber
from tablectl.controller.games.findings import Finding

Variant: TypeAlias = Literal["european", "american", "french"]
Pocket: TypeAlias = int | Literal["00"]
"""A pocket as events and results carry it: an int, or the string ``"00"`` (contracts §4.3)."""
Color: TypeAlias = Literal["red", "black", "green"]

VARIANTS: Final[tuple[Variant, ...]] = ("european", "american", "french")

# seed-001 §4.1 (standard red set, L3325) and seed-002-004 §A.3.1: 18 red, 18 black, 0 green.
RED: Final[frozenset[int]] = frozenset(
    {1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36}
)
BLACK: Final[frozenset[int]] = frozenset(range(1, 37)) - RED

# seed-002-004 §A.3.1: single-zero wheel, clockwise from 0 (also the french wheel).
EUROPEAN_ORDER: Final[tuple[int, ...]] = (
    0, 32, 15, 19, 4, 21, 2, 25, 17, 34, 6, 27, 13, 36, 11, 30, 8, 23, 10,
    5, 24, 16, 33, 1, 20, 14, 31, 9, 22, 18, 29, 7, 28, 12, 35, 3, 26,
)  # fmt: skip

# seed-001 §4.4 gives the pockets (0, 00, 1-36) but not their order; this is the standard
# double-zero wheel, clockwise from 0, with 00 opposite 0. Confirm against the installed wheel.
AMERICAN_ORDER: Final[tuple[Pocket, ...]] = (
    0, 28, 9, 26, 30, 11, 7, 20, 32, 17, 5, 22, 34, 15, 3, 24, 36, 13, 1,
    "00", 27, 10, 25, 29, 12, 8, 19, 31, 18, 6, 21, 33, 16, 4, 23, 35, 14, 2,
)  # fmt: skip

_ORDERS: Final[dict[Variant, tuple[Pocket, ...]]] = {
    "european": EUROPEAN_ORDER,
    "french": EUROPEAN_ORDER,
    "american": AMERICAN_ORDER,
}
_POCKETS: Final[dict[Variant, frozenset[Pocket]]] = {v: frozenset(o) for v, o in _ORDERS.items()}

# Stable void codes (docs/verdicts.md). Strings, not an enum: they travel in JSON as they are.
VOID_NUMBER_OUT_OF_RANGE: Final = "number_out_of_range"
VOID_SAME_DIRECTION: Final = "same_direction"
VOID_MIN_REVOLUTIONS: Final = "min_revolutions"
VOID_REVOLUTIONS_UNKNOWN: Final = "revolutions_unknown"
VOID_SPIN_MISMATCH: Final = "spin_mismatch"
VOID_LAUNCH_NOT_SEEN: Final = "launch_not_seen"
VOID_RESULT_MISMATCH: Final = "result_mismatch"
VOID_ROTOR_DIRECTION_CHANGED: Final = "rotor_direction_changed"

RULE_PROVENANCE: Final = "seed-001 G1, G3; R15"
RULE_RESULT_MISMATCH: Final = "R22"
RULE_ROTOR: Final = "seed-001 §4.1 L95"


class RouletteRules(pydantic.BaseModel):
    """The ``[rules]`` section of a roulette table (contracts §4.2), validated strictly."""

    # strict: a TOML ``min_revolutions = "4"`` or ``true`` is a config mistake, not a 4 or a 1.
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, strict=True)

    variant: Variant = "european"
    """european: 37 pockets; american: 38 with "00" (seed-001 §4.4); french: 37 + la partage."""

    min_revolutions: int = pydantic.Field(default=4, ge=1)
    """Full ball revolutions for a valid spin: 4 in seed-000 RL-I2 and regulatory R1, 3 in
    seed-004 ROU 3.1.1. The default is the stricter one."""

    require_revolution_count: bool = False
    """Without it, a wheel that reports no count is trusted (the SS2 reaches state 4 after about 3.5
    revolutions)."""

    void_on_fault: bool = True
    """A device fault during a round voids it (seed-001 G1/G3, seed-004 ROU 2.1.6). False keeps
    the round in play until a result comes (regulatory R23: operator terms for wheel problems)."""

    on_result_mismatch: Literal["void", "hold"] = "void"
    """The wheel's two readings disagree (SS2; :func:`check_result_lines`): void, or hold for a
    supervisor. R22: staff refuse to pay on a suspected malfunction (seed-000 GEN-11; seed-001
    G4)."""

    balls: Literal[1, 2] = 1
    """Balls per spin: 2 is Double Ball Roulette (seed-001 L119: "two balls are used at the same
    time"); the round settles once both are in (:mod:`tablectl.controller.games.double_ball`)."""

    lightning: bool = False
    """Lightning Roulette (seed-001 L115; seed-000 §4): an ``rng_draw`` after bets close."""

    lightning_multipliers: list[int] = pydantic.Field(
        default_factory=lambda: [50, 100, 150, 200, 250, 300, 350, 400, 500], min_length=1
    )
    """The multipliers a lightning number may carry: seed-000 L256–265 (seed-001 L115 gives only
    the span, "29:1 to 499:1")."""

    lightning_min: int = pydantic.Field(default=1, ge=1, le=37)
    lightning_max: int = pydantic.Field(default=5, ge=1, le=38)
    """How many lightning numbers a draw has: "one to five" (seed-000 L255)."""

    on_rng_missing: Literal["void", "hold"] = "void"
    """No lightning numbers drawn: void (a malfunction, as Lightning Dice) or hold for a supervisor
    (seed-001 G4)."""

    @pydantic.model_validator(mode="after")
    def _one_game(self) -> RouletteRules:
        if self.lightning_min > self.lightning_max:
            raise RuleError(
                f"lightning_min ({self.lightning_min}) exceeds lightning_max ({self.lightning_max})"
            )
        if any(m < 1 for m in self.lightning_multipliers):
            raise RuleError("lightning_multipliers must be >= 1")
        if self.balls == 2 and self.lightning:
            # No rule book plays both: which ball a lightning number would pay on is undefined.
            raise RuleError("balls = 2 and lightning = true: no rule book's game plays both")
        if self.balls == 2 and self.on_result_mismatch == "hold":
            # A held ball would stop the other ball's result: a double-ball table voids instead.
            raise RuleError('balls = 2 needs on_result_mismatch = "void" (a mismatch voids)')
        return self


def pockets(variant: Variant) -> frozenset[Pocket]:
    """Every pocket of the wheel."""
    return _POCKETS[variant]


def wheel_order(variant: Variant) -> tuple[Pocket, ...]:
    """The pockets clockwise from 0 (for sector statistics and displays)."""
    return _ORDERS[variant]


def validate_number(variant: Variant, number: object) -> bool:
    """Whether ``number`` is a pocket of this wheel (seed-000 V-RL-2, seed-001 §4.1/§4.4); strict
    about types, since a wire value that is none of these is a void, never a guess."""
    if isinstance(number, bool):
        return False
    if isinstance(number, int | str):
        return number in _POCKETS[variant]
    return False


def color(number: Pocket) -> Color:
    """Colour of a pocket; 0 and "00" are green (seed-001 §4.1, §4.4)."""
    if number in {0, "00"}:
        return "green"
    return "red" if number in RED else "black"


def spin_result(
    variant: Variant,
    number: Pocket,
    revolutions: int | None,
    *,
    ball_direction: Direction | None = None,
    rotor_direction: Direction | None = None,
    spin: int | None = None,
) -> dict[str, Any]:
    """The ``result`` of a settled outcome (contracts §4.3), with derived fields so a consumer needs
    no layout table: zero loses the outside bets (seed-001 §4.1 L99) save ``la_partage`` (§4.5).
    The directions are keyword-only: swapped, they would pass any type check."""
    if not validate_number(variant, number):
        raise RuleError(f"{number!r} is not a pocket of a {variant} wheel")
    parity: str | None = None
    low_high: str | None = None
    dozen: int | None = None
    column: int | None = None
    if isinstance(number, int) and number > 0:
        parity = "even" if number % 2 == 0 else "odd"
        low_high = "low" if number <= 18 else "high"
        dozen = (number - 1) // 12 + 1
        column = (number - 1) % 3 + 1
    return {
        "number": number,
        "color": color(number),
        "revolutions": revolutions,
        "parity": parity,
        "range": low_high,
        "dozen": dozen,
        "column": column,
        "ball_direction": ball_direction,
        "rotor_direction": rotor_direction,
        "wheel_spin": spin,
        "variant": variant,
        "la_partage": variant == "french" and number == 0,
    }


def check_spin(rules: RouletteRules, event: WinningNumber) -> str | None:
    """Why this spin is void, or ``None``; the most basic problem first:

    1. ``number_out_of_range`` (seed-000 V-RL-2; seed-001 §4.1/§4.4); 2. ``same_direction``
    (seed-002-004 ROU 3.1.1; regulatory R1, R2(a); seed-001 §4.1 L95); 3. ``min_revolutions``
    (seed-000 RL-I2 / V-RL-1; seed-002-004 ROU 3.1.1; regulatory R1, R2(b)); 4.
    ``revolutions_unknown``: only when the table requires a count."""
    if not validate_number(rules.variant, event.number):
        return VOID_NUMBER_OUT_OF_RANGE
    if (
        event.ball_direction is not None
        and event.rotor_direction is not None
        and event.ball_direction == event.rotor_direction
    ):
        return VOID_SAME_DIRECTION
    if event.revolutions is None:
        return VOID_REVOLUTIONS_UNKNOWN if rules.require_revolution_count else None
    if event.revolutions < rules.min_revolutions:
        return VOID_MIN_REVOLUTIONS
    return None


def check_provenance(
    event: WinningNumber, *, round_spin: int | None, launch: BallLaunched | None
) -> Finding | None:
    """Whether the result is this round's, by the wheel's spin number. A result without one is not
    checked. ``spin_mismatch``: another spin's number (events in between were lost);
    ``launch_not_seen``: the round's own launch is missing, so the spin cannot be vouched for.
    seed-001 G1, G3; regulatory R15."""
    spin = event.spin
    if spin is None:
        return None
    expected, how = round_spin, "opened"
    if expected is None and launch is not None and launch.spin is not None:
        expected, how = launch.spin, "launched"
    if expected is not None and spin != expected:
        return Finding(
            VOID_SPIN_MISMATCH,
            RULE_PROVENANCE,
            f"winning number of spin {spin} for a round {how} at spin {expected}",
            {"wheel_spin": spin, "round_spin": expected},
        )
    if launch is None or (launch.spin is not None and launch.spin != spin):
        seen = "no ball launch" if launch is None else f"the launch of spin {launch.spin}"
        return Finding(
            VOID_LAUNCH_NOT_SEEN,
            RULE_PROVENANCE,
            f"winning number of spin {spin}, but the round saw {seen}",
            {"wheel_spin": spin, "launch_spin": None if launch is None else launch.spin},
        )
    return None


def check_result_lines(event: WinningNumber) -> Finding | None:
    """The wheel's two readings (SS2: the number line and the state-5 status line) disagree: it has
    malfunctioned and neither may be paid on (regulatory R22)."""
    second = event.status_number
    if second is None or _same_pocket(second, event.number):
        return None
    return Finding(
        VOID_RESULT_MISMATCH,
        RULE_RESULT_MISMATCH,
        f"the wheel reported {event.number!r} on its number line and {second!r} on its status "
        "line for the same spin",
        {"status_number": second},
    )


def check_rotor(event: WinningNumber, launch: BallLaunched | None) -> Finding | None:
    """The rotor changed direction within a spin: seed-001 §4.1 L95 (C3: between spins it may)."""
    if launch is None or launch.rotor_direction is None or event.rotor_direction is None:
        return None
    if launch.rotor_direction == event.rotor_direction:
        return None
    return Finding(
        VOID_ROTOR_DIRECTION_CHANGED,
        RULE_ROTOR,
        f"the rotor turned {launch.rotor_direction} at the launch and {event.rotor_direction} "
        "at the result",
        {
            "launch_rotor_direction": launch.rotor_direction,
            "rotor_direction": event.rotor_direction,
        },
    )


def _same_pocket(a: object, b: object) -> bool:
    # Strict: True is not 1 (as in validate_number); "00" only equals "00".
    return type(a) is type(b) and a == b
