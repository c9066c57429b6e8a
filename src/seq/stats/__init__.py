"""Statistics shared by every report: one module, built on scipy, each method named in the output.

Its names are imported on first use: a worker process that needs only `seq.stats.kinds` (what a
benchmark declares its metrics to be) does not import the intervals, the tests and their numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from seq._lazy import lazy_exports

_EXPORTS = {
    "iqm": "seq.stats.across_tasks",
    "iqm_interval": "seq.stats.across_tasks",
    "probability_of_improvement": "seq.stats.across_tasks",
    "probability_of_improvement_interval": "seq.stats.across_tasks",
    "DesignEffect": "seq.stats.clusters",
    "design_effect": "seq.stats.clusters",
    "Comparison": "seq.stats.compare",
    "binomial_upper_tail": "seq.stats.exact",
    "exact_size": "seq.stats.exact",
    "fewest_discordant": "seq.stats.exact",
    "mcnemar_exact_greater": "seq.stats.exact",
    "compare_paired": "seq.stats.compare",
    "ALL_EQUAL": "seq.stats.intervals",
    "SMALL_N": "seq.stats.intervals",
    "Interval": "seq.stats.intervals",
    "bootstrap_interval": "seq.stats.intervals",
    "clustered_interval": "seq.stats.intervals",
    "is_binary": "seq.stats.intervals",
    "metric_interval": "seq.stats.intervals",
    "wilson_interval": "seq.stats.intervals",
    "MEAN": "seq.stats.kinds",
    "RATE": "seq.stats.kinds",
    "MetricKind": "seq.stats.kinds",
    "check_metric_kinds": "seq.stats.kinds",
    "metric_kinds": "seq.stats.kinds",
    "DifferenceInterval": "seq.stats.paired",
    "PairedTable": "seq.stats.paired",
    "agreeing_pairs_needed": "seq.stats.paired",
    "agresti_min_interval": "seq.stats.paired",
    "check_threshold": "seq.stats.paired",
    "mcnemar_exact": "seq.stats.paired",
    "paired_bootstrap_interval": "seq.stats.paired",
    "paired_t_interval": "seq.stats.paired",
    "paired_table": "seq.stats.paired",
    "tango_equivalent": "seq.stats.paired",
    "tango_interval": "seq.stats.paired",
    "usable_threshold": "seq.stats.paired",
    "within_threshold": "seq.stats.paired",
    "EProcess": "seq.stats.sequential",
    "SequentialDecision": "seq.stats.sequential",
    "SequentialDesign": "seq.stats.sequential",
    "e_process": "seq.stats.sequential",
    "fixed_pairs": "seq.stats.sequential",
    "sequential_test": "seq.stats.sequential",
    "newcombe_interval": "seq.stats.unpaired",
}

if TYPE_CHECKING:
    from seq.stats.across_tasks import (
        iqm,
        iqm_interval,
        probability_of_improvement,
        probability_of_improvement_interval,
    )
    from seq.stats.clusters import DesignEffect, design_effect
    from seq.stats.compare import Comparison, compare_paired
    from seq.stats.exact import binomial_upper_tail, exact_size, fewest_discordant, mcnemar_exact_greater
    from seq.stats.intervals import (
        ALL_EQUAL,
        SMALL_N,
        Interval,
        bootstrap_interval,
        clustered_interval,
        is_binary,
        metric_interval,
        wilson_interval,
    )
    from seq.stats.kinds import MEAN, RATE, MetricKind, check_metric_kinds, metric_kinds
    from seq.stats.paired import (
        DifferenceInterval,
        PairedTable,
        agreeing_pairs_needed,
        agresti_min_interval,
        check_threshold,
        mcnemar_exact,
        paired_bootstrap_interval,
        paired_t_interval,
        paired_table,
        tango_equivalent,
        tango_interval,
        usable_threshold,
        within_threshold,
    )
    from seq.stats.sequential import (
        EProcess,
        SequentialDecision,
        SequentialDesign,
        e_process,
        fixed_pairs,
        sequential_test,
    )
    from seq.stats.unpaired import newcombe_interval

__all__ = [
    "ALL_EQUAL",
    "MEAN",
    "RATE",
    "SMALL_N",
    "Comparison",
    "DesignEffect",
    "DifferenceInterval",
    "EProcess",
    "Interval",
    "MetricKind",
    "PairedTable",
    "SequentialDecision",
    "SequentialDesign",
    "agreeing_pairs_needed",
    "binomial_upper_tail",
    "agresti_min_interval",
    "bootstrap_interval",
    "clustered_interval",
    "check_metric_kinds",
    "check_threshold",
    "compare_paired",
    "design_effect",
    "e_process",
    "exact_size",
    "fewest_discordant",
    "fixed_pairs",
    "iqm",
    "iqm_interval",
    "is_binary",
    "mcnemar_exact",
    "mcnemar_exact_greater",
    "metric_interval",
    "metric_kinds",
    "newcombe_interval",
    "paired_bootstrap_interval",
    "paired_t_interval",
    "paired_table",
    "probability_of_improvement",
    "probability_of_improvement_interval",
    "sequential_test",
    "tango_equivalent",
    "tango_interval",
    "usable_threshold",
    "wilson_interval",
    "within_threshold",
]


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
