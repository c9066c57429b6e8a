"""Confidence intervals: Wilson for 0/1 metrics, bootstrap for the rest."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from seq.stats.intervals import Interval, bootstrap_interval, is_binary, metric_interval, wilson_interval

Z95 = 1.959963984540054


def closed_form_wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize("k,n", [(8, 10), (3, 7), (50, 100), (1, 40)])
def test_wilson_matches_closed_form(k, n):
    interval = wilson_interval(k, n)
    low, high = closed_form_wilson(k, n)
    assert interval.mean == pytest.approx(k / n)
    assert interval.low == pytest.approx(low, abs=1e-9)
    assert interval.high == pytest.approx(high, abs=1e-9)
    assert interval.method == "wilson"
    assert interval.n == n


def test_wilson_known_value_8_of_10():
    interval = wilson_interval(8, 10)
    assert interval.low == pytest.approx(0.490, abs=1e-3)
    assert interval.high == pytest.approx(0.943, abs=1e-3)


def test_wilson_all_failures_and_all_successes():
    none = wilson_interval(0, 20)
    assert none.mean == 0.0 and none.low == pytest.approx(0.0, abs=1e-12)
    assert none.high == pytest.approx(closed_form_wilson(0, 20)[1])
    assert 0.1 < none.high < 0.2
    every = wilson_interval(20, 20)
    assert every.mean == 1.0 and every.high == pytest.approx(1.0, abs=1e-12)
    assert every.low == pytest.approx(1 - none.high)


def test_wilson_empty():
    interval = wilson_interval(0, 0)
    assert math.isnan(interval.mean) and interval.low is None and interval.high is None and interval.n == 0


def test_is_binary():
    assert is_binary([0, 1, 1, 0.0, 1.0])
    assert not is_binary([0, 1, 0.5])
    assert not is_binary([2.0])
    assert not is_binary([])


def test_bootstrap_bca_contains_mean():
    values = [0.1, 0.5, 0.3, 0.9, 0.7, 0.2, 0.4, 0.8, 0.6, 0.35]
    interval = bootstrap_interval(values)
    assert interval.method == "bootstrap-bca"
    assert interval.mean == pytest.approx(sum(values) / len(values))
    assert interval.low < interval.mean < interval.high
    assert 0.1 <= interval.low and interval.high <= 0.9


def test_bootstrap_is_reproducible():
    values = [3.0, 1.5, 2.25, 7.0, 4.5, 0.5]
    assert bootstrap_interval(values) == bootstrap_interval(list(values))


def test_constant_data_says_its_zero_width_interval_is_not_a_percentile_bootstrap():
    interval = bootstrap_interval([100.0] * 20)
    assert interval.method == "bootstrap (all values equal)"
    assert interval.mean == interval.low == interval.high == 100.0


def test_bootstrap_single_value():
    interval = bootstrap_interval([4.0])
    assert interval.method == "none (n=1)"
    assert interval.mean == 4.0 and interval.low is None and interval.high is None


def test_metric_interval_dispatch():
    assert metric_interval([1, 0, 1, 1]).method == "wilson"
    assert metric_interval([1, 0, 1, 1]).mean == 0.75
    assert metric_interval([0.2, 0.9, 0.4, 0.6]).method.startswith("bootstrap")


def test_metric_interval_follows_the_kind_not_the_values():
    assert metric_interval([1.0] * 20, kind="rate") == wilson_interval(20, 20)
    assert metric_interval([1.0, 0.0, 1.0], kind="mean").method.startswith("bootstrap")
    assert metric_interval([1.0] * 20, kind="mean").method == "bootstrap (all values equal)"
    with pytest.raises(ValueError, match="0/1"):
        metric_interval([0.5, 1.0], kind="rate")
    with pytest.raises(ValueError, match="kind"):
        metric_interval([0.5, 1.0], kind="median")


def test_small_n_flag():
    assert Interval(0.5, 0.1, 0.9, 9, "wilson").small_n
    assert not Interval(0.5, 0.1, 0.9, 10, "wilson").small_n
    assert wilson_interval(3, 5).small_n and not wilson_interval(30, 50).small_n


def test_kept_intervals_do_not_keep_the_values():
    """A report's intervals are kept by value; what is kept must not grow with n, or a console
    serving large evals holds every group's episodes (4096 groups of 10^5 values: 3 GB)."""
    rng = np.random.default_rng(3)
    groups = [rng.integers(0, 3, 50_000).astype(float) for _ in range(20)]  # 400 kB each
    bootstrap_interval(groups[0])  # warm up imports and scipy-free caches
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for values in groups[1:]:
            bootstrap_interval(values)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 1_000_000, f"{kept} bytes kept for 19 intervals"
    assert bootstrap_interval(groups[5]) == bootstrap_interval(list(groups[5]))
