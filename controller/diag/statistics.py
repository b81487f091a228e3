"""Wheel-bias statistics, pure (regulatory R5, R17, R24): no I/O, no SciPy.

R24 (a regulator's wheel-bias rules as reported): every number's frequency within **3σ** of
its expectation, a **χ² goodness-of-fit test against uniform at risk level 0.025**, and a
**serial-correlation** test. R5 asks 95 % confidence of a shuffler's χ², i.e. the same test at
0.05. Here:

* frequency: count ``c`` of each pocket over ``n`` spins on ``k`` pockets, expectation
  ``n/k``, binomial σ = √(n·p·(1−p)) with p = 1/k; flagged when ``|c − n/k| > 3σ``;
* χ² = Σ (c − n/k)² / (n/k) with k − 1 degrees of freedom; its p-value is the upper tail
  Q(k/2 − ½, χ²/2) of the regularised incomplete gamma function, computed below with the
  series / continued-fraction pair (Numerical Recipes §6.2), accurate to ~1e-12;
* lag-1 serial correlation r₁ of the sequence (as numbers and as positions round the wheel);
  under independence r₁ ≈ N(−1/n, 1/n), so z = (r₁ + 1/n)·√n and a two-sided p-value.

A flag means "look at this wheel", not "the wheel is biased": with 37 numbers, about one in 370
fair windows flags some number at 3σ by chance.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "BiasReport",
    "NumberFrequency",
    "SerialCorrelation",
    "analyse_counts",
    "analyse_spins",
    "chi2_sf",
    "gamma_q",
    "serial_correlation",
]

Pocket = int | str

_EPS = 1e-15
_TINY = 1e-300
_MAX_ITER = 10_000


def gamma_q(a: float, x: float) -> float:
    """Regularised upper incomplete gamma Q(a, x) = Γ(a, x) / Γ(a), for a > 0, x ≥ 0.

    The series converges fast for x < a + 1 and the continued fraction for x ≥ a + 1, so each
    is used where it is good (and Q = 1 − P on the series side).
    """
    if a <= 0:
        raise ValueError(f"gamma_q needs a > 0, not {a}")
    if x < 0 or math.isnan(x):
        raise ValueError(f"gamma_q needs x >= 0, not {x}")
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
        raise ValueError(f"chi-square needs dof >= 1, not {dof}")
    return gamma_q(dof / 2, max(0.0, x) / 2)


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
        raise ValueError("need at least two pockets")
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
