"""One metric of one group, compared between policies A and B on the same episodes.

`compare_paired` is what `seq eval compare` and `seq benchmark compare` print: each side's mean with
its interval, the paired difference B − A with its interval, a p-value for 0/1 metrics, and a
verdict with the interval it rests on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from seq.stats.intervals import Interval, bootstrap_interval, is_binary, wilson_interval
from seq.stats.paired import (
    DifferenceInterval,
    PairedTable,
    agresti_min_interval,
    mcnemar_exact,
    paired_bootstrap_interval,
    paired_table,
    within_threshold,
)

VERDICTS = ("A better", "B better", "within threshold", "undecided", "B higher", "B lower")


@dataclass(frozen=True)
class Comparison:
    """A paired comparison of one metric: n pairs, each side's interval, B − A, and the verdict.

    `table` and `p_value` (McNemar's exact test) are None for a metric that is not 0/1.
    `verdict_interval` names the interval the verdict used (the `method` of `difference`).
    """

    metric: str
    n: int
    rate_a: Interval
    rate_b: Interval
    table: PairedTable | None
    difference: DifferenceInterval
    p_value: float | None
    verdict: str
    threshold: float
    verdict_interval: str


def _verdict(difference: DifferenceInterval, threshold: float, significant: bool) -> str:
    if within_threshold(difference, threshold):
        return "within threshold"
    if significant and difference.low > 0:
        return "B better"
    if significant and difference.high < 0:
        return "A better"
    return "undecided"


def _direction(difference: DifferenceInterval) -> str:
    """For a metric whose better direction `seq` cannot know (steps, return, a distance)."""
    if difference.n > 1 and difference.low > 0:
        return "B higher"
    if difference.n > 1 and difference.high < 0:
        return "B lower"
    return "undecided"


def compare_paired(
    a: Sequence[float],
    b: Sequence[float],
    metric: str = "success",
    threshold: float = 0.05,
    level: float = 0.95,
) -> Comparison:
    """Compare a metric on the same episodes under A (`a[i]`) and B (`b[i]`).

    0/1 metrics (`is_binary` on both sides): Wilson intervals for each rate, the Agresti–Min
    interval for B − A and McNemar's exact p-value. Other metrics: BCa bootstrap intervals of each
    mean and of the mean paired difference; no p-value.

    Verdict for a 0/1 metric (a success rate), in this order: "within threshold" when the whole
    difference interval lies inside ±threshold (practically equivalent, even if also significant);
    "B better" / "A better" when the interval lies above / below 0 and McNemar's p < 1 − level;
    else "undecided". For other metrics, whose better direction and units `seq` cannot know:
    "B higher" / "B lower" when the interval excludes 0, else "undecided". With every pair
    agreeing, "within threshold" at ±0.05 needs 38 pairs (Agresti–Min; Tango's stricter score
    interval would need 73, see `agreeing_pairs_needed`).
    """
    if len(a) != len(b):
        raise ValueError(f"paired values need equal lengths, got {len(a)} and {len(b)}")
    n = len(a)
    if n and is_binary(a) and is_binary(b):
        table = paired_table(a, b)
        difference = agresti_min_interval(table, level)
        p_value = mcnemar_exact(table)
        rate_a = wilson_interval(table.both + table.only_a, n, level)
        rate_b = wilson_interval(table.both + table.only_b, n, level)
        verdict = _verdict(difference, threshold, p_value < 1 - level)
    else:
        table, p_value = None, None
        rate_a, rate_b = bootstrap_interval(a, level), bootstrap_interval(b, level)
        difference = paired_bootstrap_interval(a, b, level)
        verdict = "undecided" if math.isnan(difference.low) else _direction(difference)
    return Comparison(
        metric, n, rate_a, rate_b, table, difference, p_value, verdict, threshold, difference.method
    )
