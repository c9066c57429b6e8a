"""The rows of a report: one metric of one group, one group, one paired comparison."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from seq.stats import SMALL_N


@dataclass(frozen=True)
class MetricRow:
    """One metric of one group: its value, 95% interval, n and the interval's method.

    `source` is `mean` (the mean over episodes) or `score` (a value the benchmark's `@seq.score`
    returned, which replaces the mean and has no interval). `conditions`: how many conditions the
    n episodes ran; `effective_n`: what they are worth as independent episodes, given how alike
    the trials of one condition were (`seq.stats.clusters`); the interval is that of the effective n.
    """

    name: str
    value: float
    low: float | None
    high: float | None
    n: int
    method: str
    source: str = "mean"
    conditions: int | None = None
    effective_n: float | None = None

    @property
    def clustered(self) -> bool:
        """Whether its episodes repeat conditions, so that its interval counts fewer than n."""
        return self.conditions is not None and self.conditions < self.n

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


@dataclass(frozen=True)
class TrialEvidence:
    """What repeated trials are worth in this eval: the conditions its episodes ran (each arm ran
    every one), the most trials one arm ran of one condition, and whether every trial of every
    condition ended the same way (the same status, steps and metrics): then more trials add no
    evidence, and more seeds would."""

    episodes: int
    conditions: int
    most_trials: int
    identical: bool
    arms: int = 1

    @property
    def repeated(self) -> bool:
        return self.most_trials > 1
