"""The report's intervals, computed without scipy, equal scipy's: Wilson and the BCa / percentile
bootstrap of a mean with the same seed."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import stats

from seq.stats.resampling import bootstrap_mean, wilson


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
