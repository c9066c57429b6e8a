"""`seq grid`: ablation grids and acceptance gates on top of `seq`'s own evals.

A grid sweeps modes × families/variations × policies (or lists hand-curated cells); every cell is an
ordinary eval in the record, cells sharing their episodes run as arms of one eval, and the summary
(summary.tsv, summary.json) folds them into one table and one gate.

>>> summary = seq.grid.run("examples/grid_metaworld.yaml", gate=True)
>>> summary.passed, summary.success_rate, summary.run_dir
"""

from __future__ import annotations

from seq.grid.config import (
    DEFAULT_GATE_THRESHOLD,
    Family,
    GridConfig,
    Mode,
    PolicyEntry,
    SuiteCell,
    Variation,
)
from seq.grid.history import ls, show
from seq.grid.results import CellResult
from seq.grid.runner import load, run
from seq.grid.summary import Summary

__all__ = [
    "DEFAULT_GATE_THRESHOLD",
    "CellResult",
    "Family",
    "GridConfig",
    "Mode",
    "PolicyEntry",
    "Summary",
    "SuiteCell",
    "Variation",
    "load",
    "ls",
    "run",
    "show",
]
