"""Across tasks: IQM with a stratified bootstrap, and the probability of improvement (rliable)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from seq.stats.across_tasks import (
    iqm,
    iqm_interval,
    probability_of_improvement,
    probability_of_improvement_interval,
)


def test_iqm_is_the_mean_of_the_middle_half():
    assert iqm([1, 2, 3, 4, 5, 6, 7, 8]) == pytest.approx(4.5)  # mean of 3, 4, 5, 6
    assert iqm([100, 1, 2, 3, 4, 5, 6, -50]) == pytest.approx(3.5)  # outliers dropped
    values = np.random.default_rng(0).random(37)
    assert iqm(values) == pytest.approx(stats.trim_mean(values, 0.25))
    assert math.isnan(iqm([]))


def test_iqm_interval_point_is_iqm_of_task_rates():
    scores = {"a": [1, 1, 1, 0], "b": [0, 0, 1, 0], "c": [1, 1, 1, 1], "d": [0, 1, 0, 1]}
    point, low, high = iqm_interval(scores, resamples=500)
    assert point == pytest.approx(iqm([0.75, 0.25, 1.0, 0.5]))
    assert low <= point <= high
    assert (point, low, high) == iqm_interval(dict(reversed(scores.items())), resamples=500)  # order-free
    assert (point, low, high) == iqm_interval(scores, resamples=500)  # seeded


def test_iqm_interval_is_stratified_by_task():
    # Every task is constant, so resampling episodes within tasks changes nothing; resampling tasks
    # (an unstratified bootstrap) would not give a zero-width interval.
    scores = {f"t{i}": [i / 10] * 8 for i in range(10)}
    point, low, high = iqm_interval(scores, resamples=300)
    assert low == high == pytest.approx(point)


def test_iqm_interval_covers_the_true_iqm():
    rng = np.random.default_rng(0)
    rates = np.linspace(0.2, 0.9, 10)
    truth = stats.trim_mean(rates, 0.25)
    covered = 0
    for run in range(150):
        scores = {f"t{i}": (rng.random(40) < p).astype(float) for i, p in enumerate(rates)}
        _, low, high = iqm_interval(scores, resamples=400, seed=run)
        covered += low <= truth <= high
    assert covered / 150 >= 0.88


def test_iqm_interval_needs_scores():
    with pytest.raises(ValueError):
        iqm_interval({"a": []})
    with pytest.raises(ValueError):
        iqm_interval({})


def test_probability_of_improvement_matches_mann_whitney():
    rng = np.random.default_rng(1)
    a = {"x": rng.normal(0, 1, 12), "y": rng.integers(0, 4, 9).astype(float)}
    b = {"x": rng.normal(0.5, 1, 15), "y": rng.integers(1, 5, 11).astype(float)}
    expected = np.mean(
        [stats.mannwhitneyu(b[t], a[t]).statistic / (len(a[t]) * len(b[t])) for t in ("x", "y")]
    )
    assert probability_of_improvement(a, b) == pytest.approx(expected)


def test_probability_of_improvement_binary_closed_form_and_symmetry():
    a = {"t": [1] * 3 + [0] * 7}
    b = {"t": [1] * 6 + [0] * 4}
    pa, pb = 0.3, 0.6
    expected = pb * (1 - pa) + 0.5 * (pa * pb + (1 - pa) * (1 - pb))
    assert probability_of_improvement(a, b) == pytest.approx(expected)
    assert probability_of_improvement(b, a) == pytest.approx(1 - expected)
    assert probability_of_improvement(a, a) == pytest.approx(0.5)


def test_probability_of_improvement_needs_the_same_tasks():
    with pytest.raises(ValueError, match="same tasks"):
        probability_of_improvement({"a": [1.0]}, {"b": [1.0]})


def test_probability_of_improvement_interval():
    rng = np.random.default_rng(2)
    a = {f"t{i}": rng.normal(0, 1, 20) for i in range(5)}
    b = {f"t{i}": rng.normal(1, 1, 20) for i in range(5)}
    point, low, high = probability_of_improvement_interval(a, b, resamples=500)
    assert point == pytest.approx(probability_of_improvement(a, b))
    assert 0.5 < low < point < high <= 1.0
    assert (point, low, high) == probability_of_improvement_interval(a, b, resamples=500)
