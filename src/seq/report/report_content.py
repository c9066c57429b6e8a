"""What a report says, before any view renders it: the `Report`'s fields and the questions they
answer. The views (terminal, Markdown, HTML, CSV) read this; `seq.report.eval_report` adds the
methods that call them."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from seq.record.arguments import EvalArguments
from seq.record.episode import EpisodeResult
from seq.record.manifest import Manifest, SequentialDecision
from seq.record.schema import SCHEMA_VERSION
from seq.record.store import COMPLETED, RUNNING, WorkItem
from seq.report.problems import Problem, ProblemGroup, group_problems
from seq.report.rows import ComparisonRow, GroupRow, MetricRow, TrialEvidence
from seq.stats import SMALL_N, MetricKind

__all__ = ["ReportContent", "Unfinished", "finite", "summary_csv_path", "unfinished_item"]


@dataclass(frozen=True)
class Unfinished:
    """A work item with no result, and why in one line: its last attempt's infrastructure
    failure (`attempts` tries so far), or not run (yet)."""

    item_id: str
    arm: str
    task: str
    seed: int
    reason: str
    attempts: int = 0


def unfinished_item(item: WorkItem, last: EpisodeResult | None, status: str) -> Unfinished:
    """The `Unfinished` row of an item the record holds no result for."""
    if last is None:
        reason = "not run yet" if status == RUNNING else "not run"
    else:
        lines = [line.strip() for line in (last.error or "").strip().splitlines() if line.strip()]
        reason = lines[0] if lines else last.ended_by
    c = item.condition
    return Unfinished(item.item_id, item.arm, c.task, c.seed, reason, 0 if last is None else last.attempt)


@dataclass
class ReportContent:
    """Everything `seq eval report` shows. Every view renders this and nothing else."""

    eval_id: str
    status: str
    policy: str
    benchmark: str
    done: int
    total: int
    groups: list[GroupRow]
    problems: list[Problem]
    cost: dict[str, float]
    manifest: Manifest
    arguments: EvalArguments
    episodes: list[EpisodeResult] = field(repr=False, default_factory=list)
    arms: list[str] = field(default_factory=list)
    comparisons: list[ComparisonRow] = field(default_factory=list)
    across_tasks: list[dict[str, Any]] = field(default_factory=list)
    compared: list[Manifest] = field(default_factory=list)  # a comparison of two evals: theirs
    schema_version: int = SCHEMA_VERSION  # of the record the report was read from
    compared_evals: list[str] = field(default_factory=list)  # the two evals' ids, where compared
    kinds: dict[str, MetricKind] = field(default_factory=dict)
    threshold: float | None = 0.05
    notes: list[str] = field(default_factory=list)
    error: str | None = None  # what failed the eval (a traceback, or a sentence), where it failed
    unfinished: list[Unfinished] = field(default_factory=list)  # items without a result, and why
    reruns: int = 0  # items run to an end more than once (`--rerun-failed`): counted by their last
    trials: TrialEvidence | None = None  # the conditions behind the episodes, and what repeats add

    @property
    def all_errored(self) -> bool:
        """Whether every episode that ran errored: nothing was measured."""
        return bool(self.episodes) and all(not episode.ok for episode in self.episodes)

    @property
    def problem_groups(self) -> list[ProblemGroup]:
        """The problems, the same one over many episodes told once (`seq.report.problems`)."""
        return group_problems(self.problems)

    @property
    def sequential(self) -> SequentialDecision | None:
        """The sequential test's decision, where the eval ran one (see `seq.engine.sequential`)."""
        return self.manifest.sequential

    @property
    def partial(self) -> bool:
        """Whether episodes the plan holds are missing (a sequential test that stopped early is not)."""
        if self.status == COMPLETED and self.sequential:
            return False
        return self.status != COMPLETED or self.done < self.total

    @property
    def title(self) -> str:
        policies = [arm.policy for arm in self.manifest.arms] or [self.policy]
        adapter = self.manifest.adapter.label if self.manifest.adapter else None
        middle = f" + {adapter}" if adapter else ""
        return f"{self.benchmark}{middle} + {' vs '.join(dict.fromkeys(policies))}"

    def group(self, kind: str, name: str, arm: str | None = None) -> GroupRow:
        """A group's row; `arm` defaults to the first arm."""
        arm = self.arms[0] if arm is None and self.arms else arm or ""
        for row in self.groups:
            if row.kind == kind and row.name == name and row.arm == arm:
                return row
        raise KeyError((arm, kind, name))

    def metric(
        self, name: str, kind: str = "overall", group: str = "all", arm: str | None = None
    ) -> MetricRow:
        for row in self.group(kind, group, arm).metrics:
            if row.name == name:
                return row
        raise KeyError(name)

    def comparison(
        self, metric: str = "success", arm: str | None = None, kind: str = "overall", group: str = "all"
    ) -> Any:
        """The paired comparison of `arm` (default: the second) against the first arm."""
        arm = arm if arm is not None else self.arms[1]
        for row in self.comparisons:
            if (row.arm, row.kind, row.name, row.comparison.metric) == (arm, kind, group, metric):
                return row.comparison
        raise KeyError((arm, kind, group, metric))

    def to_dict(self) -> dict[str, Any]:
        """Every field, ready for JSON: a value that is not a finite number (NaN, ±∞) is None."""
        data = asdict(self)
        data["partial"] = self.partial
        data["episodes"] = [asdict(e) for e in self.episodes]
        data["problem_groups"] = [
            {
                "status": g.status,
                "label": g.label,
                "summary": g.summary,
                "count": g.count,
                "headline": g.headline,
                "first": asdict(g.first),
                "where": g.where,
            }
            for g in self.problem_groups
        ]
        for group in data["groups"]:
            for metric in group["metrics"]:
                metric["small_n"] = metric["source"] == "mean" and metric["n"] < SMALL_N
        return finite(data)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, default=str, allow_nan=False)


def summary_csv_path(path: Path) -> Path:
    """`runs.csv` → `runs.summary.csv`: where `Report.to_csv` writes the report's own rows."""
    return path.with_name(f"{path.stem}.summary{path.suffix or '.csv'}")


def finite(value: Any) -> Any:
    """`value` with every float that is NaN or infinite replaced by None (JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value
