"""The report's intervals, computed without scipy, equal scipy's: Wilson and the BCa / percentile
bootstrap of a mean with the same seed."""

from __future__ import annotations

import math
import subprocess
import sys
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import stats

from seq.stats.resampling import COUNTS_FROM, bootstrap_mean, wilson


def _samples() -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    shapes = [
        lambda n: rng.normal(size=n),
        lambda n: rng.integers(0, 5, n).astype(float),  # ties, as step counts have
        lambda n: rng.exponential(size=n) * 100,
        lambda n: np.array([1.0] * (n - 1) + [2.0]),  # one distinct value out: BCa degenerates
    ]
    return [shape(int(n)) for n in rng.integers(2, 90, 40) for shape in shapes]


@pytest.mark.parametrize("method", ["BCa", "percentile"])
def test_the_bootstrap_equals_scipy_s(method):
    for data in _samples():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = stats.bootstrap(
                (data,), np.mean, confidence_level=0.95, method=method, n_resamples=2000, random_state=0
            ).confidence_interval
        mine = bootstrap_mean(data, 0.95, method, 2000, 0)
        for a, b in zip((theirs.low, theirs.high), mine, strict=True):
            assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-12)


def test_wilson_equals_scipy_s():
    for n in (1, 2, 7, 30, 199):
        for k in range(n + 1):
            theirs = stats.binomtest(k, n).proportion_ci(confidence_level=0.9, method="wilson")
            assert wilson(k, n, 0.9) == pytest.approx((theirs.low, theirs.high), abs=1e-12)


def test_a_report_does_not_import_scipy(tmp_path):
    code = (
        "import sys; from seq.stats import metric_interval; "
        "metric_interval([1, 0, 1]); metric_interval([0.5, 2.0, 3.5, 1.0]); "
        "print('scipy.stats' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("method", ["BCa", "percentile"])
def test_a_large_sample_of_few_values_is_resampled_as_counts_with_scipy_s_interval(method):
    """From COUNTS_FROM episodes, few distinct values are drawn as counts: other draws than
    scipy's, the same distribution, so the bounds agree within the bootstrap's Monte Carlo error
    (a quarter of the mean's standard error here; resampling indices is as far from scipy's with
    another seed)."""
    rng = np.random.default_rng(7)
    samples = [
        rng.integers(20, 200, 3000).astype(float),  # step counts
        np.where(rng.random(2000) < 0.8, 0.0, rng.integers(1, 4, 2000)).astype(float),  # sparse
        rng.integers(0, 2, 1500).astype(float),  # a 0/1 metric reported as a mean
    ]
    assert all(len(data) >= COUNTS_FROM and 4 * len(np.unique(data)) <= len(data) for data in samples)
    for data in samples:
        theirs = stats.bootstrap(
            (data,), np.mean, method=method, n_resamples=2000, random_state=0, batch=200
        ).confidence_interval
        standard_error = data.std() / math.sqrt(len(data))
        mine = bootstrap_mean(data, 0.95, method, 2000, 0)
        assert mine[0] < data.mean() < mine[1]
        assert abs(mine[0] - theirs.low) < 0.25 * standard_error
        assert abs(mine[1] - theirs.high) < 0.25 * standard_error


def test_counts_of_many_distinct_values_are_drawn_in_bounded_memory():
    """Resampled as counts, 200,000 episodes of 50,000 distinct values (a return to the cent) hold
    resamples × 50,000 counts: drawn a bounded chunk at a time, with the same draws."""
    data = np.random.default_rng(1).integers(0, 50_000, 200_000).astype(float)
    tracemalloc.start()
    try:
        low, high = bootstrap_mean(data, 0.95, "percentile", 200, 0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 110e6, f"{peak / 1e6:.0f} MB at the peak"  # all at once: 160 MB
    values, counts = np.unique(data, return_counts=True)
    drawn = np.random.default_rng(0).multinomial(len(data), counts / len(data), size=200) @ values
    assert (low, high) == tuple(np.quantile(drawn / len(data), [0.025, 0.975]))
