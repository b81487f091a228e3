"""Wheel-bias and shuffle statistics, pure (regulatory R5, R17, R24): no I/O, no SciPy.

R24: every number within **3σ** of its expectation, a **χ² test against uniform at 0.025**, and a
**serial-correlation** test; R5: a shuffler's χ² at 95 % confidence. The χ² p-value is the
regularised incomplete gamma Q (Numerical Recipes §6.2, ~1e-12). A flag means "look at this wheel":
with 37 numbers about one in 370 fair windows flags a number at 3σ by chance.

The per-position sum is not exactly χ² (no replacement within a shoe) but errs on the quiet side;
each position alone is judged by :func:`max_cell_p`. A χ² that passes with fewer than
:data:`MIN_EXPECTED_PER_CELL` expected per cell is "too few", not "ok"; a flag stays a flag.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeVar

from tablectl.controller.core.errors import RuleError

Pocket = int | str
Category = TypeVar("Category", bound=int | str)

MIN_EXPECTED_PER_CELL: Final = 5.0
"""A χ² test is judged only when every cell expects at least this many (module docstring)."""

Verdict = Literal["ok", "flagged", "too_few"]

_EPS = 1e-15
_TINY = 1e-300
_MAX_ITER = 10_000


def gamma_q(a: float, x: float) -> float:
    """Regularised upper incomplete gamma Q(a, x) = Γ(a, x) / Γ(a), for a > 0, x ≥ 0.

    The series converges fast for x < a + 1 and the continued fraction for x ≥ a + 1, so each
    is used where it is good (and Q = 1 − P on the series side).
    """
    if a <= 0:
        raise RuleError(f"gamma_q needs a > 0, not {a}")
    if x < 0 or math.isnan(x):
        raise RuleError(f"gamma_q needs x >= 0, not {x}")
    if x == 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    log_prefix = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(_MAX_ITER):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * _EPS:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefix))
    # Modified Lentz evaluation of the continued fraction for Q.
    b = x + 1 - a
    c = 1 / _TINY
    d = 1 / b
    h = d
    for i in range(1, _MAX_ITER):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < _EPS:
            break
    return min(1.0, math.exp(log_prefix) * h)


def chi2_sf(x: float, dof: int) -> float:
    """P(χ²_dof ≥ x): the p-value of a χ² statistic ``x`` with ``dof`` degrees of freedom."""
    if dof < 1:
        raise RuleError(f"chi-square needs dof >= 1, not {dof}")
    return gamma_q(dof / 2, max(0.0, x) / 2)


def more_needed(n: int, smallest_p: float, *, min_expected: float = MIN_EXPECTED_PER_CELL) -> int:
    """How many more observations a χ² over ``n`` needs for its rarest cell to expect
    ``min_expected``; 0 when it already does."""
    if not 0 < smallest_p <= 1:
        raise RuleError(f"a cell's probability must be in (0, 1], not {smallest_p}")
    # round(): 5 / (1/37) is 185.00000000000003 in floating point, and 185 spins are enough.
    return max(0, math.ceil(round(min_expected / smallest_p, 9)) - n)


def verdict(*, flagged: bool, needed: int) -> Verdict:
    """A test's word: ``flagged`` whatever the sample, else ``too_few`` while ``needed`` > 0."""
    if flagged:
        return "flagged"
    return "too_few" if needed > 0 else "ok"


@dataclass(frozen=True)
class NumberFrequency:
    """One pocket: how often, how often expected, how many σ away, flagged beyond the limit."""

    number: Pocket
    count: int
    expected: float
    z: float
    flagged: bool


@dataclass(frozen=True)
class SerialCorrelation:
    """Lag-1 autocorrelation of a sequence, its z against independence and the p-value."""

    r: float
    z: float
    p_value: float
    flagged: bool


@dataclass(frozen=True)
class BiasReport:
    """Everything ``diag stats`` says about one window of spins (or a wheel's own table)."""

    spins: int
    pockets: int
    frequencies: tuple[NumberFrequency, ...]
    chi_square: float
    dof: int
    p_value: float
    alpha: float
    sigma: float
    chi_flagged: bool
    serial_by_number: SerialCorrelation | None = None
    serial_by_position: SerialCorrelation | None = None

    @property
    def needed(self) -> int:
        """More spins the χ² needs for an expected 5 per pocket (0: enough)."""
        return more_needed(self.spins, 1 / self.pockets)

    @property
    def chi_verdict(self) -> Verdict:
        return verdict(flagged=self.chi_flagged, needed=self.needed)

    @property
    def flagged_numbers(self) -> tuple[NumberFrequency, ...]:
        return tuple(f for f in self.frequencies if f.flagged)

    @property
    def flagged(self) -> bool:
        """Any test says "look at this wheel"."""
        serial = (self.serial_by_number, self.serial_by_position)
        return (
            self.chi_flagged
            or bool(self.flagged_numbers)
            or any(s is not None and s.flagged for s in serial)
        )


def analyse_counts(
    counts: Mapping[Pocket, int],
    pockets: Sequence[Pocket],
    *,
    alpha: float = 0.025,
    sigma: float = 3.0,
) -> BiasReport:
    """3σ flags and χ² for a table of counts over ``pockets`` (counts of others are ignored)."""
    k = len(pockets)
    if k < 2:
        raise RuleError("need at least two pockets")
    n = sum(counts.get(p, 0) for p in pockets)
    expected = n / k
    sd = math.sqrt(n * (1 / k) * (1 - 1 / k))
    frequencies = []
    chi = 0.0
    for pocket in pockets:
        count = counts.get(pocket, 0)
        z = (count - expected) / sd if sd > 0 else 0.0
        frequencies.append(NumberFrequency(pocket, count, expected, z, abs(z) > sigma))
        if expected > 0:
            chi += (count - expected) ** 2 / expected
    p_value = chi2_sf(chi, k - 1) if n > 0 else 1.0
    return BiasReport(
        spins=n,
        pockets=k,
        frequencies=tuple(frequencies),
        chi_square=chi,
        dof=k - 1,
        p_value=p_value,
        alpha=alpha,
        sigma=sigma,
        chi_flagged=n > 0 and p_value < alpha,
    )


def serial_correlation(
    values: Sequence[float], *, alpha: float = 0.025
) -> SerialCorrelation | None:
    """Lag-1 autocorrelation; ``None`` when it is undefined (fewer than 3 values, or constant)."""
    n = len(values)
    if n < 3:
        return None
    mean = sum(values) / n
    dev = [v - mean for v in values]
    denominator = sum(d * d for d in dev)
    if denominator == 0:
        return None
    r = sum(dev[i] * dev[i + 1] for i in range(n - 1)) / denominator
    z = (r + 1 / n) * math.sqrt(n)
    p_value = math.erfc(abs(z) / math.sqrt(2))
    return SerialCorrelation(r, z, p_value, p_value < alpha)


def analyse_spins(
    numbers: Sequence[Pocket],
    pockets: Sequence[Pocket],
    *,
    wheel_order: Sequence[Pocket] | None = None,
    alpha: float = 0.025,
    sigma: float = 3.0,
) -> BiasReport:
    """:func:`analyse_counts` of a sequence of results, plus its serial correlation.

    By number, ``"00"`` counts as 37. By position, each result is its index clockwise from 0 in
    ``wheel_order`` (neighbouring pockets are what a tilted or worn wheel favours).
    """
    counts: dict[Pocket, int] = {}
    for number in numbers:
        counts[number] = counts.get(number, 0) + 1
    report = analyse_counts(counts, pockets, alpha=alpha, sigma=sigma)
    by_number = serial_correlation([37 if n == "00" else int(n) for n in numbers], alpha=alpha)
    by_position = None
    if wheel_order is not None:
        index = {p: i for i, p in enumerate(wheel_order)}
        by_position = serial_correlation([index[n] for n in numbers if n in index], alpha=alpha)
    return dataclasses.replace(report, serial_by_number=by_number, serial_by_position=by_position)


def _binomial_z(count: int, n: int, p: float) -> float:
    sd = math.sqrt(n * p * (1 - p))
    return (count - n * p) / sd if sd > 0 else 0.0


@dataclass(frozen=True)
class FrequencyTest:
    """Counts of categories against their probabilities: χ², its p-value and σ flags."""

    n: int
    frequencies: tuple[NumberFrequency, ...]
    chi_square: float
    dof: int
    p_value: float
    alpha: float
    sigma: float
    chi_flagged: bool
    smallest_p: float = 1.0
    """The rarest category's probability (what the sample-size rule needs)."""

    @property
    def needed(self) -> int:
        """More observations the χ² needs for an expected 5 in its rarest category."""
        return more_needed(self.n, self.smallest_p)

    @property
    def chi_verdict(self) -> Verdict:
        return verdict(flagged=self.flagged, needed=self.needed)

    @property
    def flagged_categories(self) -> tuple[NumberFrequency, ...]:
        return tuple(f for f in self.frequencies if f.flagged)

    @property
    def flagged(self) -> bool:
        return self.chi_flagged or bool(self.flagged_categories)


def frequency_test(
    counts: Mapping[Category, int],
    probabilities: Mapping[Category, float],
    *,
    alpha: float = 0.05,
    sigma: float = 3.0,
    sigma_min_expected: float = 0.0,
) -> FrequencyTest:
    """χ² goodness of fit of ``counts`` to ``probabilities``, and each category's binomial z,
    flagged only where ``sigma_min_expected`` are expected: a small-mean binomial is too skewed for
    a σ limit (7 of 30 where 2.3 are expected is "3.2 σ" and happens one time in 120)."""
    k = len(probabilities)
    if k < 2:
        raise RuleError("need at least two categories")
    if any(p <= 0 for p in probabilities.values()) or abs(sum(probabilities.values()) - 1) > 1e-6:
        raise RuleError("probabilities must be positive and sum to 1")
    n = sum(counts.get(c, 0) for c in probabilities)
    frequencies = []
    chi = 0.0
    for category, p in probabilities.items():
        count = counts.get(category, 0)
        expected = n * p
        z = _binomial_z(count, n, p)
        flagged = abs(z) > sigma and expected >= sigma_min_expected
        frequencies.append(NumberFrequency(category, count, expected, z, flagged))
        if expected > 0:
            chi += (count - expected) ** 2 / expected
    p_value = chi2_sf(chi, k - 1) if n > 0 else 1.0
    return FrequencyTest(
        n=n,
        frequencies=tuple(frequencies),
        chi_square=chi,
        dof=k - 1,
        p_value=p_value,
        alpha=alpha,
        sigma=sigma,
        chi_flagged=n > 0 and p_value < alpha,
        smallest_p=min(probabilities.values()),
    )


def max_cell_p(counts: Sequence[int]) -> float:
    """P(some category gets at least ``max(counts)``), bounded by k · P(Binomial(n, 1/k) ≥ max):
    valid for any n, where χ² with a handful of shoes is not."""
    k, n, top = len(counts), sum(counts), max(counts, default=0)
    if k < 2 or n == 0:
        return 1.0
    p = 1 / k
    tail = sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(top, n + 1))
    return min(1.0, k * tail)


@dataclass(frozen=True)
class PositionOutlier:
    """A position where one category came up too often: ``count`` of ``shoes``, p-value."""

    position: int
    category: str
    count: int
    shoes: int
    p_value: float


@dataclass(frozen=True)
class PositionTest:
    """Per-position χ² against uniform, summed; ``outliers`` beyond ``outlier_alpha / positions``
    (Bonferroni); ``least_p`` shown even when not an outlier, to show where it is least uniform."""

    categories: tuple[str, ...]
    positions: int
    shoes: int
    chi_square: float
    dof: int
    p_value: float
    alpha: float
    outlier_alpha: float
    outliers: tuple[PositionOutlier, ...]
    least_p: PositionOutlier | None
    position_chi: tuple[float, ...] = ()
    """Each tested position's own χ² (k − 1 dof each), position 1 first."""
    position_shoes: tuple[int, ...] = ()
    """How many shoes reached each tested position."""

    @property
    def needed(self) -> int:
        """More shoes the least reached position needs for an expected 5 per category."""
        fewest = min(self.position_shoes, default=0)
        return more_needed(fewest, 1 / len(self.categories))

    @property
    def sum_verdict(self) -> Verdict:
        return verdict(flagged=self.sum_flagged, needed=self.needed)

    @property
    def sum_flagged(self) -> bool:
        """The summed χ² is beyond its risk level."""
        return self.positions > 0 and self.p_value < self.alpha

    @property
    def flagged(self) -> bool:
        """The sum, or some position on its own, is beyond its risk level."""
        return self.sum_flagged or bool(self.outliers)


def position_test(
    columns: Sequence[Sequence[int]],
    categories: Sequence[str],
    *,
    min_shoes: int,
    alpha: float = 0.05,
    outlier_alpha: float | None = None,
    max_outliers: int = 20,
) -> PositionTest:
    """``columns[i][c]``: how many shoes had ``categories[c]`` at position ``i + 1``. Positions are
    tested while at least ``min_shoes`` shoes reached them (one shoe gives a constant χ²)."""
    k = len(categories)
    if k < 2:
        raise RuleError("need at least two categories")
    if min_shoes < 2:
        raise RuleError("min_shoes must be at least 2")
    family = alpha if outlier_alpha is None else outlier_alpha
    chi_total = 0.0
    tops: list[PositionOutlier] = []
    each_chi: list[float] = []
    each_n: list[int] = []
    shoes = 0
    for index, column in enumerate(columns):
        n = sum(column)
        if n < min_shoes:
            break
        if len(column) != k:
            raise RuleError(f"position {index + 1}: {len(column)} counts, not {k}")
        shoes = max(shoes, n)
        expected = n / k
        chi = sum((c - expected) ** 2 for c in column) / expected
        chi_total += chi
        each_chi.append(chi)
        each_n.append(n)
        top = max(range(k), key=lambda c: column[c])
        tops.append(PositionOutlier(index + 1, categories[top], column[top], n, max_cell_p(column)))
    positions = len(tops)
    dof = positions * (k - 1)
    p_value = chi2_sf(chi_total, dof) if dof > 0 else 1.0
    limit = family / positions if positions else 0.0
    ranked = sorted(tops, key=lambda t: (t.p_value, t.position))
    return PositionTest(
        categories=tuple(categories),
        positions=positions,
        shoes=shoes,
        chi_square=chi_total,
        dof=dof,
        p_value=p_value,
        alpha=alpha,
        outlier_alpha=family,
        outliers=tuple(t for t in ranked[:max_outliers] if t.p_value < limit),
        least_p=ranked[0] if ranked else None,
        position_chi=tuple(each_chi),
        position_shoes=tuple(each_n),
    )


def pooled_serial_correlation(
    sequences: Sequence[Sequence[float]], *, alpha: float = 0.05
) -> SerialCorrelation | None:
    """Lag-1 autocorrelation within each sequence, pooled; ``None`` under 3 pairs or constant. A
    whole shuffled shoe has E[r₁] ≈ −1/L, so z = (r₁ + S/V)·√pairs."""
    used = [s for s in sequences if len(s) >= 2]
    values = [v for s in used for v in s]
    pairs = len(values) - len(used)
    if pairs < 3:
        return None
    mean = sum(values) / len(values)
    denominator = sum((v - mean) ** 2 for v in values)
    if denominator == 0:
        return None
    numerator = sum((s[i] - mean) * (s[i + 1] - mean) for s in used for i in range(len(s) - 1))
    r = numerator / denominator
    z = (r + len(used) / len(values)) * math.sqrt(pairs)
    p_value = math.erfc(abs(z) / math.sqrt(2))
    return SerialCorrelation(r, z, p_value, p_value < alpha)


@dataclass(frozen=True)
class RepetitionTest:
    """Cards at the same position as in the previous shoe: ``matches`` of ``compared``
    positions, against ``rate`` (two independent shoes), one-sided (only too many is odd)."""

    matches: int
    compared: int
    rate: float
    z: float
    p_value: float
    flagged: bool

    @property
    def expected(self) -> float:
        return self.compared * self.rate


def repetition_test(
    matches: int, compared: int, rate: float, *, alpha: float = 0.05
) -> RepetitionTest | None:
    """The normal approximation to the binomial upper tail; ``None`` when fewer than five
    matches are expected (too few positions compared for the approximation)."""
    if not 0 < rate < 1 or compared * rate < 5:
        return None
    z = _binomial_z(matches, compared, rate)
    p_value = 0.5 * math.erfc(z / math.sqrt(2))
    return RepetitionTest(matches, compared, rate, z, p_value, p_value < alpha)
