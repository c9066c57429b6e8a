"""The rows of a report: one metric of one group, one group, one paired comparison."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from seq.stats import SMALL_N


@dataclass(frozen=True)
class MetricRow:
    """One metric of one group: its value, 95% interval, n and the interval's method.

    `source` is `mean` (the mean over episodes) or `score` (a value the benchmark's `@seq.score`
    returned, which replaces the mean and has no interval).
    """

    name: str
    value: float
    low: float | None
    high: float | None
    n: int
    method: str
    source: str = "mean"

    @property
    def small_n(self) -> bool:
        return self.source == "mean" and self.n < SMALL_N


@dataclass(frozen=True)
class GroupRow:
    kind: str  # overall | suite | task
    name: str
    episodes: int
    errors: int
    timed_out: int
    metrics: list[MetricRow]
    arm: str = ""


@dataclass(frozen=True)
class ComparisonRow:
    """One arm against the first arm, for one metric of one group, over their paired episodes."""

    arm: str
    baseline: str
    kind: str
    name: str
    comparison: Any  # seq.stats.Comparison
