"""A policy's evals on one benchmark over time: `seq eval trend POLICY --benchmark B`.

Every eval of the pairing, scheduled or run by hand, oldest first, with its policy version, the
metric and its 95% interval (the report's own, `seq.report`) and the episodes it lost to errors;
then each version against the one before it, paired on the episodes (condition, trial) both
ran, with the report's paired statistics (`seq.stats.compare_paired`), the episodes left out and
why, and the arms and parameters compared. The eval that stands for a version is the one with the
most episodes on the benchmark's full conditions, or the one the user names
(`seq.scheduling.trend_step`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from seq.errors import SeqInputError
from seq.record.episode import EpisodeResult
from seq.record.schedules import Schedules
from seq.record.store import EvalRow, Store
from seq.report.eval_report import Report, build_report
from seq.report.report_content import finite
from seq.scheduling import trend_step
from seq.scheduling.metric import primary_metric
from seq.stats import check_threshold


@dataclass(frozen=True)
class TrendPoint:
    """One eval of the pairing (one arm of it, where it ran several): its metric and interval,
    its episodes and how many of them errored (left out of the metric), the conditions behind its
    n, whether it ran every task
    of the benchmark (`full`), and the arm's parameters (`side.name` → value, every one used)."""

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
    errors: int = 0
    full: bool = True
    parameters: dict[str, Any] = field(default_factory=dict)
    given: dict[str, str] = field(default_factory=dict)  # the values given for the arm (`params`)
    conditions: int = 0  # the conditions (task, seed, variation) its n episodes ran
    effective_n: float | None = None  # what they are worth as independent episodes (the report's)


@dataclass(frozen=True)
class TrendStep:
    """A version against the previous one on their shared episodes; `comparison` is
    `seq.stats.Comparison` as a dict (None with `note` where nothing pairs up). `verdict`: the
    comparison's, or what the newer version lost to errors where it lost any. `left_out`: the
    episodes (condition|trial) left out of the comparison, by why (`trend_step.LEFT_OUT`).
    `caveats`: why an eval stands for its version where it is not plainly the one;
    `no_interval`: why the difference has no interval, where it has none. `given`: each side's
    values given (`side.name` → value), `differing`: the parameters whose values differ,
    name → [older, newer]."""

    baseline_version: int
    version: int
    baseline_eval: str
    eval_id: str
    comparison: dict[str, Any] | None
    note: str | None = None
    caveats: list[str] = field(default_factory=list)
    no_interval: str | None = None
    baseline_arm: str = ""
    arm: str = ""
    verdict: str | None = None
    left_out: dict[str, list[str]] = field(default_factory=dict)
    given: list[dict[str, str]] = field(default_factory=list)
    differing: dict[str, list[Any]] = field(default_factory=dict)


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
    evals: Sequence[str] = (),
) -> Trend:
    """Every eval of `policy` on `benchmark` by version and date, `metric` (default: `success`,
    else the benchmark's first) with its interval, and each version paired against the previous.
    `evals`: ids (or unique prefixes) of evals to stand for their versions, at most one a version."""
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
                    sum(not e.ok for e in mine),
                    _full(row),
                    trend_step.flat_parameters(arm.parameters),
                    dict(arm.params),
                    (found.conditions or 0) if found else 0,
                    found.effective_n if found else None,
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
    named = _named(evals, points, store, name, str(benchmark))
    chosen = chosen or "success"
    steps = _steps(points, episodes, reports, chosen, threshold, named)
    return Trend(name, str(benchmark), chosen, points, steps)


def _full(row: EvalRow) -> bool:
    """Whether the eval ran every task of the suites it ran (no `--tasks`)."""
    return not row.arguments.tasks


def _named(
    evals: Sequence[str], points: list[TrendPoint], store: Store, name: str, benchmark: str
) -> dict[int, str]:
    """Each version's eval the user named: version → eval id; a name that is no eval of the
    pairing, or a second for one version, is refused."""
    if isinstance(evals, str):
        evals = [evals]
    named: dict[int, str] = {}
    for text in evals:
        try:
            row = store.find_eval(str(text))
        except SeqInputError as error:  # a prefix several ids share
            raise SeqInputError(f"--eval {text}: {error}") from None
        mine = [p for p in points if row is not None and p.eval_id == row.id]
        if not mine:
            raise SeqInputError(
                f"--eval {text}: no eval of {name} on {benchmark} has that id (the trend lists them)."
            )
        version = mine[0].policy_version
        if named.get(version, mine[0].eval_id) != mine[0].eval_id:
            raise SeqInputError(
                f"--eval {text}: v{version} already has {named[version]} named; name one eval a version."
            )
        named[version] = mine[0].eval_id
    return named


def _steps(
    points: list[TrendPoint],
    episodes: dict[tuple[str, str], list[EpisodeResult]],
    reports: dict[str, Report],
    metric: str,
    threshold: float,
    named: dict[int, str],
) -> list[TrendStep]:
    """Each version's standing eval (`trend_step.stand_in`) against the previous version's, on
    the episodes both ran."""
    by_version: dict[int, list[TrendPoint]] = {}
    for point in points:  # oldest first
        by_version.setdefault(point.policy_version, []).append(point)
    standing: dict[int, tuple[TrendPoint, str | None]] = {}
    for version, mine in by_version.items():
        candidates = [
            trend_step.Candidate(p.eval_id, p.status, p.episodes, p.full, p.created_at) for p in mine
        ]
        index, caveat = trend_step.stand_in(version, candidates, named.get(version))
        standing[version] = mine[index], caveat
    versions = sorted(by_version)
    steps = []
    for before, after in zip(versions, versions[1:], strict=False):
        (a, a_caveat), (b, b_caveat) = standing[before], standing[after]
        step = TrendStep(
            before,
            after,
            a.eval_id,
            b.eval_id,
            None,
            caveats=[caveat for caveat in (a_caveat, b_caveat) if caveat],
            baseline_arm=a.arm,
            arm=b.arm,
            given=[a.given, b.given],
            differing=trend_step.differing(a.parameters, b.parameters),
        )
        if a.benchmark_version != b.benchmark_version:
            note = f"they ran benchmark versions v{a.benchmark_version} and v{b.benchmark_version}"
            steps.append(replace(step, note=note + ": not the same episodes"))
            continue
        pairing = trend_step.pair(episodes[(a.eval_id, a.arm)], episodes[(b.eval_id, b.arm)], metric)
        step = replace(step, left_out=pairing.left_out)
        if not pairing.keys:
            note = f"no episode (condition, trial) that both ran has {metric!r}"
            verdict = trend_step.step_verdict(None, pairing, before, after)
            steps.append(replace(step, note=note, verdict=verdict))
            continue
        kinds = reports[b.eval_id].kinds
        kind = kinds[metric].kind if metric in kinds else None
        compared = trend_step.compare(pairing, metric, threshold, kind)
        steps.append(
            replace(
                step,
                comparison=compared,
                no_interval=trend_step.no_interval(compared),
                verdict=trend_step.step_verdict(compared, pairing, before, after),
            )
        )
    return steps
