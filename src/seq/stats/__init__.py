"""Statistics shared by every report: one module, built on scipy, each method named in the output."""

from seq.stats.across_tasks import (
    iqm,
    iqm_interval,
    probability_of_improvement,
    probability_of_improvement_interval,
)
from seq.stats.compare import Comparison, compare_paired
from seq.stats.intervals import (
    ALL_EQUAL,
    SMALL_N,
    Interval,
    bootstrap_interval,
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
    "DifferenceInterval",
    "EProcess",
    "Interval",
    "MetricKind",
    "PairedTable",
    "SequentialDecision",
    "SequentialDesign",
    "agreeing_pairs_needed",
    "agresti_min_interval",
    "bootstrap_interval",
    "check_metric_kinds",
    "check_threshold",
    "compare_paired",
    "e_process",
    "fixed_pairs",
    "iqm",
    "iqm_interval",
    "is_binary",
    "mcnemar_exact",
    "metric_interval",
    "metric_kinds",
    "newcombe_interval",
    "paired_bootstrap_interval",
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
