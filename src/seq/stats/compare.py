"""One metric of one group, compared between policies A and B on the same episodes.

`compare_paired` is what `seq eval compare` and `seq benchmark compare` print: each side's mean with
its interval, the paired difference B − A with its interval, a p-value for rates, and a verdict
with the interval it rests on. Every interval and test carries its method's name.

Pairs whose trials share a condition (`clusters`) are not independent: every interval and test is
then taken at the effective number of pairs, N / deff, with deff the design effect of the paired
differences b − a within conditions nested in tasks (`seq.stats.clusters`). For rates this is the
design-effect adjustment of McNemar's test and of the score interval (Rao & Scott 1992, Biometrics
48:577–585; Eliasziw & Donner 1991, Stat Med 10:1981–1991, for McNemar's test in clusters): the
four cells of the paired table are divided by deff before the test and Tango's interval. With one
trial per condition deff = 1 and nothing changes.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace

from seq.stats.clusters import DesignEffect, clustering, design_effect_of
from seq.stats.intervals import CLUSTERED, Interval, bootstrap_interval, wilson_interval, with_design_effect
from seq.stats.kinds import RATE, metric_kinds
from seq.stats.paired import (
    DifferenceInterval,
    PairedTable,
    agresti_min_interval,
    effective_table,
    mcnemar_exact,
    pair_design_effect,
    paired_t_interval,
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
    (McNemar's exact test, `mcnemar-exact`) and `agresti_min` (the Agresti–Min interval, shown
    beside the verdict's, never used by it); None for a mean. `difference` is the interval the verdict
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
    conditions: int | None = None
    effective_n: float | None = None


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
    clusters: Sequence[Hashable] | None = None,
    strata: Sequence[Hashable] | None = None,
) -> Comparison:
    """Compare a metric on the same episodes under A (`a[i]`) and B (`b[i]`).

    `clusters[i]`: the condition of pair i, `strata[i]` its task; None: every pair independent.

    `kind` (`rate` or `mean`): as the report's `seq.stats.kinds` decided for the whole eval; None
    decides it here from the metric's name and these values. Rates: Wilson intervals for each
    side, Tango's score interval for B − A (with the Agresti–Min interval beside it) and McNemar's
    exact p-value. Means: BCa bootstrap intervals of each mean and Student's t interval of the mean
    paired difference (cluster-robust, at the number of conditions, where trials repeat them),
    which keeps its 5 % from n = 5 where the bootstrap's does not; no p-value.

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
    effect = _pair_effect(a, b, clusters, strata)
    conditions = None if effect is None else effect.conditions
    effective_n = None if effect is None else effect.effective_n
    if n and kind == RATE:
        table = paired_table(a, b)
        deflated = table if effect is None else effective_table(table, effect.deff)
        difference = _named(tango_interval(deflated, level), table, effect)
        p_value = mcnemar_exact(deflated)
        return Comparison(
            metric,
            n,
            _side(wilson_interval(table.both + table.only_a, n, level), a, clusters, strata),
            _side(wilson_interval(table.both + table.only_b, n, level), b, clusters, strata),
            table,
            difference,
            p_value,
            _verdict(difference, threshold, p_value < 1 - level),
            threshold,
            difference.method,
            kind,
            MCNEMAR_EXACT + (CLUSTERED if _is_clustered(effect) else ""),
            _named(agresti_min_interval(deflated, level), table, effect),
            conditions=conditions,
            effective_n=effective_n,
        )
    rate_a = _side(bootstrap_interval(a, level), a, clusters, strata)
    rate_b = _side(bootstrap_interval(b, level), b, clusters, strata)
    difference = paired_t_interval(a, b, level, clusters)
    verdict = "undecided" if math.isnan(difference.low) else _direction(difference)
    return Comparison(
        metric,
        n,
        rate_a,
        rate_b,
        None,
        difference,
        None,
        verdict,
        threshold,
        difference.method,
        kind,
        conditions=conditions,
        effective_n=effective_n,
    )


def _pair_effect(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable] | None,
    strata: Sequence[Hashable] | None,
) -> DesignEffect | None:
    """The design effect of the paired differences in their conditions; None unclustered."""
    return None if clusters is None else pair_design_effect(a, b, clusters, strata)


def _is_clustered(effect: DesignEffect | None) -> bool:
    return effect is not None and effect.deff != 1.0


def _named(
    interval: DifferenceInterval, table: PairedTable, effect: DesignEffect | None
) -> DifferenceInterval:
    """An interval computed on the deflated table, given back with the observed difference and n."""
    if not _is_clustered(effect):
        return interval
    return replace(interval, difference=table.difference, n=table.n, method=interval.method + CLUSTERED)


def _side(
    plain: Interval,
    values: Sequence[float],
    clusters: Sequence[Hashable] | None,
    strata: Sequence[Hashable] | None,
) -> Interval:
    """One side's interval, widened by its own design effect where its trials cluster."""
    if clusters is None:
        return plain
    return with_design_effect(plain, design_effect_of(values, clustering(clusters, strata)))
