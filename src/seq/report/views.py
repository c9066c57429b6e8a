"""Views of a `Report`: the terminal (rich), Markdown, CSV. JSON is `Report.to_json`."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seq.record.manifest import Manifest
from seq.report.report import GroupRow, MetricRow, Report
from seq.stats import SMALL_N

KIND_TITLES = {"overall": "Overall", "suite": "Per suite", "task": "Per task"}
METHOD_NAMES = {
    "wilson": "Wilson score",
    "bootstrap-bca": "BCa bootstrap",
    "bootstrap-percentile": "percentile bootstrap (BCa degenerate)",
    "score hook": "value from @seq.score (replaces the mean; no interval)",
    "none (n=1)": "no interval (n=1)",
}


def _number(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def format_metric(metric: MetricRow) -> str:
    """`0.98 [0.90, 1.00]`, or the bare value where there is no interval."""
    if metric.low is None or metric.high is None:
        return _number(metric.value)
    return f"{_number(metric.value)} [{_number(metric.low)}, {_number(metric.high)}]"


def _metric_names(report: Report) -> list[str]:
    names: dict[str, None] = {}
    for group in report.groups:
        for metric in group.metrics:
            names.setdefault(metric.name)
    return list(names)


def _cells(group: GroupRow, names: list[str]) -> list[str]:
    by_name = {m.name: m for m in group.metrics}
    return [format_metric(by_name[n]) if n in by_name else "" for n in names]


def _n_cell(group: GroupRow) -> str:
    counted = group.episodes - group.errors
    return f"{counted}" + (" ⚠" if counted < SMALL_N else "")


@dataclass(frozen=True)
class TableView:
    """A titled table of text cells: what the terminal and Markdown views both draw."""

    title: str
    headers: list[str]
    rows: list[list[str]]


def group_tables(report: Report, kinds: list[str]) -> list[TableView]:
    """One table per group kind (overall, per suite, per task), with an arm column when the eval has
    several arms."""
    names = _metric_names(report)
    several = len(report.arms) > 1
    tables = []
    for kind in kinds:
        rows = [g for g in report.groups if g.kind == kind]
        if rows:
            label = kind if kind != "overall" else "group"
            headers = (["arm"] if several else []) + [label, "n", *names]
            cells = [([g.arm] if several else []) + [g.name, _n_cell(g), *_cells(g, names)] for g in rows]
            tables.append(TableView(KIND_TITLES[kind], headers, cells))
    return tables


def comparison_table(report: Report, every_task_metric: bool) -> TableView | None:
    """Each arm against the first, over paired episodes: rates, the paired table, the difference
    with its interval, the test and the verdict. Per suite and task, only the first metric unless
    asked (`every_task_metric`)."""
    if not report.comparisons:
        return None
    first_metric = report.comparisons[0].comparison.metric
    headers = [
        "arm",
        "group",
        "metric",
        "pairs",
        "rate A",
        "rate B",
        "both/A only/B only/neither",
        "B − A [95%]",
        "p",
        "verdict",
    ]
    rows = []
    for row in report.comparisons:
        c = row.comparison
        if row.kind != "overall" and not every_task_metric and c.metric != first_metric:
            continue
        table = c.table
        counts = f"{table.both}/{table.only_a}/{table.only_b}/{table.neither}" if table else "—"
        difference = c.difference
        rows.append(
            [
                row.arm,
                f"{row.kind} {row.name}" if row.kind != "overall" else "all",
                c.metric,
                f"{c.n}" + (" ⚠" if c.n < SMALL_N else ""),
                _interval_text(c.rate_a.mean, c.rate_a.low, c.rate_a.high),
                _interval_text(c.rate_b.mean, c.rate_b.low, c.rate_b.high),
                counts,
                _interval_text(difference.difference, difference.low, difference.high),
                "—" if c.p_value is None else f"{c.p_value:.3g}",
                c.verdict,
            ]
        )
    from seq.stats import agreeing_pairs_needed

    baseline = report.comparisons[0].baseline
    verdicts = {row.comparison.verdict_interval for row in report.comparisons}
    threshold = report.comparisons[0].comparison.threshold
    title = (
        f"Paired comparisons against arm {baseline} (A): B − A by {', '.join(sorted(verdicts))}; p is "
        f"McNemar's exact test; 'within threshold': the whole interval lies in ±{threshold} (with every "
        f"pair agreeing that takes {agreeing_pairs_needed('agresti-min', threshold)} pairs by "
        f"Agresti–Min, the interval used here, and {agreeing_pairs_needed('tango', threshold)} by Tango's "
        "stricter score interval)"
    )
    return TableView(title, headers, rows)


def across_tasks_table(report: Report) -> TableView | None:
    """rliable's view: each arm's IQM of per-task means, and its probability of improvement over A."""
    if not report.across_tasks:
        return None
    rows = []
    for row in report.across_tasks:
        improvement = (
            _interval_text(row["probability_of_improvement"], row["poi_low"], row["poi_high"])
            if "probability_of_improvement" in row
            else "—"
        )
        rows.append(
            [
                row["arm"],
                row["metric"],
                str(row["tasks"]),
                _interval_text(row["iqm"], row["iqm_low"], row["iqm_high"]),
                improvement,
            ]
        )
    title = (
        "Across tasks (Agarwal et al. 2021): interquartile mean of per-task means, stratified bootstrap "
        "95% interval; P(arm > A)"
    )
    return TableView(title, ["arm", "metric", "tasks", "IQM [95%]", "P(improvement) [95%]"], rows)


def _interval_text(value: float, low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return _number(value)
    return f"{_number(value)} [{_number(low)}, {_number(high)}]"


def _methods(report: Report) -> list[str]:
    used: dict[str, set[str]] = {}
    for group in report.groups:
        for metric in group.metrics:
            used.setdefault(metric.name, set()).add(metric.method)
    return [
        f"{name}: {', '.join(METHOD_NAMES.get(m, m) for m in sorted(methods))}"
        for name, methods in used.items()
    ]


def _headline(report: Report) -> str:
    state = f"{report.status}, {report.done}/{report.total} episodes"
    return f"{report.title} · eval {report.eval_id} · {state}"


def _partial_line(report: Report) -> str | None:
    if not report.partial:
        return None
    resume = f"; seq eval run --resume {report.eval_id} runs the rest" if report.status != "running" else ""
    return (
        f"PARTIAL: these results cover {report.done} of {report.total} episodes "
        f"(the eval is {report.status}{resume})."
    )


def _sequential_line(report: Report) -> str | None:
    s = report.sequential
    if not s:
        return None
    interval = s.interval
    return (
        f"Sequential test ({s.test}, α={s.alpha}, on {s.metric}): {s.decision} at look "
        f"{s.look} of {s.looks}, after {s.pairs_used} of {s.pairs_planned} planned pairs; "
        + (
            f"Z={s.statistic:.2f} against the boundary ±{s.boundary:.2f}; "
            if s.statistic is not None and s.boundary is not None
            else "no discordant pair yet, so no test statistic; "
        )
        + f"B − A = {interval['difference']:.3f}, "
        f"repeated {interval['level']:.0%} interval [{interval['low']:.3f}, {interval['high']:.3f}] "
        "(valid under the stopping rule)."
    )


def _adapter_lines(report: Report) -> list[str]:
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


def _cost_line(report: Report) -> str:
    cost = report.cost
    return f"cost: {cost['wall_s']:.1f} s wall time, {cost['core_s']:.1f} core-seconds used"


def _manifest_lines(report: Report) -> list[str]:
    manifest = report.manifest
    environment = manifest.environment
    bench, policy = manifest.benchmark, manifest.policy
    packages = ", ".join(f"{k} {v}" for k, v in (environment.packages if environment else {}).items())
    seeds = manifest.seeds
    seed_text = ", ".join(map(str, seeds[:20])) + (" …" if len(seeds) > 20 else "")
    return [
        f"seq {manifest.seq.version} (git {manifest.seq.git_sha or 'n/a'})",
        f"benchmark {bench.label} sha256 {bench.sha256[:16]}…",
        f"policy {policy.label} sha256 {policy.sha256[:16]}…",
        *(
            [f"adapter {adapter.label} sha256 {adapter.sha256[:16]}…"]
            if (adapter := manifest.adapter)
            else []
        ),
        *[
            f"arm {arm.name}: {arm.policy} with {arm.parameters['policy']}"
            for arm in manifest.arms
            if len(manifest.arms) > 1
        ],
        f"seeds: {seed_text}",
        f"parameters: {manifest.parameters}",
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


def print_report(report: Report, console: Any = None, compact: bool = False) -> None:
    """Print the report on the terminal with rich tables."""
    from rich.console import Console

    (console or Console()).print(report_renderable(report, compact))


def report_renderable(report: Report, compact: bool = False) -> Any:
    """The terminal view as one rich renderable (`compact`: the overall group only, for status)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list[Any] = [Text(_headline(report), style="bold")]
    partial = _partial_line(report)
    if partial:
        parts.append(Text(partial, style="yellow"))
    sequential = _sequential_line(report)
    if sequential:
        parts.append(Text(sequential, style="bold cyan"))
    if not compact:
        parts += [Text(line, style="yellow") for line in _adapter_lines(report)]
    tables = group_tables(report, ["overall"] if compact else list(KIND_TITLES))
    extra = [comparison_table(report, every_task_metric=False), across_tasks_table(report)]
    for view in tables + ([v for v in extra if v is not None] if not compact else []):
        table = Table(title=view.title, title_justify="left", header_style="bold")
        for index, header in enumerate(view.headers):
            numeric = header not in ("arm", "group", "suite", "task", "metric", "verdict")
            table.add_column(header, justify="right" if numeric else "left", no_wrap=index == 0)
        for cells in view.rows:
            table.add_row(*cells)
        parts.append(table)
    parts.append(Text("95% intervals — " + "; ".join(_methods(report)) + f". ⚠ marks n < {SMALL_N}."))
    if report.problems:
        counts = {
            status: sum(p.status == status for p in report.problems)
            for status in ("error", "timed_out", "score_error")
        }
        parts.append(
            Text(
                f"{counts['error']} episode error(s), {counts['timed_out']} timeout(s), "
                f"{counts['score_error']} score error(s)",
                style="red",
            )
        )
        if not compact:
            for problem in report.problems:
                parts.append(Text.assemble((problem.status, "red"), " ", problem.where))
                parts.append(Text(problem.message.rstrip()))
    parts.append(Text(_cost_line(report)))
    if not compact:
        parts.append(Text("manifest: " + " · ".join(_manifest_lines(report))))
    return Group(*parts)


def render_markdown(report: Report) -> str:
    lines = [
        f"# {report.title}",
        "",
        f"Eval `{report.eval_id}`: {report.status}, {report.done}/{report.total} episodes.",
        "",
    ]
    partial = _partial_line(report)
    if partial:
        lines += [f"> **{partial}**", ""]
    sequential = _sequential_line(report)
    if sequential:
        lines += [f"**{sequential}**", ""]
    views = group_tables(report, list(KIND_TITLES))
    extra = [comparison_table(report, every_task_metric=True), across_tasks_table(report)]
    for view in views + [v for v in extra if v is not None]:
        lines += [
            f"## {view.title}",
            "",
            "| " + " | ".join(view.headers) + " |",
            "|" + "---|" * len(view.headers),
        ]
        lines += ["| " + " | ".join(cells) + " |" for cells in view.rows]
        lines.append("")
    lines += ["95% intervals — " + "; ".join(_methods(report)) + f". ⚠ marks n < {SMALL_N}.", ""]
    if report.problems:
        lines += ["## Errors and timeouts", ""]
        for problem in report.problems:
            lines += [
                f"### {problem.status}: {problem.where}",
                "",
                "```",
                problem.message.rstrip(),
                "```",
                "",
            ]
    adapter_lines = _adapter_lines(report)
    if adapter_lines:
        lines += ["## Adapter", "", *[f"- {line}" for line in adapter_lines], ""]
    lines += ["## Cost", "", _cost_line(report), "", "## Reproducibility manifest", ""]
    lines += [f"- {line}" for line in _manifest_lines(report)]
    return "\n".join(lines) + "\n"


def write_csv(report: Report, path: Path) -> Path:
    """One row per episode, with every metric as a column."""
    metric_names: dict[str, None] = {}
    for episode in report.episodes:
        for key in episode.metrics:
            metric_names.setdefault(key)
    fields = [
        "eval_id",
        "arm",
        "item_id",
        "task",
        "suite",
        "variation",
        "seed",
        "trial",
        "status",
        "ended_by",
        "steps",
        "queries",
        "duration_s",
        *[m for m in metric_names if m not in ("steps", "duration_s")],
        "error",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for e in report.episodes:
            writer.writerow(
                {
                    "eval_id": report.eval_id,
                    "arm": e.arm,
                    "item_id": e.item_id,
                    "task": e.task,
                    "suite": e.suite,
                    "variation": e.variation,
                    "seed": e.seed,
                    "trial": e.trial,
                    "status": e.status,
                    "ended_by": e.ended_by,
                    "steps": e.steps,
                    "queries": e.queries,
                    "duration_s": e.duration_s,
                    **{k: v for k, v in e.metrics.items() if k not in ("steps", "duration_s")},
                    "error": (e.error or "").strip().splitlines()[-1] if e.error else "",
                }
            )
    return path
