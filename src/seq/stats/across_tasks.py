"""Aggregates across tasks, after rliable (Agarwal, Schwarzer, Castro, Courville & Bellemare 2021,
"Deep Reinforcement Learning at the Edge of the Statistical Precipice", NeurIPS).

- The interquartile mean (IQM) of per-task rates: the mean of the middle 50% of the tasks' scores,
  robust to a few outlying tasks yet using more of them than the median.
- Its stratified bootstrap interval: episodes are resampled *within* each task (tasks are strata,
  never resampled), so the interval reflects episode noise on this fixed set of tasks.
- The probability of improvement P(B > A): per task, the chance that a random score of B beats a
  random score of A (ties count ½; the Mann–Whitney U statistic over n_a·n_b), averaged over tasks.

rliable pools runs × tasks; here a task's scores are its episodes and a task's rate is their mean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def iqm(values: Sequence[float]) -> float:
    """Interquartile mean: the mean after dropping ⌊n/4⌋ values from each end of the sorted list.

    IQM = (1/(n − 2g)) Σ_{i=g+1}^{n−g} x_(i), g = ⌊0.25·n⌋; `scipy.stats.trim_mean(x, 0.25)` as
    in rliable's `aggregate_iqm` (Agarwal et al. 2021, §4.2).
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return float("nan")
    from scipy import stats

    return float(stats.trim_mean(data, 0.25))


def _tasks(scores_by_task: Mapping[str, Sequence[float]]) -> list[np.ndarray]:
    tasks = [np.asarray(scores_by_task[name], dtype=float) for name in sorted(scores_by_task)]
    if not tasks or any(t.size == 0 for t in tasks):
        raise ValueError("every task needs at least one score")
    return tasks


def _resampled_means(scores: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """[resamples] means of `scores` resampled with replacement."""
    idx = rng.integers(0, scores.size, size=(resamples, scores.size))
    return scores[idx].mean(axis=1)


def iqm_interval(
    scores_by_task: Mapping[str, Sequence[float]], level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """IQM of per-task rates with a stratified percentile-bootstrap interval: (iqm, low, high).

    Point: IQM over tasks of r_t = mean(scores_t). Interval: for each of `resamples` draws,
    resample each task's scores with replacement (keeping its size), recompute every r_t and the
    IQM; the (1 − level)/2 and (1 + level)/2 quantiles of those IQMs (rliable's
    `get_interval_estimates`, stratified bootstrap, percentile method; Efron & Tibshirani 1993,
    ch. 13). Tasks are visited in name order, so a seed gives the same interval every time.
    """
    from scipy import stats

    tasks = _tasks(scores_by_task)
    point = iqm([t.mean() for t in tasks])
    rng = np.random.default_rng(seed)
    rates = np.column_stack([_resampled_means(t, resamples, rng) for t in tasks])  # [resamples, tasks]
    draws = stats.trim_mean(rates, 0.25, axis=1)
    low, high = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    return point, float(low), float(high)


def _paired_tasks(
    scores_a_by_task: Mapping[str, Sequence[float]], scores_b_by_task: Mapping[str, Sequence[float]]
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    if set(scores_a_by_task) != set(scores_b_by_task):
        missing = sorted(set(scores_a_by_task) ^ set(scores_b_by_task))
        raise ValueError(f"A and B need the same tasks; only one side has {missing}")
    return _tasks(scores_a_by_task), _tasks(scores_b_by_task)


def _beats(b: np.ndarray, a: np.ndarray) -> np.ndarray:
    """S(b_i, a_j) = 1 if b_i > a_j, ½ if equal, 0 otherwise, as a [len(b), len(a)] matrix."""
    return (b[:, None] > a[None, :]) + 0.5 * (b[:, None] == a[None, :])


def probability_of_improvement(
    scores_a_by_task: Mapping[str, Sequence[float]], scores_b_by_task: Mapping[str, Sequence[float]]
) -> float:
    """P(B > A): the mean over tasks of (1/(n_a·n_b)) Σ_i Σ_j S(b_i, a_j).

    S(x, y) = 1 if x > y, ½ if x = y, 0 otherwise: per task the Mann–Whitney U of B against A over
    n_a·n_b (Agarwal et al. 2021, §4.3; Mann & Whitney 1947). 0.5 means no improvement either way.
    """
    tasks_a, tasks_b = _paired_tasks(scores_a_by_task, scores_b_by_task)
    return float(np.mean([_beats(b, a).mean() for a, b in zip(tasks_a, tasks_b, strict=True)]))


def _resampled_counts(size: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """[resamples, size] how often each of `size` scores is drawn when resampling them with
    replacement: uniform multinomial counts, from drawn indices (a binomial per cell is slower)."""
    counts = np.empty((resamples, size))
    rows = max(1, (1 << 22) // size)
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        drawn = rng.integers(0, size, (stop - start, size)) + size * np.arange(stop - start)[:, None]
        counts[start:stop] = np.bincount(drawn.ravel(), minlength=(stop - start) * size).reshape(-1, size)
    return counts


def probability_of_improvement_interval(
    scores_a_by_task: Mapping[str, Sequence[float]],
    scores_b_by_task: Mapping[str, Sequence[float]],
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """`probability_of_improvement` with a stratified percentile-bootstrap interval: (p, low, high).

    Each draw resamples every task's A scores and B scores with replacement; with c_a, c_b the
    resampled counts of each score, a task's P(B > A) is c_bᵀ S c_a/(n_a·n_b) (Agarwal et al. 2021).
    """
    tasks_a, tasks_b = _paired_tasks(scores_a_by_task, scores_b_by_task)
    rng = np.random.default_rng(seed)
    total = np.zeros(resamples)
    for a, b in zip(tasks_a, tasks_b, strict=True):
        counts_a = _resampled_counts(a.size, resamples, rng)
        counts_b = _resampled_counts(b.size, resamples, rng)
        beaten = (counts_b @ _beats(b, a)) * counts_a  # c_bᵀ S, times c_a: BLAS
        total += beaten.sum(axis=1) / (a.size * b.size)
    draws = total / len(tasks_a)
    low, high = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    return probability_of_improvement(scores_a_by_task, scores_b_by_task), float(low), float(high)
