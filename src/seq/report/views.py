"""Views of a `Report`: the terminal (rich), Markdown, CSV. JSON is `Report.to_json`."""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

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


def _cost_line(report: Report) -> str:
    cost = report.cost
    return f"cost: {cost['wall_s']:.1f} s wall time, {cost['core_s']:.1f} core-seconds used"


def _manifest_lines(report: Report) -> list[str]:
    manifest = report.manifest
    seq_info = manifest.get("seq", {})
    environment = manifest.get("environment", {})
    bench, policy = manifest.get("benchmark", {}), manifest.get("policy", {})
    packages = ", ".join(f"{k} {v}" for k, v in environment.get("packages", {}).items())
    seeds = manifest.get("seeds", [])
    seed_text = ", ".join(map(str, seeds[:20])) + (" …" if len(seeds) > 20 else "")
    return [
        f"seq {seq_info.get('version')} (git {seq_info.get('git_sha') or 'n/a'})",
        f"benchmark {bench.get('name')}@v{bench.get('version')} sha256 {str(bench.get('sha256'))[:16]}…",
        f"policy {policy.get('name')}@v{policy.get('version')} sha256 {str(policy.get('sha256'))[:16]}…",
        f"seeds: {seed_text}",
        f"parameters: {manifest.get('parameters')}",
        f"python {environment.get('python', '?')} on {environment.get('platform', '?')}",
        f"packages: {packages or 'n/a'}",
    ]


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
    names = _metric_names(report)
    for kind in ["overall"] if compact else list(KIND_TITLES):
        rows = [g for g in report.groups if g.kind == kind]
        if not rows:
            continue
        table = Table(title=KIND_TITLES[kind], title_justify="left", header_style="bold")
        table.add_column(kind if kind != "overall" else "group", no_wrap=True)
        table.add_column("n", justify="right")
        for name in names:
            table.add_column(name, justify="right")
        for group in rows:
            table.add_row(group.name, _n_cell(group), *_cells(group, names))
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
    names = _metric_names(report)
    for kind, title in KIND_TITLES.items():
        rows = [g for g in report.groups if g.kind == kind]
        if not rows:
            continue
        lines += [
            f"## {title}",
            "",
            "| group | n | " + " | ".join(names) + " |",
            "|---|---:|" + "---:|" * len(names),
        ]
        lines += [f"| {g.name} | {_n_cell(g)} | " + " | ".join(_cells(g, names)) + " |" for g in rows]
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
    lines += ["## Cost", "", _cost_line(report), "", "## Reproducibility manifest", ""]
    lines += [f"- {line}" for line in _manifest_lines(report)]
    lines.append(f"- recorded {time.strftime('%Y-%m-%d %H:%M:%S')}")
    return "\n".join(lines) + "\n"


def write_csv(report: Report, path: Path) -> Path:
    """One row per episode, with every metric as a column."""
    metric_names: dict[str, None] = {}
    for episode in report.episodes:
        for key in episode.metrics:
            metric_names.setdefault(key)
    fields = [
        "eval_id",
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
