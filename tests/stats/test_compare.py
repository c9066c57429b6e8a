"""compare_paired: the one comparison the commands print, for 0/1 and other metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest

from seq.stats.compare import VERDICTS, compare_paired
from seq.stats.intervals import bootstrap_interval, wilson_interval
from seq.stats.paired import PairedTable, agresti_min_interval, mcnemar_exact, tango_interval


def pairs(both: int, only_a: int, only_b: int, neither: int) -> tuple[list[int], list[int]]:
    a = [1] * both + [1] * only_a + [0] * only_b + [0] * neither
    b = [1] * both + [0] * only_a + [1] * only_b + [0] * neither
    return a, b


def test_a_rate_uses_wilson_tango_and_mcnemar_and_shows_agresti_min_beside():
    a, b = pairs(40, 3, 15, 22)
    result = compare_paired(a, b, "success")
    table = PairedTable(40, 3, 15, 22)
    assert result.metric == "success" and result.n == 80 and result.table == table
    assert result.kind == "rate"
    assert result.rate_a == wilson_interval(43, 80) and result.rate_b == wilson_interval(55, 80)
    assert result.difference == tango_interval(table)
    assert result.agresti_min == agresti_min_interval(table)  # reported beside the verdict's, not used by it
    assert result.p_value == pytest.approx(mcnemar_exact(table)) and result.test == "mcnemar-exact"
    assert result.verdict == "B better" and result.verdict_interval == "tango"
    assert result.threshold == 0.05


def test_a_better_is_the_mirror():
    a, b = pairs(40, 15, 3, 22)
    assert compare_paired(a, b).verdict == "A better"


def test_within_threshold_takes_73_agreeing_pairs_not_agresti_mins_38():
    a, b = pairs(20, 0, 0, 18)  # 38 pairs, all agreeing: inside ±0.05 by Agresti–Min only
    result = compare_paired(a, b)
    assert -0.05 < result.agresti_min.low and result.agresti_min.high < 0.05
    assert result.verdict == "undecided"
    a, b = pairs(40, 0, 0, 32)  # 72 pairs
    assert compare_paired(a, b).verdict == "undecided"
    a, b = pairs(40, 0, 0, 33)  # 73 pairs
    result = compare_paired(a, b)
    assert result.verdict == "within threshold" and result.p_value == 1.0


def test_no_margin_no_equivalence_verdict():
    a, b = pairs(100, 0, 0, 100)
    result = compare_paired(a, b, threshold=None)
    assert result.verdict == "undecided" and result.threshold is None


def test_the_kind_given_is_kept_whatever_the_values():
    a, b = pairs(10, 2, 5, 3)
    as_mean = compare_paired(a, b, "grasped", kind="mean")
    assert as_mean.kind == "mean" and as_mean.table is None and as_mean.p_value is None
    assert as_mean.verdict_interval == "paired-t"
    assert compare_paired(a, b, "grasped").kind == "rate"  # no kind given: these values decide
    with pytest.raises(ValueError, match="0/1"):
        compare_paired([0.5, 1.0], [1.0, 1.0], "success", kind="rate")


def test_within_threshold_wins_over_a_significant_small_difference():
    a, b = pairs(5000, 0, 60, 4940)  # B better by 0.006, very significant, far inside ±0.05
    result = compare_paired(a, b)
    assert result.p_value < 1e-10 and result.difference.low > 0
    assert result.verdict == "within threshold"
    assert compare_paired(a, b, threshold=0.005).verdict == "B better"


def test_interval_and_test_must_agree_for_a_direction():
    # Tango's interval excludes 0 but McNemar's exact p = 2/32 = 0.0625: undecided.
    a, b = pairs(10, 0, 5, 5)
    result = compare_paired(a, b)
    assert result.difference.low > 0 and result.p_value == pytest.approx(0.0625)
    assert result.verdict == "undecided"


def test_continuous_metric_uses_the_bootstrap_per_side_and_t_for_the_difference():
    rng = np.random.default_rng(5)
    a = rng.normal(10, 2, 50)
    b = a + 1.0 + rng.normal(0, 0.3, 50)
    result = compare_paired(list(a), list(b), "return", threshold=0.5)
    assert result.table is None and result.p_value is None
    assert result.rate_a == bootstrap_interval(list(a)) and result.rate_b == bootstrap_interval(list(b))
    assert result.difference.difference == pytest.approx(float(np.mean(b - a)))
    assert result.verdict_interval == "paired-t" and result.verdict == "B higher"
    assert compare_paired(list(b), list(a), "return").verdict == "B lower"
    close = compare_paired(list(a), list(a + rng.normal(0, 0.01, 50)), "return", threshold=0.5)
    assert close.verdict != "within threshold"  # no equivalence in a metric's own units


def test_mixed_values_are_not_binary():
    result = compare_paired([0, 1, 1, 0.5], [1, 1, 0, 1], "score")
    assert result.table is None and result.p_value is None


def test_edge_cases():
    empty = compare_paired([], [])
    assert empty.n == 0 and empty.verdict == "undecided" and math.isnan(empty.difference.difference)
    single = compare_paired([2.0], [3.0], "return")
    assert single.verdict == "undecided"
    with pytest.raises(ValueError):
        compare_paired([1, 0], [1])
    assert {compare_paired(*pairs(10, 2, 9, 3)).verdict} <= set(VERDICTS)


def test_one_pair_of_a_mean_has_no_interval_and_no_verdict():
    result = compare_paired([1.0], [2.0], "return")
    assert result.difference.method == "none (fewer than 2 pairs)" and result.verdict == "undecided"
    assert math.isnan(result.difference.low) and math.isnan(result.difference.high)
