"""A policy's evals on one benchmark over time: `seq eval trend POLICY --benchmark B`.

Every eval of the pairing, scheduled or run by hand, oldest first, with its policy version, the
metric and its 95% interval (the report's own, `seq.report`); then each version against the one
before it, paired on the episodes (task, seed, trial) both ran, with the report's paired
statistics (`seq.stats.compare_paired`). A version's newest eval stands for it in the pairing.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from seq.errors import SeqInputError
from seq.record.episode import EpisodeResult
from seq.record.schedules import Schedules
from seq.record.store import Store
from seq.report.report import Report, build_report, finite
from seq.scheduling.metric import primary_metric
from seq.stats import check_threshold, compare_paired


@dataclass(frozen=True)
class TrendPoint:
    """One eval of the pairing (one arm of it, where it ran several): its metric and interval."""

    eval_id: str
    created_at: float
    policy_version: int
    benchmark_version: int
    status: str
    source: str  # "manual", or "schedule #N (time|deploy)"
    arm: str
    episodes: int
    value: float | None
    low: float | None
    high: float | None
    n: int
    method: str | None


@dataclass(frozen=True)
class TrendStep:
    """A version against the previous one on their shared episodes; `comparison` is
    `seq.stats.Comparison` as a dict (None with `note` where nothing pairs up)."""

    baseline_version: int
    version: int
    baseline_eval: str
    eval_id: str
    comparison: dict[str, Any] | None
    note: str | None = None


@dataclass
class Trend:
    policy: str
    benchmark: str
    metric: str
    points: list[TrendPoint] = field(default_factory=list)
    steps: list[TrendStep] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return finite(asdict(self))

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, default=str, allow_nan=False)


def _sources(store: Store) -> dict[str, str]:
    book = Schedules(store)
    return {run.eval_id: f"schedule #{run.schedule_id} ({run.cause})" for run in book.runs() if run.eval_id}


def trend(
    policy: str,
    benchmark: str,
    metric: str | None = None,
    threshold: float = 0.05,
    store: Store | None = None,
) -> Trend:
    """Every eval of `policy` on `benchmark` by version and date, `metric` (default: `success`,
    else the benchmark's first) with its interval, and each version paired against the previous."""
    threshold = check_threshold(threshold)
    store = store or Store()
    name = str(policy).partition("@")[0]
    sources = _sources(store)
    points: list[TrendPoint] = []
    episodes: dict[tuple[str, str], list[EpisodeResult]] = {}
    reports: dict[str, Report] = {}
    chosen = metric
    for row in reversed(store.evals(benchmark=str(benchmark))):  # oldest first
        arms = [arm for arm in row.manifest.arms if arm.policy_name == name]
        if not arms:
            continue
        report = reports[row.id] = build_report(row.id, store)
        for arm in arms:
            found = primary_metric(report, chosen, arm.name)
            if found is not None and chosen is None:
                chosen = found.name  # one metric for the whole trend: the first eval's
            mine = [e for e in report.episodes if e.arm == arm.name]
            episodes[(row.id, arm.name)] = mine
            points.append(
                TrendPoint(
                    row.id,
                    row.created_at,
                    arm.policy_version,
                    row.benchmark_version,
                    row.status,
                    sources.get(row.id, "manual"),
                    arm.name,
                    len(mine),
                    found.value if found else None,
                    found.low if found else None,
                    found.high if found else None,
                    found.n if found else 0,
                    found.method if found else None,
                )
            )
    if not points:
        raise SeqInputError(f"no eval has run {name} on {benchmark} (seq eval ls lists the evals).")
    chosen = chosen or "success"
    return Trend(name, str(benchmark), chosen, points, _steps(points, episodes, reports, chosen, threshold))


def _steps(
    points: list[TrendPoint],
    episodes: dict[tuple[str, str], list[EpisodeResult]],
    reports: dict[str, Report],
    metric: str,
    threshold: float,
) -> list[TrendStep]:
    """Each version's newest eval against the previous version's, on the episodes both ran."""
    newest: dict[int, TrendPoint] = {}
    for point in points:  # oldest first: the last one kept is the newest
        newest[point.policy_version] = point
    versions = sorted(newest)
    steps = []
    for before, after in zip(versions, versions[1:], strict=False):
        a, b = newest[before], newest[after]
        step = TrendStep(before, after, a.eval_id, b.eval_id, None)
        if a.benchmark_version != b.benchmark_version:
            note = f"they ran benchmark versions v{a.benchmark_version} and v{b.benchmark_version}"
            steps.append(TrendStep(**{**asdict(step), "note": note + ": not the same episodes"}))
            continue
        theirs = {e.pair_key: e for e in episodes[(a.eval_id, a.arm)] if e.ok and metric in e.metrics}
        pairs = [
            (theirs[e.pair_key].metrics[metric], e.metrics[metric])
            for e in episodes[(b.eval_id, b.arm)]
            if e.ok and metric in e.metrics and e.pair_key in theirs
        ]
        if not pairs:
            note = f"no episode (task, seed, trial) that both ran has {metric!r}"
            steps.append(TrendStep(**{**asdict(step), "note": note}))
            continue
        kinds = reports[b.eval_id].kinds
        kind = kinds[metric].kind if metric in kinds else None
        a_values, b_values = zip(*pairs, strict=True)
        compared = compare_paired(a_values, b_values, metric, threshold, kind=kind)
        steps.append(TrendStep(**{**asdict(step), "comparison": asdict(compared)}))
    return steps
