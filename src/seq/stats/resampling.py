"""The bootstrap of a mean and the Wilson interval, in numpy and the standard library.

A report computes an interval for every metric of every group, and importing `scipy.stats` costs a
second or more of a short eval's start-up. These give what `scipy.stats.bootstrap` (BCa and
percentile, `random_state=` a seed) and `scipy.stats.binomtest(...).proportion_ci(method="wilson")`
give — the same resamples, the same formulas (Efron & Tibshirani 1993, 14.3 and 15.4; Wilson
1927) — and a test holds them equal to scipy's.

A large sample with few distinct values (step counts, returns of a sparse reward: 10,000 episodes
hold a few hundred values) is resampled as counts: how often each distinct value is drawn is
multinomial, the same distribution as drawing indices, at resamples × distinct values instead of
resamples × n. Those draws are not scipy's, so a test holds the intervals to scipy's within the
bootstrap's own Monte Carlo error instead.
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

import numpy as np

_NORMAL = NormalDist()


def _ndtri(p: float) -> float:
    """The standard normal quantile, ±inf at 0 and 1 and nan outside (as scipy's `ndtri`)."""
    if 0.0 < p < 1.0:
        return _NORMAL.inv_cdf(p)
    if p == 0.0:
        return -math.inf
    return math.inf if p == 1.0 else math.nan


def _ndtr(z: float) -> float:
    return math.nan if math.isnan(z) else _NORMAL.cdf(z)


def wilson(successes: float, n: float, level: float, z: float | None = None) -> tuple[float, float]:
    """The Wilson score interval of `successes` out of `n` (no continuity correction); an
    effective (non-integer) count is taken as it is. `z`: the quantile, where not the normal's at
    `level` (Student's, for an effective n whose variance was estimated)."""
    if z is None:
        z = _NORMAL.inv_cdf(1 - (1 - level) / 2)
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    return (centre - spread) / scale, (centre + spread) / scale


def _bca_levels(data: np.ndarray, means: np.ndarray, alpha: float) -> tuple[float, float]:
    """The BCa interval's two quantile levels: bias from the resampled means, acceleration from
    the jackknife."""
    theta = float(data.mean())
    below = np.count_nonzero(means < theta) + np.count_nonzero(means <= theta)
    z0 = _ndtri(below / (2 * len(means)))
    n = len(data)
    jackknife = (data.sum() - data) / (n - 1)  # the leave-one-out means
    spread = (n - 1) * (jackknife.mean() - jackknife)
    with np.errstate(divide="ignore", invalid="ignore"):
        accel = float(np.sum(spread**3) / n**3 / 6 / (np.sum(spread**2) / n**2) ** 1.5)
    z_alpha = _ndtri(alpha)
    levels = []
    for z in (z_alpha, -z_alpha):
        num = z0 + z
        with np.errstate(divide="ignore", invalid="ignore"):
            levels.append(_ndtr(z0 + num / (1 - accel * num)) if math.isfinite(z0) else math.nan)
    return levels[0], levels[1]


COUNTS_FROM = 1000  # n from which few distinct values are resampled as counts
_CHUNK = 1 << 22  # indices drawn at a time: 32 MB, whatever n
_KEPT = 1 << 20  # indices kept for the next group of the same size: up to 8 MB each


@functools.lru_cache(maxsize=8)
def _indices(n: int, resamples: int, seed: int) -> np.ndarray:
    """scipy's resampled indices for a sample of n: the same for every group of that size (the seed
    is fixed), so a report of many equal-sized groups draws them once."""
    indices = np.random.RandomState(seed).randint(0, n, (resamples, n), dtype=np.int64)
    indices.flags.writeable = False
    return indices


def _counted_means(values: np.ndarray, counts: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """[resamples] means of a sample of `counts` of each of `values`, resampled as multinomial
    counts, `_CHUNK` counts at a time (the same draws as all at once): 10^6 episodes of 250,000
    distinct values would otherwise hold 2000 × 250,000 counts, twice (4 GB each)."""
    n = int(counts.sum())
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    rows = max(1, _CHUNK // len(values))
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        means[start:stop] = rng.multinomial(n, counts / n, size=stop - start) @ values / n
    return means


def _resampled_means(data: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """[resamples] means of `data` resampled with replacement: scipy's draws (indices from
    `RandomState(seed)`, in chunks that draw the same numbers), or, for a large sample with few
    distinct values, the counts of each value."""
    n = len(data)
    if n >= COUNTS_FROM:
        values, counts = np.unique(data, return_counts=True)
        if 4 * len(values) <= n:
            return _counted_means(values, counts, resamples, seed)
    if resamples * n <= _KEPT:
        return data[_indices(n, resamples, seed)].mean(axis=-1)
    state = np.random.RandomState(seed)
    rows = max(1, _CHUNK // n)
    means = np.empty(resamples)
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        means[start:stop] = data[state.randint(0, n, (stop - start, n), dtype=np.int64)].mean(axis=-1)
    return means


def bootstrap_mean(
    data: np.ndarray, level: float, method: str, resamples: int, seed: int
) -> tuple[float, float]:
    """The `method` ("BCa" or "percentile") bootstrap interval of the mean of `data`; nan bounds
    where it is degenerate."""
    means = _resampled_means(data, resamples, seed)
    alpha = (1 - level) / 2
    low_level, high_level = _bca_levels(data, means, alpha) if method == "BCa" else (alpha, 1 - alpha)
    if math.isnan(low_level) or math.isnan(high_level):
        return math.nan, math.nan
    low, high = np.quantile(means, [low_level, high_level])
    return float(low), float(high)
