"""Confidence intervals for one group of episodes.

- A 0/1 metric (success): the Wilson score interval,
  p̂ ± z·sqrt(p̂(1−p̂)/n + z²/4n²) recentred at (p̂ + z²/2n)/(1 + z²/n), divided by (1 + z²/n)
  (Wilson 1927; Brown, Cai & DasGupta 2001), as `scipy.stats.binomtest(...).proportion_ci` gives it.
- Any other metric: the bias-corrected and accelerated (BCa) bootstrap of the mean (Efron 1987),
  via `scipy.stats.bootstrap`, with a fixed random state so a report is reproducible; where BCa is
  degenerate (too few distinct values) the percentile bootstrap is used instead. Where every value
  is equal every resample is the same: the interval has zero width, and its method says so
  (`bootstrap (all values equal)`) rather than pass for a percentile bootstrap.

Which of the two a metric gets is the metric's kind (`seq.stats.kinds`), fixed for a whole eval,
not decided group by group from the values.

Both are computed by `seq.stats.resampling` (numpy and the standard library, equal to scipy's),
so a report does not import `scipy.stats`, a second or more of a short eval's start-up.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np

from seq.stats.clusters import DesignEffect, clustering, design_effect_of, edge_guarded
from seq.stats.resampling import bootstrap_mean, wilson

SMALL_N = 10
CLUSTERED = " (clustered)"  # appended to a method whose interval counts conditions
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0
ALL_EQUAL = "bootstrap (all values equal)"


@dataclass(frozen=True)
class Interval:
    """A mean with its confidence interval, the method that gave it, and n."""

    mean: float
    low: float | None
    high: float | None
    n: int
    method: str
    level: float = 0.95
    conditions: int | None = None
    effective_n: float | None = None

    @property
    def clustered(self) -> bool:
        """Whether some condition holds several trials, so the interval counts conditions, not
        episodes (`seq.stats.clusters`)."""
        return self.conditions is not None and self.conditions < self.n

    @property
    def small_n(self) -> bool:
        """True where n is below 10: the interval is wide and its coverage approximate."""
        return self.n < SMALL_N


def is_binary(values: Sequence[float]) -> bool:
    """A metric is 0/1 when every value is exactly 0 or 1."""
    return len(values) > 0 and all(v in (0.0, 1.0) for v in values)


def wilson_interval(successes: int, n: int, level: float = 0.95) -> Interval:
    """Wilson score interval for a proportion of `successes` out of `n`."""
    if n <= 0:
        return Interval(math.nan, None, None, 0, "wilson", level)
    low, high = wilson(int(successes), int(n), level)
    return Interval(successes / n, max(0.0, low), min(1.0, high), n, "wilson", level)


_KEPT_INTERVALS = 4096
_kept: OrderedDict[tuple[bytes, float], Interval] = OrderedDict()
_kept_lock = threading.Lock()


def bootstrap_interval(values: Sequence[float], level: float = 0.95) -> Interval:
    """BCa bootstrap interval of the mean; the percentile bootstrap where BCa is degenerate.

    Kept by value: the seed is fixed, so the same values give the same interval, and a report asks
    for most twice (a group's row, then its comparison). The key is a digest of the values, not the
    values, so the kept intervals cost the same whatever n (a long-running console keeps them)."""
    data = np.ascontiguousarray(values, dtype=float).ravel()
    key = (hashlib.blake2b(data.tobytes(), digest_size=32).digest(), float(level))
    with _kept_lock:
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    interval = _computed_interval(data, level)
    with _kept_lock:
        _kept[key] = interval
        while len(_kept) > _KEPT_INTERVALS:
            _kept.popitem(last=False)
    return interval


def _computed_interval(data: np.ndarray, level: float) -> Interval:
    """The interval of `data`, computed: see `bootstrap_interval`."""
    n = len(data)
    if n == 0:
        return Interval(math.nan, None, None, 0, "bootstrap-bca", level)
    mean = float(data.mean())
    if n == 1:
        return Interval(mean, None, None, 1, "none (n=1)", level)
    if np.all(data == data[0]):
        return Interval(mean, mean, mean, n, ALL_EQUAL, level)
    for method in ("BCa", "percentile"):
        low, high = bootstrap_mean(data, level, method, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)
        if math.isfinite(low) and math.isfinite(high):
            return Interval(mean, low, high, n, "bootstrap-" + method.lower(), level)
    return Interval(mean, None, None, n, "bootstrap-percentile", level)


def metric_interval(values: Sequence[float], level: float = 0.95, kind: str | None = None) -> Interval:
    """Wilson for a rate (`kind="rate"`, every value 0 or 1), the bootstrap for a mean
    (`kind="mean"`); without a kind, Wilson where these values are all 0 or 1."""
    if kind is None:
        kind = "rate" if is_binary(values) else "mean"
    if kind == "rate":
        if len(values) and not is_binary(values):
            raise ValueError("a rate needs 0/1 values; seq.stats.kinds makes such a metric a mean")
        return wilson_interval(int(sum(values)), len(values), level)
    if kind != "mean":
        raise ValueError(f"kind must be 'rate' or 'mean', got {kind!r}")
    return bootstrap_interval(values, level)


def clustered_interval(
    values: Sequence[float],
    clusters: Sequence[Hashable],
    strata: Sequence[Hashable] | None = None,
    level: float = 0.95,
    kind: str | None = None,
) -> Interval:
    """`metric_interval` of values whose trials cluster in conditions (`clusters[i]`) within tasks
    (`strata[i]`): the interval of the effective sample (`seq.stats.clusters`).

    A rate: the Wilson interval of the pooled rate at the effective n = N/deff (the design-effect
    adjusted Wilson interval; Rao & Scott 1992, Biometrics 48:577–585, adjust counts the same way).
    A mean: the bootstrap interval of the episodes, each side's distance from the mean scaled by
    √deff. Exactly `metric_interval` where every condition holds one value; `conditions` and
    `effective_n` say what the interval rests on."""
    if len(values) != len(clusters):
        raise ValueError(f"values and clusters need equal lengths, got {len(values)} and {len(clusters)}")
    effect = design_effect_of(values, clustering(clusters, strata))
    return with_design_effect(metric_interval(values, level, kind), effect)


def with_design_effect(plain: Interval, effect: DesignEffect) -> Interval:
    """`plain`, the interval as if independent, widened by `effect` (for a rate near 0 or 1 from
    few conditions, by each condition counted once: `seq.stats.clusters.edge_guarded`)."""
    if plain.method == "wilson":
        effect = edge_guarded(effect, plain.mean)
    conditions, effective_n = effect.conditions, effect.effective_n
    if effect.deff == 1.0 or plain.n == 0:
        return replace(plain, conditions=conditions, effective_n=effective_n)
    method = plain.method + CLUSTERED
    # k conditions in T tasks estimate the variance with k − T degrees of freedom: Student's
    # quantile for the normal one (the df-adjusted effective n of Korn & Graubard 1998).
    quantile = _quantile(plain.level, effect.df)
    if plain.method == "wilson":
        successes = plain.mean * effect.effective_n
        low, high = wilson(successes, effect.effective_n, plain.level, quantile)
        return replace(
            plain,
            low=max(0.0, low),
            high=min(1.0, high),
            method=method,
            conditions=conditions,
            effective_n=effective_n,
        )
    if plain.low is None or plain.high is None or plain.method == ALL_EQUAL:
        return replace(plain, conditions=conditions, effective_n=effective_n)
    scale = math.sqrt(effect.deff) * quantile / _quantile(plain.level, math.inf)
    low = plain.mean - (plain.mean - plain.low) * scale
    high = plain.mean + (plain.high - plain.mean) * scale
    return replace(plain, low=low, high=high, method=method, conditions=conditions, effective_n=effective_n)


def _quantile(level: float, df: float) -> float:
    """The two-sided `level` quantile of Student's t with `df` degrees of freedom; the normal's
    where `df` is infinite."""
    upper = 1 - (1 - level) / 2
    if not math.isfinite(df):
        return NormalDist().inv_cdf(upper)
    from scipy.special import stdtrit

    return float(stdtrit(df, upper))
