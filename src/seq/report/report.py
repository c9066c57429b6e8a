"""The report of an eval: one object, built from the record, rendered as terminal, Markdown, JSON or CSV."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.record.arguments import EvalArguments
from seq.record.episode import ERROR, TIMED_OUT, EpisodeResult
from seq.record.groups import groups
from seq.record.manifest import Manifest, SequentialDecision
from seq.record.schema import SCHEMA_VERSION
from seq.record.store import COMPLETED, Store
from seq.stats import SMALL_N, metric_interval

BUILT_IN_METRICS = ("steps", "return", "duration_s")


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


@dataclass(frozen=True)
class Problem:
    """An episode that errored or timed out, or a score hook that raised."""

    where: str
    status: str
    message: str


@dataclass
class Report:
    """Everything `seq eval report` shows. Every view renders this object and nothing else."""

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
        data = asdict(self)
        data["partial"] = self.partial
        data["episodes"] = [asdict(e) for e in self.episodes]
        for group in data["groups"]:
            for metric in group["metrics"]:
                metric["small_n"] = metric["source"] == "mean" and metric["n"] < SMALL_N
        return data

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, default=str)

    def to_markdown(self) -> str:
        from seq.report.views import render_markdown

        return render_markdown(self)

    def to_csv(self, path: str | Path) -> Path:
        from seq.report.views import write_csv

        return write_csv(self, Path(path))

    def print(self, console: Any = None) -> None:
        from seq.report.views import print_report

        print_report(self, console)


def _metric_names(results: list[EpisodeResult]) -> list[str]:
    names: dict[str, None] = {}
    for result in results:
        for key in result.metrics:
            if key not in BUILT_IN_METRICS:
                names.setdefault(key)
    return list(names) + list(BUILT_IN_METRICS)


def _group_row(
    key: tuple[str, str, str], members: list[EpisodeResult], names: list[str], scored: dict[str, float] | None
) -> GroupRow:
    arm, kind, name = key
    counted = [r for r in members if r.status != ERROR]
    metrics = []
    for metric in names:
        values = [r.metrics[metric] for r in counted if metric in r.metrics]
        if scored and metric in scored:
            metrics.append(MetricRow(metric, scored[metric], None, None, len(counted), "score hook", "score"))
        elif values:
            interval = metric_interval(values)
            metrics.append(
                MetricRow(metric, interval.mean, interval.low, interval.high, interval.n, interval.method)
            )
    for key, value in (scored or {}).items():
        if key not in names:
            metrics.append(MetricRow(key, value, None, None, len(counted), "score hook", "score"))
    return GroupRow(
        kind,
        name,
        len(members),
        sum(r.status == ERROR for r in members),
        sum(r.status == TIMED_OUT for r in members),
        metrics,
        arm,
    )


def _comparisons(
    table: dict[tuple[str, str, str], list[EpisodeResult]],
    arms: list[str],
    names: list[str],
    threshold: float,
) -> list[ComparisonRow]:
    """Each arm after the first against the first, per group and metric, over the pairs where
    neither episode errored."""
    from seq.stats import compare_paired

    rows = []
    baseline = arms[0]
    for arm in arms[1:]:
        for (owner, kind, name), members in table.items():
            if owner != arm or (baseline, kind, name) not in table:
                continue
            theirs = {r.pair_key: r for r in table[(baseline, kind, name)] if r.ok}
            pairs = [(theirs[r.pair_key], r) for r in members if r.ok and r.pair_key in theirs]
            for metric in names:
                if metric == "duration_s":  # wall time of the machine, not a property of the policy
                    continue
                both = [
                    (a.metrics[metric], b.metrics[metric])
                    for a, b in pairs
                    if metric in a.metrics and metric in b.metrics
                ]
                if not both:
                    continue
                a_values, b_values = zip(*both, strict=True)
                rows.append(
                    ComparisonRow(
                        arm, baseline, kind, name, compare_paired(a_values, b_values, metric, threshold)
                    )
                )
    return rows


def analyse(
    results: list[EpisodeResult], scores: dict, arms: list[str], threshold: float
) -> tuple[list[GroupRow], list[Problem], list[ComparisonRow]]:
    """Groups with their intervals, the problems to list, and each arm's paired comparison with the
    first arm: everything a report computes from episodes."""
    names = _metric_names(results)
    problems = []
    table = []
    grouped = groups(results)
    for key, members in grouped.items():
        values, error = scores.get(key, (None, None))
        if error:
            arm, kind, name = key
            where = f"@seq.score for {kind} {name}" + (f" of arm {arm}" if arm else "")
            problems.append(Problem(where, "score_error", error))
        table.append(_group_row(key, members, names, values))
    for result in results:
        if result.status in (ERROR, TIMED_OUT):
            message = result.error or f"stopped after {result.duration_s:.1f} s and {result.steps} steps"
            problems.append(Problem(f"{result.item_id}", result.status, message))
    comparisons = _comparisons(grouped, arms, names, threshold) if len(arms) > 1 else []
    return table, problems, comparisons


def across_tasks(results: list[EpisodeResult], arms: list[str], metric: str) -> list[dict[str, Any]]:
    """rliable's aggregate view of each arm (Agarwal et al. 2021): the interquartile mean of the
    per-task means with a stratified bootstrap interval, and each arm's probability of improvement
    over the first. Only where there are several tasks."""
    from seq.stats import iqm_interval, probability_of_improvement_interval

    by_arm: dict[str, dict[str, list[float]]] = {arm: {} for arm in arms}
    for result in results:
        if result.ok and metric in result.metrics and result.arm in by_arm:
            by_arm[result.arm].setdefault(result.task, []).append(result.metrics[metric])
    if any(len(tasks) < 2 for tasks in by_arm.values()):
        return []
    rows = []
    for arm in arms:
        iqm, low, high = iqm_interval(by_arm[arm])
        row: dict[str, Any] = {
            "arm": arm,
            "metric": metric,
            "tasks": len(by_arm[arm]),
            "iqm": iqm,
            "iqm_low": low,
            "iqm_high": high,
        }
        if arm != arms[0] and set(by_arm[arm]) == set(by_arm[arms[0]]):
            p, p_low, p_high = probability_of_improvement_interval(by_arm[arms[0]], by_arm[arm])
            row |= {"probability_of_improvement": p, "poi_low": p_low, "poi_high": p_high}
        rows.append(row)
    return rows


def build_report(eval_id: str, store: Store | None = None) -> Report:
    """Read an eval's record and compute its report (intervals, groups, errors, cost, manifest)."""
    store = store or Store()
    row = store.find_eval(eval_id)  # the id, or a unique prefix of it
    if row is None:
        raise SeqInputError(f"no eval has id {eval_id!r} (seq eval ls lists them).")
    eval_id = row.id
    results = store.episodes(eval_id)
    arms = row.manifest.arm_names
    table, problems, comparisons = analyse(results, store.scores(eval_id), arms, row.arguments.threshold)
    aggregate = across_tasks(results, arms, comparisons[0].comparison.metric) if comparisons else []
    cost = {
        "wall_s": row.wall_s,
        "core_s": sum(r.cpu_s for r in results) + row.setup_cpu_s,
        "episode_s": sum(r.duration_s for r in results),
    }
    return Report(
        eval_id=row.id,
        status=row.status,
        policy=f"{row.policy}@v{row.policy_version}",
        benchmark=f"{row.benchmark}@v{row.benchmark_version}",
        done=len(results),
        total=store.count_items(eval_id),
        groups=table,
        problems=problems,
        cost=cost,
        manifest=row.manifest,
        arguments=row.arguments,
        episodes=results,
        arms=arms,
        comparisons=comparisons,
        across_tasks=aggregate,
        schema_version=store.schema_version,
    )
