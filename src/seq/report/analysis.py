"""What a report computes from episodes: each metric's kind for the eval, every group's intervals,
the problems, each arm's paired comparisons with the first, and rliable's across-task view."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from seq.record.episode import ERROR, TIMED_OUT, EpisodeResult
from seq.record.groups import groups
from seq.record.manifest import Manifest
from seq.report.problems import Problem, non_finite_problems
from seq.report.rows import ComparisonRow, GroupRow, MetricRow, TrialEvidence
from seq.stats import MetricKind, clustered_interval, metric_kinds, usable_threshold

BUILT_IN_METRICS = ("steps", "return", "duration_s")
NAN_ACTIONS = "nan_actions"  # steps whose action held a NaN; recorded only where some did, else 0
IQM_METHOD = "iqm-stratified-bootstrap"  # rliable: IQM of per-task means, percentile interval
POI_METHOD = "poi-stratified-bootstrap"  # rliable: P(arm > A), Mann–Whitney per task


def _metric_names(results: list[EpisodeResult]) -> list[str]:
    names: dict[str, None] = {}
    for result in results:
        for key in result.metrics:
            if key not in BUILT_IN_METRICS:
                names.setdefault(key)
    return list(names) + list(BUILT_IN_METRICS)


def _values(counted: list[EpisodeResult], name: str) -> list[float]:
    """The metric's values over `counted`; `nan_actions` is 0 where an episode did not record it."""
    return [value for value, _ in _measured(counted, name)]


def _measured(counted: list[EpisodeResult], name: str) -> list[tuple[float, EpisodeResult]]:
    """Each of `counted` that has the metric, with its value (`nan_actions`: 0 where not recorded)."""
    if name == NAN_ACTIONS:
        return [(r.metrics.get(name, 0.0), r) for r in counted]
    return [(r.metrics[name], r) for r in counted if name in r.metrics]


def eval_kinds(
    results: list[EpisodeResult], names: list[str], declared: Mapping[str, str] | None
) -> dict[str, MetricKind]:
    """Each metric's kind for the whole eval (`seq.stats.kinds`), from every episode that counts."""
    counted = [r for r in results if r.status != ERROR]
    values = {name: _values(counted, name) for name in names}
    return metric_kinds({name: seen for name, seen in values.items() if seen}, declared)


def _group_row(
    key: tuple[str, str, str],
    members: list[EpisodeResult],
    names: list[str],
    scored: dict[str, float] | None,
    kinds: dict[str, MetricKind],
) -> GroupRow:
    arm, kind, name = key
    counted = [r for r in members if r.status != ERROR]
    metrics = []
    for metric in names:
        measured = _measured(counted, metric)
        if scored and metric in scored:
            metrics.append(MetricRow(metric, scored[metric], None, None, len(counted), "score hook", "score"))
        elif measured:
            values = [value for value, _ in measured]
            clusters = [r.condition_key for _, r in measured]
            strata = [r.task for _, r in measured]
            interval = clustered_interval(values, clusters, strata, kind=kinds[metric].kind)
            metrics.append(
                MetricRow(
                    metric,
                    interval.mean,
                    interval.low,
                    interval.high,
                    interval.n,
                    interval.method,
                    conditions=interval.conditions,
                    effective_n=interval.effective_n,
                )
            )
    for score_name, value in (scored or {}).items():
        if score_name not in names:
            metrics.append(MetricRow(score_name, value, None, None, len(counted), "score hook", "score"))
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
    threshold: float | None,
    kinds: dict[str, MetricKind],
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
                both = [(a, b) for a, b in pairs if metric in a.metrics and metric in b.metrics]
                if not both:
                    continue
                compared = compare_paired(
                    [a.metrics[metric] for a, _ in both],
                    [b.metrics[metric] for _, b in both],
                    metric,
                    threshold,
                    kind=kinds[metric].kind,
                    clusters=[a.condition_key for a, _ in both],
                    strata=[a.task for a, _ in both],
                )
                rows.append(ComparisonRow(arm, baseline, kind, name, compared))
    return rows


@dataclass(frozen=True)
class Analysis:
    """Everything a report computes from episodes: groups with their intervals, the problems,
    each arm's paired comparisons with the first, each metric's kind, and what its trials are worth."""

    groups: list[GroupRow]
    problems: list[Problem]
    comparisons: list[ComparisonRow]
    kinds: dict[str, MetricKind]
    trials: TrialEvidence | None = None


def trial_evidence(results: list[EpisodeResult]) -> TrialEvidence:
    """How many conditions the counted episodes ran (per arm), and whether repeating them changed
    anything: every trial of a condition with the same status, steps and metrics (wall time aside)."""
    counted = [r for r in results if r.status != ERROR]
    outcomes: dict[tuple[str, str], set[tuple]] = {}
    trials: dict[tuple[str, str], int] = {}
    for result in counted:
        key = (result.arm, result.condition_key)
        measured = tuple(sorted((k, v) for k, v in result.metrics.items() if k != "duration_s"))
        outcomes.setdefault(key, set()).add((result.status, result.steps, measured))
        trials[key] = trials.get(key, 0) + 1
    most = max(trials.values(), default=0)
    identical = most > 1 and all(len(seen) == 1 for seen in outcomes.values())
    conditions = len({condition for _, condition in trials})
    return TrialEvidence(len(counted), conditions, most, identical, len({arm for arm, _ in trials}))


def analyse(
    results: list[EpisodeResult],
    scores: dict,
    arms: list[str],
    threshold: float | None,
    declared: Mapping[str, str] | None = None,
) -> Analysis:
    """The groups, problems, comparisons and metric kinds of these episodes; `declared`: the
    benchmark's `metrics=` kinds. A `threshold` that is not in (0, 1) gives no equivalence verdict."""
    names = _metric_names(results)
    kinds = eval_kinds(results, names, declared)
    threshold = usable_threshold(threshold)
    problems = []
    table = []
    grouped = groups(results)
    for key, members in grouped.items():
        values, error = scores.get(key, (None, None))
        if error:
            arm, kind, name = key
            where = f"@seq.score for {kind} {name}" + (f" of arm {arm}" if arm else "")
            problems.append(Problem(where, "score_error", error, arm=arm))
        table.append(_group_row(key, members, names, values, kinds))
    for result in results:
        if result.status in (ERROR, TIMED_OUT):
            message = result.error or f"stopped after {result.duration_s:.1f} s and {result.steps} steps"
            problems.append(
                Problem(
                    result.item_id,
                    result.status,
                    message,
                    result.task,
                    result.seed,
                    result.arm,
                    result.failure,
                )
            )
        elif result.metrics.get(NAN_ACTIONS):
            message = "the policy sent actions holding NaN or inf (the metric nan_actions counts the steps)"
            problems.append(
                Problem(result.item_id, NAN_ACTIONS, message, result.task, result.seed, result.arm)
            )
    problems += non_finite_problems(results)
    comparisons = _comparisons(grouped, arms, names, threshold, kinds) if len(arms) > 1 else []
    return Analysis(table, problems, comparisons, kinds, trial_evidence(results))


def declared_kinds(*manifests: Manifest) -> dict[str, str]:
    """The metric kinds the benchmark declared (`@seq.benchmark(metrics=...)`), as recorded; the
    first manifest's where several declare one metric."""
    kinds: dict[str, str] = {}
    for manifest in reversed(manifests):
        declared = manifest.declared.get("metrics")
        if isinstance(declared, Mapping):
            kinds |= {str(k): v for k, v in declared.items()}
    return kinds


def across_tasks(results: list[EpisodeResult], arms: list[str], metric: str) -> list[dict[str, Any]]:
    """rliable's aggregate view of each arm (Agarwal et al. 2021): the interquartile mean of the
    per-task means with a stratified bootstrap interval, and each arm's probability of improvement
    over the first. Only where there are several tasks. A task's scores are its conditions' means
    (the mean of their trials), so the bootstrap resamples conditions within tasks: trials of one
    condition are repeated measures, not runs."""
    from seq.stats import iqm_interval, probability_of_improvement_interval

    trials: dict[str, dict[str, dict[str, list[float]]]] = {arm: {} for arm in arms}
    for result in results:
        if result.ok and metric in result.metrics and result.arm in trials:
            task = trials[result.arm].setdefault(result.task, {})
            task.setdefault(result.condition_key, []).append(result.metrics[metric])
    by_arm = {
        arm: {task: [sum(t) / len(t) for t in conditions.values()] for task, conditions in tasks.items()}
        for arm, tasks in trials.items()
    }
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
            "method": IQM_METHOD,
        }
        if arm != arms[0] and set(by_arm[arm]) == set(by_arm[arms[0]]):
            p, p_low, p_high = probability_of_improvement_interval(by_arm[arms[0]], by_arm[arm])
            row |= {
                "probability_of_improvement": p,
                "poi_low": p_low,
                "poi_high": p_high,
                "poi_method": POI_METHOD,
            }
        rows.append(row)
    return rows
