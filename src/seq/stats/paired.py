"""Paired comparisons: the same episodes (same task, seed and variation) run under policies A and B.

Every difference here is **B − A** (positive: B is better), in the metric's own units.

- 0/1 outcomes are summarised by their paired 2×2 table (`PairedTable`). McNemar's exact test
  conditions on the discordant pairs (McNemar 1947); Tango's score interval inverts the score test
  of the difference (Tango 1998); the Agresti–Min interval adds ½ to each cell before a Wald
  interval (Agresti & Min 2005).
- Equivalence: a difference is *within threshold* when its whole interval lies inside ±threshold
  (the interval form of two one-sided tests at 2.5 % each). The verdict uses Tango's interval:
  with the true difference exactly at the margin (±0.05), its chance of declaring equivalence is
  at most 2.49 % for every n from 20 to 200 and every discordance (exact enumeration,
  tests/stats/test_false_equivalence.py); the score test's discreteness lifts it to 2.55 % at some
  larger n (n = 284 and 587, with discordance at the margin itself). With every pair agreeing it
  first fits inside ±0.05 at n = 73. The Agresti–Min interval first fits at n = 38,
  but declares a difference at the margin equivalent 14.2 % of the time at n = 38 (5 % discordance),
  7.7 % at 50: it is reported beside Tango's, never used for the verdict.
- Any other metric: the BCa bootstrap of the mean paired difference (`paired_bootstrap_interval`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from seq.errors import SeqInputError
from seq.stats.clusters import DesignEffect, clustering, design_effect_of, edge_guarded
from seq.stats.intervals import bootstrap_interval, is_binary


@dataclass(frozen=True)
class PairedTable:
    """Counts of the four kinds of pair: both succeed, only A, only B, neither."""

    both: int
    only_a: int
    only_b: int
    neither: int

    @property
    def n(self) -> int:
        """Number of pairs."""
        return self.both + self.only_a + self.only_b + self.neither

    @property
    def discordant(self) -> int:
        """Pairs on which A and B disagree (only_a + only_b): all the information about B − A."""
        return self.only_a + self.only_b

    @property
    def difference(self) -> float:
        """rate(B) − rate(A) = (only_b − only_a)/n; NaN for an empty table."""
        return (self.only_b - self.only_a) / self.n if self.n else math.nan


@dataclass(frozen=True)
class DifferenceInterval:
    """A difference B − A with its confidence interval (low, high), the method that gave it, and n."""

    difference: float
    low: float
    high: float
    n: int
    method: str
    level: float = 0.95


def _z(level: float) -> float:
    from scipy import stats

    return float(stats.norm.isf((1 - level) / 2))


def paired_table(a: Sequence[float], b: Sequence[float]) -> PairedTable:
    """The paired 2×2 table of 0/1 outcomes; `a[i]` and `b[i]` are the same episode under A and B."""
    if len(a) != len(b):
        raise ValueError(f"paired outcomes need equal lengths, got {len(a)} and {len(b)}")
    if len(a) and not (is_binary(a) and is_binary(b)):
        raise ValueError("a paired table needs 0/1 outcomes")
    x, y = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    return PairedTable(int(np.sum(x & y)), int(np.sum(x & ~y)), int(np.sum(~x & y)), int(np.sum(~x & ~y)))


def mcnemar_exact(table: PairedTable) -> float:
    """McNemar's exact (conditional) test of equal rates, two-sided.

    Under H0 each of the D = only_a + only_b discordant pairs favours B with probability ½, so
    p = min(1, 2·P(X ≤ min(only_a, only_b))) with X ~ Binomial(D, ½); p = 1 when D = 0.
    McNemar (1947), Psychometrika 12:153–157; Fagerland, Lydersen & Laake (2013), BMC Med Res
    Methodol 13:91 (the exact conditional version).
    """
    d = table.discordant
    if d == 0:
        return 1.0
    from scipy import special, stats

    smaller = min(table.only_a, table.only_b)
    if float(smaller).is_integer() and float(d).is_integer():
        return float(min(1.0, 2.0 * stats.binom.cdf(smaller, d, 0.5)))
    # An effective (deflated) table: the binomial tail continued to real counts,
    # P(X ≤ k) = I_½(d − k, k + 1), the regularised incomplete beta function.
    return float(min(1.0, 2.0 * special.betainc(d - smaller, smaller + 1, 0.5)))


def pair_design_effect(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable],
    strata: Sequence[Hashable] | None = None,
) -> DesignEffect:
    """The design effect of the paired differences b − a, pair i in condition `clusters[i]` of
    task `strata[i]` (`seq.stats.clusters`): by how much clustered pairs overstate the evidence.
    Two rates both near 0 or 1 from few conditions count each condition once (`edge_guarded`)."""
    if not len(a) == len(b) == len(clusters):
        raise ValueError(f"one cluster per pair: {len(clusters)} clusters for {len(a)} and {len(b)} values")
    first, second = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    effect = design_effect_of(second - first, clustering(clusters, strata))
    if len(first) and np.isin(first, (0.0, 1.0)).all() and np.isin(second, (0.0, 1.0)).all():
        return edge_guarded(effect, float(first.mean()), float(second.mean()))
    return effect


def effective_table(table: PairedTable, deff: float) -> PairedTable:
    """The table's four cells divided by the design effect of its pairs (≥ 1): the counts that
    clustered pairs are worth (Rao & Scott 1992). Its cells are then real numbers, which
    `mcnemar_exact`, `tango_interval` and `agresti_min_interval` take as they are."""
    if deff == 1.0:
        return table
    return PairedTable(
        table.both / deff,  # type: ignore[arg-type]
        table.only_a / deff,  # type: ignore[arg-type]
        table.only_b / deff,  # type: ignore[arg-type]
        table.neither / deff,  # type: ignore[arg-type]
    )


def agresti_min_interval(table: PairedTable, level: float = 0.95) -> DifferenceInterval:
    """Agresti–Min interval for B − A: the Wald interval after adding ½ to each of the four cells.

    With b* = only_a + ½, c* = only_b + ½ and n* = n + 2:
    d* = (c* − b*)/n*, SE = sqrt((b* + c*) − (c* − b*)²/n*)/n*, interval d* ± z·SE clipped to
    [−1, 1]. `difference` is the observed (c − b)/n. Agresti & Min (2005), Stat Med 24:729–740.
    With every pair agreeing the interval is ±z/(n + 2): inside ±0.05 from n = 38.
    """
    n = table.n
    if n == 0:
        return DifferenceInterval(math.nan, math.nan, math.nan, 0, "agresti-min", level)
    b, c, n_star = table.only_a + 0.5, table.only_b + 0.5, n + 2.0
    centre = (c - b) / n_star
    se = math.sqrt(max((b + c) - (c - b) ** 2 / n_star, 0.0)) / n_star
    half = _z(level) * se
    return DifferenceInterval(
        table.difference, max(-1.0, centre - half), min(1.0, centre + half), n, "agresti-min", level
    )


def tango_scores(only_a: npt.ArrayLike, only_b: npt.ArrayLike, n: npt.ArrayLike, delta: float) -> np.ndarray:
    """Tango's score statistic T(δ) for H0: rate(B) − rate(A) = δ, over arrays of tables.

    With c = only_b, b = only_a and q the constrained maximum-likelihood estimate of P(only A),
    T(δ) = (c − b − nδ)/sqrt(n(2q + δ(1 − δ))), where q is the positive root of
    2n q² + (−b − c + (2n − c + b)δ) q − b δ(1 − δ) = 0. T(0) is McNemar's (c − b)/sqrt(b + c).
    Tango (1998), Stat Med 17:891–908, eqs. (3)–(5) (there written for A − B). Where the variance
    is 0, T is 0 for a zero numerator and ±∞ otherwise.
    """
    b, c, size = (np.asarray(x, dtype=float) for x in (only_a, only_b, n))
    qb = -b - c + (2 * size - c + b) * delta
    qc = -b * delta * (1 - delta)
    q = (-qb + np.sqrt(np.maximum(qb * qb - 8 * size * qc, 0.0))) / (4 * size)
    var = size * (2 * q + delta * (1 - delta))
    num = c - b - size * delta
    degenerate = np.where(num == 0, 0.0, np.copysign(np.inf, num))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(var > 0, num / np.sqrt(np.where(var > 0, var, 1.0)), degenerate)


def tango_statistic(table: PairedTable, delta: float) -> float:
    """`tango_scores` of one table."""
    return float(tango_scores(table.only_a, table.only_b, table.n, delta))


def tango_limits(table: PairedTable, z: float) -> tuple[float, float]:
    """The set {δ : |T(δ)| ≤ z} of `tango_statistic`, found by root finding (T decreases in δ)."""
    from scipy import optimize

    n, d = table.n, table.difference
    if n == 0:
        return math.nan, math.nan
    eps = 1e-12
    low = -1.0
    if d > -1 and tango_statistic(table, -1 + eps) > z:
        low = optimize.brentq(lambda x: tango_statistic(table, x) - z, -1 + eps, d, xtol=1e-12)
    high = 1.0
    if d < 1 and tango_statistic(table, 1 - eps) < -z:
        high = optimize.brentq(lambda x: tango_statistic(table, x) + z, d, 1 - eps, xtol=1e-12)
    return float(low), float(high)


def tango_interval(table: PairedTable, level: float = 0.95) -> DifferenceInterval:
    """Tango's score interval for B − A: the differences that the score test does not reject.

    {δ : |T(δ)| ≤ z}, T as in `tango_statistic`; Tango (1998), Stat Med 17:891–908. Worked example
    (Fagerland, Lydersen & Laake 2017, ch. 8): only_a = 6, only_b = 16, n = 161 → 0.0054 to 0.1240.
    With every pair agreeing it is ±z²/(n + z²): inside ±0.05 from n = 73.
    """
    low, high = tango_limits(table, _z(level))
    return DifferenceInterval(table.difference, low, high, table.n, "tango", level)


def tango_equivalent(
    only_a: npt.ArrayLike,
    only_b: npt.ArrayLike,
    n: npt.ArrayLike,
    threshold: float = 0.05,
    level: float = 0.95,
) -> np.ndarray:
    """Whether Tango's interval lies strictly inside (−threshold, +threshold), over arrays of tables.

    T decreases in δ, so the interval's upper end is below +threshold exactly when
    T(+threshold) < −z, and its lower end above −threshold exactly when T(−threshold) > z: the
    verdict of `within_threshold(tango_interval(...))` without root finding, cheap enough to
    enumerate every table of n pairs (the exact false-equivalence check in the tests).
    """
    z = _z(level)
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = tango_scores(only_a, only_b, n, threshold) < -z
        lower = tango_scores(only_a, only_b, n, -threshold) > z
    return upper & lower & (np.asarray(n) > 0)


def check_threshold(value: Any, option: str = "--threshold") -> float:
    """The equivalence margin as a float strictly between 0 and 1, or one sentence naming `option`.

    A margin of 0 or less can never be met, 1 or more always is, and NaN compares false with
    everything: each would make every "within threshold" verdict meaningless.
    """
    try:
        margin = float(value)
    except (TypeError, ValueError):
        margin = math.nan
    if isinstance(value, bool) or not 0 < margin < 1:
        raise SeqInputError(
            f"{option} must be a number between 0 and 1 (a difference in rate, such as 0.05), got {value!r}."
        )
    return margin


def usable_threshold(value: Any) -> float | None:
    """A stored margin if it is one `check_threshold` accepts, else None (records written before the
    check may hold -1, 0 or NaN: their reports give no equivalence verdict rather than fail)."""
    try:
        return check_threshold(value)
    except SeqInputError:
        return None


def within_threshold(interval: DifferenceInterval, threshold: float | None = 0.05) -> bool:
    """True when the whole interval lies strictly inside (−threshold, +threshold); never without a
    threshold (None: a stored margin that `usable_threshold` refused).

    The interval-inclusion form of the two one-sided tests (TOST) for equivalence: a (1 − 2α')
    interval inside the margin rejects both one-sided nulls at level α' (Schuirmann 1987,
    J Pharmacokinet Biopharm 15:657–680; Tango 1998 for the paired case).
    """
    low, high = interval.low, interval.high
    if threshold is None or not (math.isfinite(low) and math.isfinite(high)):
        return False
    return -threshold < low and high < threshold


def agreeing_pairs_needed(method: str = "agresti-min", threshold: float = 0.05, level: float = 0.95) -> int:
    """Smallest n at which n all-agreeing pairs give an interval inside ±threshold.

    Found by search over the interval itself; in closed form n > z/threshold − 2 for Agresti–Min
    (38 at 95%, ±0.05) and n > z²(1 − threshold)/threshold for Tango (73 at 95%, ±0.05).
    """
    intervals = {"agresti-min": agresti_min_interval, "tango": tango_interval}
    if method not in intervals:
        raise ValueError(f"method must be one of {sorted(intervals)}, got {method!r}")
    if not 0 < threshold < 1:
        raise ValueError(f"threshold must be between 0 and 1, got {threshold!r}")

    def fits(n: int) -> bool:
        return within_threshold(intervals[method](PairedTable(n, 0, 0, 0), level), threshold)

    high = 1
    while not fits(high):
        high *= 2
    low = high // 2  # fits(low) is False (or low = 0); the interval narrows as n grows
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if fits(mid) else (mid, high)
    return high


def paired_bootstrap_interval(
    a: Sequence[float], b: Sequence[float], level: float = 0.95
) -> DifferenceInterval:
    """BCa bootstrap interval of the mean paired difference mean(b − a) (Efron 1987, JASA 82:171–185).

    Resamples pairs (the per-episode differences d_i = b_i − a_i) with the fixed seed of
    `seq.stats.bootstrap_interval`; the percentile bootstrap where BCa is degenerate.
    """
    if len(a) != len(b):
        raise ValueError(f"paired values need equal lengths, got {len(a)} and {len(b)}")
    diffs = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    interval = bootstrap_interval(diffs, level)
    low = math.nan if interval.low is None else interval.low
    high = math.nan if interval.high is None else interval.high
    method = interval.method if interval.method.startswith("none") else "paired-" + interval.method
    return DifferenceInterval(interval.mean, low, high, interval.n, method, level)


def paired_t_interval(
    a: Sequence[float],
    b: Sequence[float],
    level: float = 0.95,
    clusters: Sequence[Hashable] | None = None,
) -> DifferenceInterval:
    """Student's t interval of the mean paired difference mean(b − a).

    Independent pairs: mean(d) ± t_{n−1} · s_d/√n (Student 1908), which keeps its coverage at
    small n (at n = 5 the bootstrap's verdicts fire 16–20 % of the time with no true difference).
    Pairs whose trials share a condition (`clusters[i]`): the cluster-robust form, the conditions'
    sums S_c of differences about the mean, SE² = k/(k − 1) · Σ_c (S_c − d̄·m_c)² / N², with
    Student's t at k − 1 degrees of freedom for k conditions — with equal trials, the t test of
    the conditions' mean differences (Donner & Klar 2000, *Design and Analysis of Cluster
    Randomization Trials*, §6.2). With one pair per condition the two are the same. None below
    two conditions; every difference equal: zero width."""
    if len(a) != len(b):
        raise ValueError(f"paired values need equal lengths, got {len(a)} and {len(b)}")
    diffs = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    n = len(diffs)
    mean = float(diffs.mean()) if n else math.nan
    layout = None if clusters is None else clustering(clusters)
    units = n if layout is None else layout.conditions
    if units < 2:
        return DifferenceInterval(mean, math.nan, math.nan, n, "none (fewer than 2 pairs)", level)
    if np.all(diffs == diffs[0]):
        return DifferenceInterval(mean, mean, mean, n, "paired-t (all differences equal)", level)
    from scipy import stats

    if layout is None or layout.singletons:
        se, method = float(diffs.std(ddof=1)) / math.sqrt(n), "paired-t"
    else:
        sums = np.bincount(layout.cluster_of, weights=diffs, minlength=units)
        residuals = sums - mean * layout.sizes
        se = math.sqrt(units / (units - 1) * float(np.sum(residuals**2))) / n
        method = "paired-t (clustered)"
    half = float(stats.t.isf((1 - level) / 2, units - 1)) * se
    return DifferenceInterval(mean, mean - half, mean + half, n, method, level)
