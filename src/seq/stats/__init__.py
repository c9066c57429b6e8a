"""Statistics shared by every report: one module, built on scipy, each method named in the output."""

from seq.stats.across_tasks import (
    iqm,
    iqm_interval,
    probability_of_improvement,
    probability_of_improvement_interval,
)
from seq.stats.compare import Comparison, compare_paired
from seq.stats.intervals import (
    SMALL_N,
    Interval,
    bootstrap_interval,
    is_binary,
    metric_interval,
    wilson_interval,
)
from seq.stats.paired import (
    DifferenceInterval,
    PairedTable,
    agreeing_pairs_needed,
    agresti_min_interval,
    mcnemar_exact,
    paired_bootstrap_interval,
    paired_table,
    tango_interval,
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
    "SMALL_N",
    "Comparison",
    "DifferenceInterval",
    "EProcess",
    "Interval",
    "PairedTable",
    "SequentialDecision",
    "SequentialDesign",
    "agreeing_pairs_needed",
    "agresti_min_interval",
    "bootstrap_interval",
    "compare_paired",
    "e_process",
    "fixed_pairs",
    "iqm",
    "iqm_interval",
    "is_binary",
    "mcnemar_exact",
    "metric_interval",
    "newcombe_interval",
    "paired_bootstrap_interval",
    "paired_table",
    "probability_of_improvement",
    "probability_of_improvement_interval",
    "sequential_test",
    "tango_interval",
    "wilson_interval",
    "within_threshold",
]
