"""Views of a `Report`: the terminal (`seq.report.terminal`), Markdown, CSV (`seq.report.csv_views`).
JSON is `Report.to_json`."""

from __future__ import annotations

from seq.report import text as prose
from seq.report.csv_views import write_csv, write_summary_csv
from seq.report.report_content import ReportContent
from seq.report.table_views import (
    KIND_TITLES,
    METHOD_NAMES,
    TableView,
    across_tasks_table,
    comparison_table,
    format_metric,
    group_tables,
    method_name,
    number,
)
from seq.report.tables import markdown_cell, markdown_code_block, markdown_text
from seq.report.terminal import print_report, report_renderable

__all__ = [
    "KIND_TITLES",
    "METHOD_NAMES",
    "TableView",
    "across_tasks_table",
    "comparison_table",
    "format_metric",
    "group_tables",
    "method_name",
    "number",
    "print_report",
    "render_markdown",
    "report_renderable",
    "write_csv",
    "write_summary_csv",
]


def _markdown_table(view: TableView) -> list[str]:
    lines = [
        f"## {markdown_text(view.title)}",
        "",
        "| " + " | ".join(markdown_cell(h) for h in view.headers) + " |",
        "|" + "---|" * len(view.headers),
    ]
    lines += ["| " + " | ".join(markdown_cell(c) for c in cells) + " |" for cells in view.rows]
    return lines + [""]


def render_markdown(report: ReportContent) -> str:
    """The whole report as one Markdown document (every metric of every comparison row). Every
    name and message in it came from user code or the record, so each is made inert
    (`markdown_text`): the document shows them as written, never as HTML or links."""
    text = markdown_text
    lines = [
        f"# {text(report.title)}",
        "",
        f"Eval `{report.eval_id.replace('`', '')}`: {text(report.status)}, "
        f"{report.done}/{report.total} episodes.",
        "",
    ]
    partial = prose.partial_line(report)
    if partial:
        lines += [f"> **{text(partial)}**", ""]
    unfinished = prose.unfinished_lines(report)
    if unfinished:
        lines += [*[f"- {markdown_cell(line)}" for line in unfinished], ""]
    rerun = prose.rerun_line(report)
    if rerun:
        lines += [f"> {text(rerun)}", ""]
    for note in report.notes:
        lines += [f"> {text(note)}", ""]
    sequential = prose.sequential_line(report)
    if sequential:
        lines += [f"**{text(sequential)}**", ""]
    views = group_tables(report, list(KIND_TITLES))
    extra = [comparison_table(report, every_task_metric=True), across_tasks_table(report)]
    for view in views + [v for v in extra if v is not None]:
        lines += _markdown_table(view)
    for line in prose.methods_lines(report):
        lines += [text(line), ""]
    if report.problems:
        lines += ["## Errors and timeouts", ""]
        for group in report.problem_groups:
            lines += [f"### {markdown_cell(group.label)}: {markdown_cell(group.headline)}", ""]
            if group.detail:
                lines += [*markdown_code_block(group.detail), ""]
    adapter = prose.adapter_lines(report)
    if adapter:
        lines += ["## Adapter", "", *[f"- {markdown_cell(line)}" for line in adapter], ""]
    lines += ["## Cost", "", text(prose.cost_line(report)), "", "## Reproducibility manifest", ""]
    lines += [f"- {markdown_cell(line)}" for line in prose.manifest_lines(report, whole_hashes=True)]
    return "\n".join(lines) + "\n"
