"""One metric of one group, compared between policies A and B on the same episodes.

`compare_paired` is what `seq eval compare` and `seq benchmark compare` print: each side's mean with
its interval, the paired difference B − A with its interval, a p-value for rates, and a verdict
with the interval it rests on. Every interval and test carries its method's name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from seq.stats.intervals import Interval, bootstrap_interval, wilson_interval
from seq.stats.kinds import RATE, metric_kinds
from seq.stats.paired import (
    DifferenceInterval,
    PairedTable,
    agresti_min_interval,
    mcnemar_exact,
    paired_bootstrap_interval,
    paired_table,
    tango_interval,
    within_threshold,
)

MCNEMAR_EXACT = "mcnemar-exact"

VERDICTS = ("A better", "B better", "within threshold", "undecided", "B higher", "B lower")


@dataclass(frozen=True)
class Comparison:
    """A paired comparison of one metric: n pairs, each side's interval, B − A, and the verdict.

    `kind`: `rate` or `mean` (`seq.stats.kinds`). For a rate, `table`, `p_value` and `test`
    (McNemar's exact test, `mcnemar-exact`) and `agresti_min` (seed 000's interval, shown beside
    the verdict's, never used by it); None for a mean. `difference` is the interval the verdict
    used, `verdict_interval` its method. `threshold` None: no margin, so no equivalence verdict.
    """

    metric: str
    n: int
    rate_a: Interval
    rate_b: Interval
    table: PairedTable | None
    difference: DifferenceInterval
    p_value: float | None
    verdict: str
    threshold: float | None
    verdict_interval: str
    kind: str = RATE
    test: str | None = None
    agresti_min: DifferenceInterval | None = None


def _verdict(difference: DifferenceInterval, threshold: float | None, significant: bool) -> str:
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
    threshold: float | None = 0.05,
    level: float = 0.95,
    kind: str | None = None,
) -> Comparison:
    """Compare a metric on the same episodes under A (`a[i]`) and B (`b[i]`).

    `kind` (`rate` or `mean`): as the report's `seq.stats.kinds` decided for the whole eval; None
    decides it here from the metric's name and these values. Rates: Wilson intervals for each
    side, Tango's score interval for B − A (with the Agresti–Min interval beside it) and McNemar's
    exact p-value. Means: BCa bootstrap intervals of each mean and of the mean paired difference;
    no p-value.

    Verdict for a rate, in this order: "within threshold" when the whole of Tango's interval lies
    inside ±threshold (practically equivalent, even if also significant; with every pair agreeing
    that takes 73 pairs at ±0.05); "B better" / "A better" when it lies above / below 0 and
    McNemar's p < 1 − level; else "undecided". For a mean, whose better direction and units `seq`
    cannot know: "B higher" / "B lower" when the interval excludes 0, else "undecided".
    """
    if len(a) != len(b):
        raise ValueError(f"paired values need equal lengths, got {len(a)} and {len(b)}")
    n = len(a)
    if kind is None:
        kind = metric_kinds({metric: [*a, *b]})[metric].kind
    if n and kind == RATE:
        table = paired_table(a, b)
        difference = tango_interval(table, level)
        p_value = mcnemar_exact(table)
        rate_a = wilson_interval(table.both + table.only_a, n, level)
        rate_b = wilson_interval(table.both + table.only_b, n, level)
        return Comparison(
            metric,
            n,
            rate_a,
            rate_b,
            table,
            difference,
            p_value,
            _verdict(difference, threshold, p_value < 1 - level),
            threshold,
            difference.method,
            kind,
            MCNEMAR_EXACT,
            agresti_min_interval(table, level),
        )
    rate_a, rate_b = bootstrap_interval(a, level), bootstrap_interval(b, level)
    difference = paired_bootstrap_interval(a, b, level)
    verdict = "undecided" if math.isnan(difference.low) else _direction(difference)
    return Comparison(
        metric, n, rate_a, rate_b, None, difference, None, verdict, threshold, difference.method, kind
    )
