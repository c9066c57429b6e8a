"""Paired 0/1 comparisons: McNemar, Agresti–Min, Tango, equivalence; the paired bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from seq.errors import SeqInputError
from seq.stats.intervals import wilson_interval
from seq.stats.paired import (
    DifferenceInterval,
    PairedTable,
    agreeing_pairs_needed,
    agresti_min_interval,
    check_threshold,
    mcnemar_exact,
    paired_bootstrap_interval,
    paired_table,
    tango_equivalent,
    tango_interval,
    tango_scores,
    tango_statistic,
    usable_threshold,
    within_threshold,
)

Z95 = 1.959963984540054
# Cavo et al. (2012), worked in Fagerland, Lydersen & Laake (2017), Statistical Analysis of Contingency
# Tables, ch. 8: n11 = 59, n12 = 6, n21 = 16, n22 = 80. Their delta is A − B; ours is B − A.
CAVO = PairedTable(both=59, only_a=6, only_b=16, neither=80)


def test_paired_table_counts_each_kind_of_pair():
    a = [1, 1, 0, 0, 1, 0, 1]
    b = [1, 0, 1, 0, 1, 1, 0]
    table = paired_table(a, b)
    assert table == PairedTable(both=2, only_a=2, only_b=2, neither=1)
    assert table.n == 7 and table.discordant == 4 and table.difference == 0.0
    assert paired_table([0, 0, 1], [1, 1, 1]).difference == pytest.approx(2 / 3)


def test_paired_table_rejects_bad_input():
    with pytest.raises(ValueError, match="equal lengths"):
        paired_table([1, 0], [1])
    with pytest.raises(ValueError, match="0/1"):
        paired_table([1, 0.5], [1, 0])
    assert paired_table([], []).n == 0


@pytest.mark.parametrize(
    "only_a,only_b", [(0, 0), (0, 1), (3, 3), (2, 9), (9, 2), (0, 12), (17, 30), (40, 61)]
)
def test_mcnemar_exact_matches_scipy_binomtest(only_a, only_b):
    table = PairedTable(5, only_a, only_b, 7)
    expected = 1.0 if only_a + only_b == 0 else stats.binomtest(only_b, only_a + only_b, 0.5).pvalue
    assert mcnemar_exact(table) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_exact_published_example():
    # Fagerland et al. (2017): "The McNemar exact conditional test: P = 0.052479"
    assert mcnemar_exact(CAVO) == pytest.approx(0.052479, abs=5e-7)


def closed_form_agresti_min(b: int, c: int, n: int, z: float = Z95) -> tuple[float, float]:
    p12, p21 = (b + 0.5) / (n + 2), (c + 0.5) / (n + 2)
    d = p21 - p12
    half = z * math.sqrt((p12 + p21 - d * d) / (n + 2))
    return d - half, d + half


@pytest.mark.parametrize(
    "table", [PairedTable(10, 3, 8, 9), PairedTable(0, 5, 0, 5), PairedTable(40, 1, 1, 40)]
)
def test_agresti_min_matches_closed_form(table):
    interval = agresti_min_interval(table)
    low, high = closed_form_agresti_min(table.only_a, table.only_b, table.n)
    assert (interval.low, interval.high) == pytest.approx((max(low, -1), min(high, 1)), abs=1e-12)
    assert interval.difference == pytest.approx(table.difference)
    assert interval.method == "agresti-min" and interval.n == table.n


def test_agresti_min_published_example():
    # Fagerland et al. (2017), Wald with Agresti-Min adjustment: -0.1182 to -0.0045 for A − B
    interval = agresti_min_interval(CAVO)
    assert interval.difference == pytest.approx(10 / 161)
    assert interval.low == pytest.approx(0.0045, abs=5e-5)
    assert interval.high == pytest.approx(0.1182, abs=5e-5)


def test_agresti_min_needs_38_agreeing_pairs_for_005():
    for n in range(1, 38):
        assert not within_threshold(agresti_min_interval(PairedTable(n, 0, 0, 0)), 0.05), n
    interval = agresti_min_interval(PairedTable(38, 0, 0, 0))
    assert interval.high == pytest.approx(Z95 / 40) and within_threshold(interval, 0.05)
    assert agreeing_pairs_needed("agresti-min", 0.05) == 38
    assert agreeing_pairs_needed("agresti-min", 0.10) == math.floor(Z95 / 0.10 - 2) + 1


def test_tango_published_example():
    # Fagerland et al. (2017): "Tango asymptotic score CI: estimate = -0.0621 (95% CI -0.1240 to -0.0054)"
    interval = tango_interval(CAVO)
    assert interval.difference == pytest.approx(0.0621, abs=5e-5)
    assert interval.low == pytest.approx(0.0054, abs=5e-5)
    assert interval.high == pytest.approx(0.1240, abs=5e-5)
    assert interval.method == "tango"


def brute_force_score(table: PairedTable, delta: float) -> float:
    """Score statistic with the constrained MLE found numerically, not by Tango's closed form."""
    n, b, c = table.n, table.only_a, table.only_b
    m = table.both + table.neither

    def negative_log_likelihood(q_a: float) -> float:  # q_b = q_a + delta, concordant 1 − q_a − q_b
        q_b, rest = q_a + delta, 1 - 2 * q_a - delta
        return -(b * math.log(q_a) + c * math.log(q_b) + (m * math.log(rest) if m else 0.0))

    lower, upper = max(0.0, -delta) + 1e-13, (1 - delta) / 2 - 1e-13
    q_a = optimize.minimize_scalar(negative_log_likelihood, bounds=(lower, upper), method="bounded").x
    q_a = q_a if m else upper  # with no concordant pair the likelihood climbs to the edge
    return (c - b - n * delta) / math.sqrt(n * (2 * q_a + delta * (1 - delta)))


@pytest.mark.parametrize(
    "table", [PairedTable(20, 4, 11, 15), PairedTable(3, 7, 2, 1), PairedTable(50, 0, 6, 30)]
)
def test_tango_matches_brute_force_score_inversion(table):
    grid = np.linspace(-0.999, 0.999, 1999)
    accepted = [d for d in grid if abs(brute_force_score(table, d)) <= Z95]
    interval = tango_interval(table)
    assert interval.low == pytest.approx(min(accepted), abs=1e-3)
    assert interval.high == pytest.approx(max(accepted), abs=1e-3)
    for delta in (-0.3, 0.0, 0.2):
        assert tango_statistic(table, delta) == pytest.approx(
            brute_force_score(table, delta), rel=1e-4, abs=1e-6
        )


def test_tango_at_zero_is_mcnemar_z():
    table = PairedTable(11, 5, 14, 9)
    assert tango_statistic(table, 0.0) == pytest.approx((14 - 5) / math.sqrt(19))


def test_tango_all_agreeing_is_wilson_bound_and_needs_73_pairs():
    for n in (10, 72, 73, 200):
        interval = tango_interval(PairedTable(n, 0, 0, 0))
        bound = wilson_interval(0, n).high  # z²/(n + z²)
        assert interval.high == pytest.approx(bound, abs=1e-9)
        assert interval.low == pytest.approx(-bound, abs=1e-9)
    assert not within_threshold(tango_interval(PairedTable(72, 0, 0, 0)), 0.05)
    assert within_threshold(tango_interval(PairedTable(73, 0, 0, 0)), 0.05)
    assert agreeing_pairs_needed("tango", 0.05) == 73 == math.floor(Z95**2 * 0.95 / 0.05) + 1
    assert agreeing_pairs_needed("tango") > agreeing_pairs_needed("agresti-min")


def test_intervals_flip_when_a_and_b_swap():
    table, swapped = PairedTable(9, 3, 12, 6), PairedTable(9, 12, 3, 6)
    for method in (agresti_min_interval, tango_interval):
        forward, backward = method(table), method(swapped)
        assert (forward.low, forward.high) == pytest.approx((-backward.high, -backward.low), abs=1e-9)


def test_tango_edges_and_empty():
    all_b = PairedTable(0, 0, 10, 0)  # every pair: only B succeeds
    interval = tango_interval(all_b)
    grid = np.linspace(-0.999, 0.999, 1999)
    accepted = [d for d in grid if abs(brute_force_score(all_b, d)) <= Z95]
    assert interval.difference == 1.0 and interval.high == 1.0
    assert interval.low == pytest.approx(min(accepted), abs=1e-3)
    empty = tango_interval(PairedTable(0, 0, 0, 0))
    assert math.isnan(empty.difference) and math.isnan(empty.low)
    assert math.isnan(agresti_min_interval(PairedTable(0, 0, 0, 0)).low)


def test_within_threshold():
    assert within_threshold(DifferenceInterval(0.0, -0.04, 0.049, 100, "x"))
    assert not within_threshold(DifferenceInterval(0.0, -0.04, 0.05, 100, "x"))
    assert not within_threshold(DifferenceInterval(0.0, -0.06, 0.01, 100, "x"))
    assert within_threshold(DifferenceInterval(0.0, -0.06, 0.01, 100, "x"), threshold=0.1)
    assert not within_threshold(DifferenceInterval(math.nan, math.nan, math.nan, 0, "x"))
    with pytest.raises(ValueError):
        agreeing_pairs_needed("wald")


def test_paired_bootstrap_interval_of_the_mean_difference():
    rng = np.random.default_rng(3)
    a = rng.normal(1.0, 1.0, 60)
    b = a + 0.5 + rng.normal(0, 0.2, 60)  # strongly paired: the difference is tight
    interval = paired_bootstrap_interval(a, b)
    assert interval.method == "paired-bootstrap-bca"
    assert interval.difference == pytest.approx(float(np.mean(b - a)))
    assert interval.low < interval.difference < interval.high
    assert 0.4 < interval.low and interval.high < 0.6
    assert interval == paired_bootstrap_interval(list(a), list(b))  # fixed seed


def test_paired_bootstrap_degenerate_cases():
    constant = paired_bootstrap_interval([1.0, 2.0, 3.0], [1.5, 2.5, 3.5])
    assert constant.method == "paired-bootstrap (all values equal)"
    assert constant.low == constant.high == constant.difference == pytest.approx(0.5)
    single = paired_bootstrap_interval([1.0], [2.0])
    assert single.method == "none (n=1)" and math.isnan(single.low)
    with pytest.raises(ValueError):
        paired_bootstrap_interval([1.0], [1.0, 2.0])


def test_tango_scores_over_arrays_match_each_table():
    b, c = np.array([0, 3, 7, 0, 12]), np.array([0, 9, 2, 40, 12])
    n = 40
    scores = tango_scores(b, c, n, 0.05)
    for i in range(len(b)):
        table = PairedTable(0, int(b[i]), int(c[i]), n - int(b[i] + c[i]))
        assert scores[i] == pytest.approx(tango_statistic(table, 0.05), rel=1e-12)
        assert bool(tango_equivalent(b[i], c[i], n)) == within_threshold(tango_interval(table))


@pytest.mark.parametrize("value", [-1, 0, 0.0, 1, 1.5, math.nan, math.inf, "abc", None, True])
def test_a_threshold_must_lie_strictly_between_0_and_1(value):
    with pytest.raises(SeqInputError, match="--threshold must be a number between 0 and 1"):
        check_threshold(value)
    assert usable_threshold(value) is None


def test_a_good_threshold_is_a_float():
    assert check_threshold(0.05) == 0.05 and check_threshold("0.1") == 0.1
    assert usable_threshold(0.02) == 0.02
    assert not within_threshold(DifferenceInterval(0.0, -0.01, 0.01, 100, "x"), None)
    with pytest.raises(ValueError, match="threshold"):
        agreeing_pairs_needed("tango", 0.0)  # instead of searching for ever
