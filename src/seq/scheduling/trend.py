"""A policy's evals on one benchmark over time: `seq eval trend POLICY --benchmark B`.

Every eval of the pairing, scheduled or run by hand, oldest first, with its policy version, the
metric and its 95% interval (the report's own, `seq.report`); then each version against the one
before it, paired on the episodes (task, seed, trial) both ran, with the report's paired
statistics (`seq.stats.compare_paired`). A version's newest completed eval stands for it in the
pairing; where none completed (a budget stopped them), its newest eval with results does, and the
comparison says so.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from seq.errors import SeqInputError
from seq.record.episode import EpisodeResult
from seq.record.schedules import Schedules
from seq.record.store import COMPLETED, Store
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
    `seq.stats.Comparison` as a dict (None with `note` where nothing pairs up). `caveats`: an
    eval that did not complete stands for its version; `no_interval`: why the difference has no
    interval, where it has none."""

    baseline_version: int
    version: int
    baseline_eval: str
    eval_id: str
    comparison: dict[str, Any] | None
    note: str | None = None
    caveats: list[str] = field(default_factory=list)
    no_interval: str | None = None


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
    known = sorted({each for report in reports.values() for each in report.kinds})
    if metric is not None and metric not in known:
        raise SeqInputError(
            f"--metric {metric}: no eval of {name} on {benchmark} has it; its metrics are "
            f"{', '.join(known) or 'none yet (every episode errored)'}."
        )
    chosen = chosen or "success"
    return Trend(name, str(benchmark), chosen, points, _steps(points, episodes, reports, chosen, threshold))


def _stand_in(points: list[TrendPoint]) -> tuple[TrendPoint, str | None]:
    """The eval that stands for a version (its points, oldest first): the newest completed one
    with a value; else the newest with a value, with a caveat saying so; else the newest."""
    completed = [p for p in points if p.status == COMPLETED and p.value is not None]
    if completed:
        return completed[-1], None
    valued = [p for p in points if p.value is not None]
    chosen = (valued or points)[-1]
    return chosen, (
        f"v{chosen.policy_version} has no completed eval: its newest with results, "
        f"{chosen.eval_id} ({chosen.status}, {chosen.episodes} episodes), stands for it"
    )


def _no_interval(compared: dict[str, Any]) -> str | None:
    """Why the difference has no interval, where it has none."""
    difference = compared["difference"]
    if math.isfinite(difference["low"]) and math.isfinite(difference["high"]):
        return None
    if compared["n"] < 2:
        return f"too few shared episodes ({compared['n']}; it takes 2)"
    return "the bootstrap of the differences is degenerate"


def _steps(
    points: list[TrendPoint],
    episodes: dict[tuple[str, str], list[EpisodeResult]],
    reports: dict[str, Report],
    metric: str,
    threshold: float,
) -> list[TrendStep]:
    """Each version's standing eval (`_stand_in`) against the previous version's, on the
    episodes both ran."""
    by_version: dict[int, list[TrendPoint]] = {}
    for point in points:  # oldest first
        by_version.setdefault(point.policy_version, []).append(point)
    versions = sorted(by_version)
    steps = []
    for before, after in zip(versions, versions[1:], strict=False):
        (a, a_caveat), (b, b_caveat) = _stand_in(by_version[before]), _stand_in(by_version[after])
        caveats = [caveat for caveat in (a_caveat, b_caveat) if caveat]
        step = TrendStep(before, after, a.eval_id, b.eval_id, None, caveats=caveats)
        if a.benchmark_version != b.benchmark_version:
            note = f"they ran benchmark versions v{a.benchmark_version} and v{b.benchmark_version}"
            steps.append(replace(step, note=note + ": not the same episodes"))
            continue
        theirs = {e.pair_key: e for e in episodes[(a.eval_id, a.arm)] if e.ok and metric in e.metrics}
        pairs = [
            (theirs[e.pair_key].metrics[metric], e.metrics[metric])
            for e in episodes[(b.eval_id, b.arm)]
            if e.ok and metric in e.metrics and e.pair_key in theirs
        ]
        if not pairs:
            steps.append(replace(step, note=f"no episode (task, seed, trial) that both ran has {metric!r}"))
            continue
        kinds = reports[b.eval_id].kinds
        kind = kinds[metric].kind if metric in kinds else None
        a_values, b_values = zip(*pairs, strict=True)
        compared = asdict(compare_paired(a_values, b_values, metric, threshold, kind=kind))
        steps.append(replace(step, comparison=compared, no_interval=_no_interval(compared)))
    return steps
