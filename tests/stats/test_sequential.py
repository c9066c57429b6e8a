"""Group-sequential McNemar test (Lan–DeMets O'Brien–Fleming spending) and the anytime e-process."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from seq.stats.paired import PairedTable, tango_interval
from seq.stats.sequential import (
    ScoreWalk,
    SequentialDesign,
    decide,
    e_process,
    fixed_pairs,
    inflation_factor,
    obrien_fleming_spending,
    sequential_test,
    simulate,
    spending_boundaries,
)

ALPHA = 0.05
RUNS = 2000
MC_ERROR = 2 * math.sqrt(ALPHA * (1 - ALPHA) / RUNS)  # two standard errors of a rejection rate


def test_spending_function():
    assert obrien_fleming_spending(0.0) == 0.0
    assert obrien_fleming_spending(1.0) == pytest.approx(ALPHA)
    values = [obrien_fleming_spending(t) for t in np.linspace(0.05, 1, 20)]
    assert all(x < y for x, y in zip(values, values[1:], strict=False))
    # each side: 2 - 2 Phi(z_{1-alpha/4} / sqrt(t))
    assert obrien_fleming_spending(0.5) == pytest.approx(
        2 * (2 - 2 * stats.norm.cdf(stats.norm.isf(0.0125) / math.sqrt(0.5)))
    )


# Lan-DeMets O'Brien-Fleming-type boundaries, equally spaced, two-sided alpha = 0.05 (alpha/2 per side),
# as tabulated by gsDesign (sfLDOF) and ldbounds.
PUBLISHED = {
    3: [3.7103, 2.5114, 1.9930],
    4: [4.3326, 2.9631, 2.3590, 2.0141],
    5: [4.8769, 3.3570, 2.6803, 2.2898, 2.0310],
}


@pytest.mark.parametrize("looks", sorted(PUBLISHED))
def test_boundaries_match_published_values(looks):
    times = np.arange(1, looks + 1) / looks
    assert spending_boundaries(times, times) == pytest.approx(PUBLISHED[looks], abs=6e-4)


def test_boundaries_against_multivariate_normal_with_unequal_information():
    # Information (discordant pairs) need not follow the spending time (pairs): check the exit
    # probabilities of the recursion with scipy's multivariate normal CDF.
    info = np.array([13.0, 30.0, 41.0, 66.0])
    times = np.array([0.2, 0.45, 0.7, 1.0])
    c = spending_boundaries(info, times)
    corr = np.sqrt(np.minimum.outer(info, info) / np.maximum.outer(info, info))
    rng = np.random.default_rng(0)
    for k in range(1, len(info) + 1):
        stayed = stats.multivariate_normal.cdf(
            c[:k], mean=np.zeros(k), cov=corr[:k, :k], lower_limit=-c[:k], abseps=1e-6, releps=1e-6, rng=rng
        )
        assert 1 - stayed == pytest.approx(obrien_fleming_spending(times[k - 1]), abs=2e-5)


def test_power_recursion_against_multivariate_normal():
    looks = 5
    times = np.arange(1, looks + 1) / looks
    c = spending_boundaries(times, times)
    theta = math.sqrt(inflation_factor(looks)) * (stats.norm.isf(ALPHA / 2) + stats.norm.ppf(0.8))
    walk, rejected = ScoreWalk(drift=theta), 0.0
    for t, ck in zip(times, c, strict=True):
        upper, lower = walk.crossing(t, ck)
        rejected += upper + lower
        walk.advance(t, ck)
    assert rejected == pytest.approx(0.8, abs=1e-6)
    corr = np.sqrt(np.minimum.outer(times, times) / np.maximum.outer(times, times))
    stayed = stats.multivariate_normal.cdf(
        c,
        mean=theta * np.sqrt(times),
        cov=corr,
        lower_limit=-c,
        abseps=1e-7,
        releps=1e-7,
        rng=np.random.default_rng(1),
    )
    assert 1 - stayed == pytest.approx(0.8, abs=5e-5)


def test_inflation_factor():
    assert inflation_factor(1) == pytest.approx(1.0, abs=1e-5)
    assert 1.02 < inflation_factor(5) < 1.03
    assert inflation_factor(10) > inflation_factor(5) > inflation_factor(2)


def test_fixed_pairs_is_connors_formula():
    n = fixed_pairs(0.10, 0.5)
    z = stats.norm.isf(0.025)

    def power(m: int) -> float:  # the normal approximation, Connor (1987)
        return special.ndtr((m**0.5 * 0.1 - z * 0.5**0.5) / (0.5 - 0.01) ** 0.5)

    assert power(n) >= 0.8 > power(n - 1)
    assert n == 391
    with pytest.raises(ValueError):
        fixed_pairs(0.3, 0.2)


def test_design_horizon_and_looks():
    design = SequentialDesign()
    assert design.horizon == math.ceil(391 * inflation_factor(5)) == 401
    assert design.look_pairs == (81, 161, 241, 321, 401)
    assert SequentialDesign(max_pairs=100, looks=4).look_pairs == (25, 50, 75, 100)
    assert SequentialDesign(effect=0.2, discordance=0.3).horizon < design.horizon
    with pytest.raises(ValueError):
        SequentialDesign(max_pairs=3, looks=5)
    with pytest.raises(ValueError):
        SequentialDesign(effect=0.6)


def test_before_the_first_look_it_continues():
    result = sequential_test([1, 0] * 10, [1, 1] * 10, SequentialDesign())
    assert result.decision == "continue" and result.look == 0 and result.pairs_used == 0
    assert result.next_look == 81


def test_a_clear_winner_stops_at_the_first_look():
    design = SequentialDesign()
    a, b = [0] * 30 + [1] * 51, [1] * 30 + [1] * 51  # 30 discordant pairs, all for B
    result = sequential_test(a, b, design)
    assert result.decision == "B better" and result.look == 1 and result.pairs_used == 81
    assert result.statistic == pytest.approx(math.sqrt(30))
    first = stats.norm.isf(obrien_fleming_spending(81 / 401) / 2)  # t = 81/401, close to 4.877 at t = 0.2
    assert result.boundary == pytest.approx(first, abs=1e-9) and 4.8 < first < 4.9
    assert result.next_look is None
    fixed = tango_interval(PairedTable(51, 0, 30, 0))
    assert 0 < result.interval.low and result.interval.low < fixed.low  # the repeated CI is wider
    assert result.interval.method == "repeated-ci-tango" and result.interval.level == 0.95
    assert sequential_test(b, a, design).decision == "A better"


def test_pairs_past_the_last_look_wait_and_pairs_past_the_horizon_are_ignored():
    design = SequentialDesign(max_pairs=40, looks=2)
    a, b = [1] * 20 + [0] * 30, [1] * 20 + [1] * 30  # B wins every pair after the 20th
    early = sequential_test(a[:39], b[:39], design)
    assert (
        early.decision == "continue" and early.look == 1 and early.pairs_used == 20 and early.next_look == 40
    )
    assert math.isnan(early.statistic)  # no discordant pair yet: nothing tested
    late = sequential_test(a, b, design)
    assert late.decision == "B better" and late.pairs_used == 40 and late.look == 2


def test_all_agreeing_pairs_reach_the_horizon_undecided_not_no_difference():
    design = SequentialDesign(max_pairs=100, looks=4)
    result = sequential_test([1, 0] * 50, [1, 0] * 50, design)
    assert result.decision == "undecided (not significant)" and result.look == 4 and result.pairs_used == 100
    assert -0.05 < result.interval.low < 0 < result.interval.high < 0.05


def test_decide_matches_the_boundaries_at_observed_information():
    design = SequentialDesign(max_pairs=300, looks=3)
    tables = [PairedTable(40, 20, 24, 16), PairedTable(80, 41, 50, 29), PairedTable(120, 60, 80, 40)]
    result = decide(tables, design)
    info = [44, 91, 140]
    c = spending_boundaries(info, [1 / 3, 2 / 3, 1.0])
    z = [(t.only_b - t.only_a) / math.sqrt(t.discordant) for t in tables]
    assert all(abs(zk) < ck for zk, ck in zip(z, c, strict=True))
    assert result.decision == "undecided (not significant)" and result.boundary == pytest.approx(c[-1])
    assert result.statistic == pytest.approx(z[-1])


def test_null_rejection_rate_is_at_most_alpha():
    design = SequentialDesign()
    summary = simulate(design, 0.5, 0.5, runs=RUNS, seed=11)
    print(
        f"\nnull (0.5 vs 0.5, psi 0.5): rejection {summary.rejection_rate:.4f}, "
        f"coverage {summary.coverage:.4f}"
    )
    assert summary.rejection_rate <= ALPHA + MC_ERROR
    assert summary.coverage >= 1 - ALPHA - MC_ERROR
    assert summary.mean_pairs > 0.95 * design.horizon  # under H0 it almost always runs to the horizon


def test_null_rejection_rate_with_few_discordant_pairs():
    summary = simulate(SequentialDesign(), 0.9, 0.9, discordance=0.08, runs=RUNS, seed=12)
    print(f"\nnull (0.9 vs 0.9, psi 0.08): rejection {summary.rejection_rate:.4f}")
    assert summary.rejection_rate <= ALPHA + MC_ERROR


def test_power_and_coverage_at_the_planned_effect():
    design = SequentialDesign()
    summary = simulate(design, 0.45, 0.55, runs=RUNS, seed=13)
    print(
        f"\nplanned effect 0.10: power {summary.rejection_rate:.4f}, coverage {summary.coverage:.4f}, "
        f"mean pairs {summary.mean_pairs:.1f} of {design.horizon}"
    )
    assert summary.rejection_rate >= 0.8 - 2 * math.sqrt(0.16 / RUNS)
    assert summary.b_better_rate == summary.rejection_rate  # never the wrong direction here
    assert summary.coverage >= 1 - ALPHA - MC_ERROR
    assert summary.mean_pairs < 0.85 * design.horizon


def test_e_process_is_the_beta_mixture_and_the_betting_wealth():
    a = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1]
    b = [0, 1, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1]
    result = e_process(a, b)
    wealth, wins, losses = 1.0, 0, 0
    for x, y in zip(a, b, strict=True):
        if x != y:
            sign = 1 if y else -1
            wealth *= 1 + sign * (wins - losses) / (wins + losses + 1.0)  # KT bet, prior 1/2
            wins, losses = wins + (sign > 0), losses + (sign < 0)
    assert result.e_value == pytest.approx(wealth)
    mixture = 2.0**7 * special.beta(wins + 0.5, losses + 0.5) / special.beta(0.5, 0.5)
    assert result.e_value == pytest.approx(mixture)
    assert result.pairs == 12 and result.discordant == 7 and not result.reject


def test_e_process_agreeing_pairs_change_nothing():
    result = e_process([1, 0, 1], [1, 0, 1])
    assert result.e_value == 1.0 and result.max_e_value == 1.0 and not result.reject
    assert e_process([], []).e_value == 1.0


def test_e_process_rejects_a_clear_difference_and_says_where():
    a, b = [0] * 40, [1] * 40
    result = e_process(a, b)
    assert result.reject and result.direction == "B better"
    assert e_process(b, a).direction == "A better"
    before = e_process(a[: result.rejected_at - 1], b[: result.rejected_at - 1])
    assert (
        before.max_e_value < 1 / ALPHA <= e_process(a[: result.rejected_at], b[: result.rejected_at]).e_value
    )


def test_e_process_null_rejection_rate_is_at_most_alpha():
    rng = np.random.default_rng(21)
    rejected = 0
    for _ in range(RUNS):
        a = rng.random(300) < 0.5
        b = np.where(rng.random(300) < 0.6, a, rng.random(300) < 0.5)  # correlated, equal rates
        rejected += e_process(a.astype(float), b.astype(float)).reject
    print(f"\ne-process null rejection over 300 pairs: {rejected / RUNS:.4f}")
    assert rejected / RUNS <= ALPHA + MC_ERROR


def test_e_process_power():
    rng = np.random.default_rng(22)
    cells = rng.choice(4, size=(200, 600), p=[0.3, 0.1, 0.3, 0.3])  # both, only A, only B, neither
    rejected = sum(
        e_process((c < 2).astype(float), ((c == 0) | (c == 2)).astype(float)).reject for c in cells
    )
    print(f"\ne-process power, difference 0.2 over 600 pairs: {rejected / 200:.3f}")
    assert rejected / 200 > 0.9
