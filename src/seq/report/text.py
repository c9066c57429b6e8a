"""The report's lines of prose: headline, partial and sequential notes, the methods footnote, the
adapter, cost and manifest. Shared by the terminal and Markdown views."""

from __future__ import annotations

from typing import Any

from seq.record.manifest import Manifest
from seq.record.states import EvalStatus
from seq.record.store import CANCELED, FAILED, error_line
from seq.report.report_content import ReportContent, Unfinished
from seq.report.table_views import method_name
from seq.stats import SMALL_N

# what records written before 'undecided (not significant)' say for a test that reached its horizon
OLD_DECISIONS = {"no difference": "undecided (not significant)"}


def headline(report: ReportContent) -> str:
    state = f"{report.status}, {report.done}/{report.total} episodes"
    return f"{report.title} · eval {report.eval_id} · {state}"


LISTED = 20  # unfinished items listed one per line; the rest are counted


def partial_line(report: ReportContent) -> str | None:
    if not report.partial:
        return None
    if report.compared_evals:
        return _compared_partial_line(report)
    if report.status == FAILED and report.all_errored and report.done == report.total:
        return (
            f"FAILED: all {report.done} episodes errored, so nothing was measured (their errors are "
            f"below; seq eval run --rerun-failed {report.eval_id} runs them again)."
        )
    tried = sum(1 for entry in report.unfinished if entry.attempts)
    if tried:
        untried = len(report.unfinished) - tried
        rest = f"; {untried} more did not run" if untried else ""
        return (
            f"INCOMPLETE: these results cover {report.done} of {report.total} episodes; {tried} "
            f"work items were cut short by the infrastructure, not by the policy or the benchmark "
            f"(below){rest}; seq eval run --resume {report.eval_id} runs them again."
        )
    running = report.status == EvalStatus.RUNNING
    resume = "" if running else f"; seq eval run --resume {report.eval_id} runs the rest"
    failure = error_line(report.error)
    state = f"failed: {failure}" if report.status == FAILED and failure else f"is {report.status}"
    if report.status == CANCELED and failure:  # stopped by a caller that said why (a budget)
        state += f": {failure.rstrip('.')}"
    return (
        f"PARTIAL: these results cover {report.done} of {report.total} episodes (the eval {state}{resume})."
    )


def unfinished_lines(report: ReportContent) -> list[str]:
    """One line per reason an infrastructure failure left work items without a result: the item,
    or how many share the reason and the first of them (the first `LISTED` reasons, then how
    many more items)."""
    by_reason: dict[str, list[Unfinished]] = {}
    for entry in report.unfinished:
        if entry.attempts:
            by_reason.setdefault(entry.reason, []).append(entry)
    lines = []
    for reason, entries in list(by_reason.items())[:LISTED]:
        first = entries[0]
        arm = f" (arm {first.arm})" if first.arm and not first.item_id.startswith(first.arm + "/") else ""
        named = (
            f"{first.item_id}{arm}"
            if len(entries) == 1
            else f"{len(entries)} work items (first {first.item_id}{arm})"
        )
        lines.append(f"{named}: {reason}")
    rest = sum(len(entries) for entries in list(by_reason.values())[LISTED:])
    if rest:
        lines.append(f"… and {rest} more (seq eval report {report.eval_id} --json lists them)")
    return lines


def rerun_line(report: ReportContent) -> str | None:
    """How many episodes ran again (`--rerun-failed`), and which attempt counts."""
    if not report.reruns:
        return None
    noun = "episode was" if report.reruns == 1 else "episodes were"
    return (
        f"{report.reruns} {noun} run again (--rerun-failed): each counts by its last attempt; "
        "the record keeps every attempt."
    )


def _compared_partial_line(report: ReportContent) -> str:
    """Two evals compared: the episodes left out have no partner; an unfinished eval can resume."""
    statuses = report.status.split("/") if "/" in report.status else [report.status] * 2
    unfinished = [
        f"{eval_id} is {status}; seq eval run --resume {eval_id} runs its rest"
        for eval_id, status in zip(report.compared_evals, statuses, strict=False)
        if status != EvalStatus.COMPLETED
    ]
    return (
        f"PARTIAL: these results cover the {report.done} of {report.total} episodes that pair up "
        "(the others have no partner in the other eval" + "".join(f"; {line}" for line in unfinished) + ")."
    )


def sequential_line(report: ReportContent) -> str | None:
    s = report.sequential
    if not s:
        return None
    interval = s.interval
    decision = OLD_DECISIONS.get(s.decision, s.decision)

    def three(value: Any) -> str:
        return "—" if value is None else f"{value:.3f}"

    return (
        f"Sequential test ({s.test}, α={s.alpha}, on {s.metric}): {decision} at look "
        f"{s.look} of {s.looks}, after {s.pairs_used} of {s.pairs_planned} planned pairs; "
        + (
            f"Z={s.statistic:.2f} against the boundary ±{s.boundary:.2f}; "
            if s.statistic is not None and s.boundary is not None
            else "no discordant pair yet, so no test statistic; "
        )
        + f"B − A = {three(interval['difference'])}, repeated {interval['level']:.0%} interval "
        f"[{three(interval['low'])}, {three(interval['high'])}] (Tango's score interval widened to "
        "the boundary: valid under the stopping rule)."
    )


def _method_in(method: str, methods: dict[str, list[str]]) -> str:
    """A method's name, and where a metric's groups use several, which of them use this one:
    `zero width (every value equal) in 2 of 4 groups (task a, task b)`."""
    if len(methods) == 1:
        return method_name(method)
    groups, total = methods[method], sum(len(where) for where in methods.values())
    named = f" ({', '.join(groups)})" if len(groups) <= 3 else ""
    return f"{method_name(method)} in {len(groups)} of {total} groups{named}"


def methods_lines(report: ReportContent) -> list[str]:
    """The footnote: each metric's kind and interval method; a report with no metric says why."""
    used: dict[str, dict[str, list[str]]] = {}  # metric -> method -> the groups it was used in
    for group in report.groups:
        for metric in group.metrics:
            where = "overall" if group.kind == "overall" else f"{group.kind} {group.name}"
            where += f" ({group.arm})" if group.arm and len(report.arms) > 1 else ""
            used.setdefault(metric.name, {}).setdefault(metric.method, []).append(where)
    if not used:
        if not report.episodes:
            return ["No episode has finished yet, so there is no metric and no interval."]
        return ["No episode finished without an error, so there is no metric and no interval."]
    parts = []
    for name, methods in used.items():
        kind = report.kinds.get(name)
        label = f"{name} ({kind.kind})" if kind is not None else name
        parts.append(f"{label}: {', '.join(_method_in(m, methods) for m in sorted(methods))}")
    lines = ["95% intervals — " + "; ".join(parts) + f". ⚠ marks n < {SMALL_N}."]
    lines += evidence_lines(report)
    decided = [
        f"{name}: {kind.note}" if kind.note else f"{name} is a {kind.kind} by its values"
        for name, kind in report.kinds.items()
        if kind.note or kind.source == "values"
    ]
    if decided:
        lines.append(
            "Metric kinds — "
            + "; ".join(decided)
            + " (declare them: @seq.benchmark(metrics={'name': 'rate' or 'mean'}))."
        )
    return lines


def evidence_lines(report: ReportContent) -> list[str]:
    """What the episodes are worth where trials repeat conditions: the unit of evidence is the
    condition, and identical trials say that only more seeds would add any."""
    evidence = report.trials
    if evidence is None or not evidence.repeated:
        return []
    arms = f" by {evidence.arms} arms" if evidence.arms > 1 else ""
    line = (
        f"Evidence — {evidence.episodes} episodes{arms} in {evidence.conditions} conditions (up to "
        f"{evidence.most_trials} trials each): trials of one condition are repeated measures, so "
        "each interval and test counts the effective n (eff. n), from how alike the trials were."
    )
    if evidence.identical:
        line += (
            " Every trial of every condition gave the same outcome and steps: more trials of a "
            "deterministic policy add no evidence; more seeds do."
        )
    return [line, *_edge_lines(report)]


def _edge_lines(report: ReportContent) -> list[str]:
    """A clustered rate near 0 or 1 from few conditions counts each condition once: why, in one
    sentence (`seq.stats.clusters.edge_guarded`)."""
    from seq.stats.clusters import EDGE_CONDITIONS, near_edge

    if report.trials is not None and report.trials.identical:
        return []  # each condition already counts once, and the evidence line says why
    edges = [
        metric
        for group in report.groups
        for metric in group.metrics
        if group.kind == "overall"
        and metric.clustered
        and (kind := report.kinds.get(metric.name)) is not None
        and kind.kind == "rate"
        and near_edge(metric.value)
        and (metric.conditions or 0) < EDGE_CONDITIONS
    ]
    if not edges:
        return []
    metric = edges[0]
    return [
        f"Near the edge — {metric.name} {metric.value:.2f} rests on {metric.conditions} conditions, "
        "each counted once: a rate this near 0 or 1 from fewer than "
        f"{EDGE_CONDITIONS} conditions may lack the rare ones that go the other way, which its "
        "trials cannot show (docs/statistics.md). More seeds, not more trials, narrow it."
    ]


def adapter_lines(report: ReportContent) -> list[str]:
    """The adapter's lossy transforms with their reasons (each arm's, where the arms' differ)."""
    arms = [arm for arm in report.manifest.arms if arm.adapter]
    lines: list[str] = []
    seen: list[Any] = []
    for arm in arms:
        adapter = arm.adapter
        assert adapter is not None
        if adapter.lossy in seen:
            continue
        seen.append(adapter.lossy)
        who = f" (arm {arm.name})" if len(arms) > 1 and arm.name else ""
        if not adapter.lossy:
            lines.append(f"adapter {adapter.label}{who}: lossless, every transform's round trip checked")
        for entry in adapter.lossy:
            lines.append(
                f"adapter {adapter.label}{who}: lossy {entry['where']} {entry['transform']}: "
                f"{entry['reason']}"
            )
    return lines


def cost_line(report: ReportContent) -> str:
    cost = report.cost
    return f"cost: {cost['wall_s']:.1f} s wall time, {cost['core_s']:.1f} core-seconds used"


def parameter_text(parameters: dict[str, dict[str, Any]]) -> str:
    """`benchmark.obs_mode=state, policy.noise=0.3`: every value set (None, unset, left out)."""
    shown = [
        f"{side}.{name}={value}"
        for side, values in parameters.items()
        for name, value in values.items()
        if value is not None
    ]
    return ", ".join(shown) or "none"


def _shared_sides(manifest: Manifest) -> dict[str, dict[str, Any]]:
    """The values every arm ran with: with several arms, each arm's own policy values are on its
    own line, and a side whose values differ between arms is left to those lines."""
    if len(manifest.arms) <= 1:
        return manifest.parameters
    first = manifest.arms[0].parameters
    return {
        side: values
        for side, values in first.items()
        if side != "policy" and all(arm.parameters.get(side) == values for arm in manifest.arms)
    }


def manifest_lines(report: ReportContent, whole_hashes: bool = False) -> list[str]:
    """The manifest, one fact a line; `whole_hashes`: every sha256 in full (Markdown, HTML), not
    its first 16 digits (the terminal)."""
    manifest = report.manifest

    def sha(digest: str) -> str:
        return digest if whole_hashes else f"{digest[:16]}…"

    shared = _shared_sides(manifest)

    environment = manifest.environment
    bench, policy = manifest.benchmark, manifest.policy
    packages = ", ".join(f"{k} {v}" for k, v in (environment.packages if environment else {}).items())
    seeds = manifest.seeds
    seed_text = ", ".join(map(str, seeds[:20])) + (" …" if len(seeds) > 20 else "")
    return [
        f"seq {manifest.seq.version} (git {manifest.seq.git_sha or 'n/a'})",
        f"benchmark {bench.label} sha256 {sha(bench.sha256)}",
        f"policy {policy.label} sha256 {sha(policy.sha256)}",
        *([f"adapter {adapter.label} sha256 {sha(adapter.sha256)}"] if (adapter := manifest.adapter) else []),
        *[
            f"weights{f' of arm {arm.name}' if arm.name else ''}: {arm.weights.get('class', '?')} "
            f"sha256 {sha(str(arm.weights.get('sha256', '?')))} ({arm.weights.get('path', '?')})"
            for arm in manifest.arms
            if arm.weights
        ],
        *[
            f"arm {arm.name}: {arm.policy} with "
            + parameter_text({k: v for k, v in arm.parameters.items() if k not in shared})
            for arm in manifest.arms
            if len(manifest.arms) > 1
        ],
        f"seeds: {seed_text}",
        ("parameters of every arm: " if len(manifest.arms) > 1 else "parameters: ") + parameter_text(shared),
        f"python {environment.python if environment else '?'} on "
        f"{environment.platform if environment else '?'}",
        f"packages: {packages or 'n/a'}",
        *_isolation_lines(manifest),
    ]


def _isolation_lines(manifest: Manifest) -> list[str]:
    """Where the benchmark ran: its image, the volume version it read, its secrets (names only),
    memory and device."""
    lines = []
    if image := manifest.image:
        lines.append(f"image {image.key}")
    if assets := manifest.assets:
        seen = f" ({assets.seen})" if assets.seen else ""
        lines.append(f"assets: volume {assets.volume}@{assets.version}{seen}")
    if secrets := manifest.secrets:
        lines.append(f"secrets: {', '.join(secrets.names)} (values never recorded)")
    if memory := manifest.memory:
        lines.append(f"memory: {memory.total} ({memory.per_worker} per worker)")
    gpu = manifest.gpu
    if gpu and gpu.declared != "cpu":
        lines.append(f"gpu: declared {gpu.declared}, ran on {gpu.used}")
    return lines
