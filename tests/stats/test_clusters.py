"""Clustered intervals and comparisons: trials of one condition are worth what the design effect says.

The reduction to the independent methods with one trial per condition is exact; a benchmark whose
outcome the trial cannot change counts its conditions, not its episodes; the ANOVA intra-class
correlation agrees with scipy's F statistic and with a least-squares fit; and a seeded simulation
shows the clustered interval covering where the naive one does not.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from seq.stats import clustered_interval, compare_paired, design_effect, metric_interval, wilson_interval


def bounds(interval) -> tuple:
    return interval.mean, interval.low, interval.high, interval.n, interval.method


def difference(result) -> tuple:
    d = result.difference
    return d.difference, d.low, d.high, d.n, d.method


def layout(conditions: int, trials: int, tasks: int = 1) -> tuple[list[int], list[int]]:
    """Each episode's condition and task: `conditions` conditions dealt round the tasks."""
    clusters = [c for c in range(conditions) for _ in range(trials)]
    return clusters, [c % tasks for c in clusters]


# ---- one trial per condition: exactly today's methods -----------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_one_trial_per_condition_gives_metric_intervals_bounds_and_method(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 120))
    clusters = rng.permutation(n).tolist()  # every label once, in any order
    strata = rng.integers(0, 4, n).tolist()
    rates = (rng.random(n) < rng.random()).astype(float)
    values = rng.gamma(2.0, 3.0, n)
    for data, kind in ((rates, "rate"), (values, "mean")):
        clustered = clustered_interval(data, clusters, strata, kind=kind)
        assert bounds(clustered) == bounds(metric_interval(data, kind=kind))
        assert clustered.conditions == n and clustered.effective_n == n and not clustered.clustered
        assert bounds(clustered_interval(data, clusters, None, kind=kind)) == bounds(clustered)


@pytest.mark.parametrize("seed", range(8))
def test_one_trial_per_condition_compares_as_unclustered(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(5, 150))
    clusters = rng.permutation(n).tolist()
    strata = rng.integers(0, 3, n).tolist()
    a = (rng.random(n) < 0.6).astype(float)
    b = np.where(rng.random(n) < 0.2, 1 - a, a)
    x, y = rng.normal(0, 1, n), rng.normal(0.2, 1, n)
    for first, second, kind in ((a, b, "rate"), (x, y, "mean")):
        plain = compare_paired(first, second, kind=kind)
        clustered = compare_paired(first, second, kind=kind, clusters=clusters, strata=strata)
        assert clustered.verdict == plain.verdict
        assert difference(clustered) == difference(plain)
        assert clustered.p_value == plain.p_value and clustered.table == plain.table
        assert clustered.test == plain.test and clustered.verdict_interval == plain.verdict_interval
        assert bounds(clustered.rate_a) == bounds(plain.rate_a)
        assert bounds(clustered.rate_b) == bounds(plain.rate_b)
        assert clustered.effective_n == n


# ---- outcomes fixed by the condition: 20 conditions × 10 trials count as 20 outcomes ---------------


@pytest.mark.parametrize("tasks", [1, 4])
def test_a_deterministic_benchmark_is_as_wide_as_its_20_conditions(tasks):
    clusters, strata = layout(20, 10, tasks)
    outcome = [1.0] * 10 + [0.0] * 10  # condition c succeeds in every trial or in none
    values = [outcome[c] for c in clusters]
    interval = clustered_interval(values, clusters, strata, kind="rate")
    twenty = wilson_interval(10, 20)
    assert interval.low == pytest.approx(twenty.low, abs=1e-9)
    assert interval.high == pytest.approx(twenty.high, abs=1e-9)
    assert (round(interval.low, 2), round(interval.high, 2)) == (0.30, 0.70)
    assert interval.n == 200 and interval.conditions == 20 and interval.effective_n == pytest.approx(20)
    assert interval.method == "wilson (clustered)"
    naive = metric_interval(values, kind="rate")  # 200 independent outcomes: [0.43, 0.57]
    assert naive.high - naive.low < 0.5 * (twenty.high - twenty.low)


@pytest.mark.parametrize("tasks", [1, 4])
def test_two_policies_that_differ_on_one_condition_of_20_are_undecided(tasks):
    clusters, strata = layout(20, 10, tasks)
    a = [1.0 if c <= 10 else 0.0 for c in clusters]  # A also succeeds on condition 10
    b = [1.0 if c < 10 else 0.0 for c in clusters]
    result = compare_paired(a, b, kind="rate", clusters=clusters, strata=strata)
    assert result.verdict == "undecided" and result.p_value == 1.0
    assert result.effective_n == pytest.approx(20) and result.test == "mcnemar-exact (clustered)"
    assert result.difference.difference == pytest.approx(-0.05)  # the observed difference is kept
    assert compare_paired(a, b, kind="rate").verdict == "A better"  # as if 200 independent pairs


# ---- the intra-class correlation against references -----------------------------------------------


def deff_from_icc(icc: float, sizes: np.ndarray) -> float:
    return 1 + (float(np.sum(sizes**2)) / sizes.sum() - 1) * icc


@pytest.mark.parametrize("seed", range(5))
def test_the_unstratified_icc_is_the_one_way_anovas_from_scipys_f(seed):
    rng = np.random.default_rng(200 + seed)
    sizes = rng.integers(2, 9, 12)  # unequal trials per condition
    groups = [rng.normal(rng.normal(0, 1), 1.0, m) for m in sizes]
    values = np.concatenate(groups)
    clusters = np.repeat(np.arange(len(sizes)), sizes).tolist()
    f = stats.f_oneway(*groups).statistic
    n, k = sizes.sum(), len(sizes)
    m0 = (n - np.sum(sizes**2) / n) / (k - 1)  # the ANOVA's mean group size
    icc = (f - 1) / (f + m0 - 1)
    assert 0 < icc < 1  # inside, where no truncation hides a difference
    assert design_effect(values, clusters) == pytest.approx(deff_from_icc(icc, sizes), rel=1e-12)


def test_a_hand_worked_example_with_conditions_nested_in_tasks():
    # task 0: conditions [1, 1] and [0, 0]; task 1: conditions [1, 0] and [1, 1].
    values = [1, 1, 0, 0, 1, 0, 1, 1]
    clusters = [0, 0, 1, 1, 2, 2, 3, 3]
    strata = [0, 0, 0, 0, 1, 1, 1, 1]
    # Within tasks: MSB = 2(¼ + ¼ + 1/16 + 1/16)/(4 − 2) = 0.625, MSW = ½/(8 − 4) = 0.125, m₀ = 2,
    # ρ = (0.625 − 0.125)/(0.625 + 0.125) = 2/3, deff = 1 + (2 − 1)·2/3 = 5/3.
    assert design_effect(values, clusters, strata) == pytest.approx(5 / 3, rel=1e-12)
    # Ignoring the tasks, the spread between them counts too: MSB = 1.375/3, ρ = 4/7, deff = 11/7.
    assert design_effect(values, clusters) == pytest.approx(11 / 7, rel=1e-12)


def test_the_stratified_icc_agrees_with_a_least_squares_fit():
    rng = np.random.default_rng(7)
    tasks, seeds, trials = 4, 6, 5
    task_means = rng.normal(0, 3, tasks)  # large between tasks: they must not count as clustering
    condition = rng.normal(0, 1, (tasks, seeds, 1))
    y = (task_means[:, None, None] + condition + rng.normal(0, 1, (tasks, seeds, trials))).ravel()
    cluster = np.repeat(np.arange(tasks * seeds), trials)
    task = np.repeat(np.arange(tasks), seeds * trials)

    def residual(labels: np.ndarray) -> float:
        dummies = np.eye(labels.max() + 1)[labels]
        fitted = dummies @ np.linalg.lstsq(dummies, y, rcond=None)[0]
        return float(np.sum((y - fitted) ** 2))

    msb = (residual(task) - residual(cluster)) / (tasks * seeds - tasks)
    msw = residual(cluster) / (len(y) - tasks * seeds)
    icc = (msb - msw) / (msb + (trials - 1) * msw)  # balanced: m₀ is the trials per condition
    assert 0 < icc < 1
    expected = 1 + (trials - 1) * icc
    assert design_effect(y, cluster.tolist(), task.tolist()) == pytest.approx(expected, rel=1e-9)
    assert design_effect(y, cluster.tolist()) > expected + 1  # unstratified: the tasks' spread too


def test_tasks_of_one_condition_pool_into_one_stratum():
    rng = np.random.default_rng(3)
    values = (rng.random(200) < rng.random(20).repeat(10)).astype(float)
    clusters, _ = layout(20, 10)
    one_condition_each = clusters  # 20 tasks of one condition: alone, each says nothing
    assert design_effect(values, clusters, one_condition_each) == design_effect(values, clusters)
    assert design_effect(values, clusters) > 1


def test_copies_and_nothing_to_tell_count_each_condition_once():
    clusters, strata = layout(6, 4, tasks=2)
    every_trial_succeeds = [1.0] * 24
    assert design_effect(every_trial_succeeds, clusters, strata) == 4


# ---- coverage, simulated ----------------------------------------------------------------------------


def test_at_icc_one_half_the_clustered_pooled_rate_covers_where_the_naive_one_does_not():
    rng = np.random.default_rng(2026)
    tasks, seeds, trials, icc, replications = 10, 5, 10, 0.5, 300
    task_rates = np.linspace(0.3, 0.7, tasks)
    truth = task_rates.mean()
    concentration = (1 - icc) / icc  # Beta(α, β) with α + β = (1 − ρ)/ρ has ICC ρ
    mean = task_rates[None, :, None]
    rates = rng.beta(mean * concentration, (1 - mean) * concentration, (replications, tasks, seeds))
    outcomes = (rng.random((replications, tasks, seeds, trials)) < rates[..., None]).astype(float)
    clusters, _ = layout(tasks * seeds, trials)
    strata = [c // seeds for c in clusters]
    naive = clustered = 0
    for y in outcomes.reshape(replications, -1):
        plain = metric_interval(y, kind="rate")
        together = clustered_interval(y, clusters, strata, kind="rate")
        naive += plain.low <= truth <= plain.high
        clustered += together.low <= truth <= together.high
    assert clustered / replications >= 0.90
    assert naive / replications < 0.80


def test_two_conditions_of_one_task_give_the_wide_interval_they_are_worth():
    # one degree of freedom for the spread between conditions: Student's quantile is 12.7
    interval = clustered_interval([1] * 12 + [1, 0] * 6, [0] * 12 + [1] * 12, ["t"] * 24)
    assert interval.conditions == 2 and interval.method == "wilson (clustered)"
    assert 0.0 <= interval.low < 0.05 and 0.99 < interval.high <= 1.0


# ---- near 0 or 1 from few conditions: each condition counts once --------------------------------


def test_a_rate_near_1_from_rare_bad_conditions_covers_though_its_sample_shows_none():
    # ICC 0.5 at a mean rate of 0.95: most conditions always succeed, a rare one mostly fails, and
    # half the samples of 20 conditions draw none of those; ρ̂ alone covered 0.89 here.
    rng = np.random.default_rng(7)
    conditions, trials, icc, truth, replications = 20, 10, 0.5, 0.95, 300
    concentration = (1 - icc) / icc
    rates = rng.beta(truth * concentration, (1 - truth) * concentration, (replications, conditions))
    outcomes = (rng.random((replications, conditions, trials)) < rates[..., None]).astype(float)
    clusters, strata = layout(conditions, trials)
    covered = passed = 0
    for y in outcomes.reshape(replications, -1):
        interval = clustered_interval(y, clusters, strata, kind="rate")
        covered += interval.low <= truth <= interval.high
        passed += interval.low >= truth
    assert covered / replications >= 0.93 and passed / replications <= 0.05


def test_a_rate_near_the_edge_counts_each_condition_once_below_100_conditions_only():
    rng = np.random.default_rng(3)
    few, many = layout(20, 5), layout(100, 5)
    near = (rng.random(100) < 0.97).astype(float)
    middle = (rng.random(100) < 0.5).astype(float)
    assert clustered_interval(near, *few, kind="rate").effective_n == pytest.approx(20)
    assert clustered_interval(middle, *few, kind="rate").effective_n > 20
    wide = (rng.random(500) < 0.97).astype(float)
    assert clustered_interval(wide, *many, kind="rate").effective_n > 100
    one_trial = layout(100, 1)
    plain = metric_interval(near, kind="rate")
    assert bounds(clustered_interval(near, *one_trial, kind="rate")) == bounds(plain)


def test_two_rates_near_1_from_few_conditions_compare_as_one_pair_per_condition():
    rng = np.random.default_rng(5)
    clusters, strata = layout(20, 10)
    a = (rng.random(200) < 0.96).astype(float)
    b = (rng.random(200) < 0.96).astype(float)
    result = compare_paired(a, b, clusters=clusters, strata=strata)
    assert result.effective_n == pytest.approx(20) and result.verdict != "within threshold"
