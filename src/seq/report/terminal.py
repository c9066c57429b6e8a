"""The terminal view of a report (rich), at any width without cutting a value.

A table is drawn as a table where all of it fits the console's width. Where it does not (80
columns, a pipe, a CI log), each row is printed as a heading (its key columns) with its other
columns stacked under it as `name: value` fields, packed into whole lines: a number, an interval
or a verdict is never cut or wrapped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group
from rich.table import Table
from rich.text import Text

from seq.report import text as prose
from seq.report.problems import problem_counts
from seq.report.report_content import ReportContent
from seq.report.table_views import (
    KIND_TITLES,
    NAME_COLUMNS,
    TableView,
    across_tasks_table,
    comparison_table,
    group_tables,
)

SEPARATOR = " · "
INDENT = "  "


def natural_width(view: TableView) -> int:
    """Columns a rich table with a border and one space of padding each side needs to draw every
    cell on one line."""
    widths = [
        max([cell_len(header)] + [cell_len(row[i]) for row in view.rows if i < len(row)])
        for i, header in enumerate(view.headers)
    ]
    return sum(width + 3 for width in widths) + 1


def full_table(view: TableView) -> Table:
    """The view as a rich table whose cells never wrap (drawn only where it fits)."""
    table = Table(title=view.title, title_justify="left", header_style="bold")
    for header in view.headers:
        numeric = header not in (*NAME_COLUMNS, "verdict", "interval", "method")
        table.add_column(header, justify="right" if numeric else "left", no_wrap=True)
    for cells in view.rows:
        table.add_row(*cells)
    return table


def _key_text(header: str, cell: str) -> str:
    return cell if header in NAME_COLUMNS else f"{header} {cell}"


def stacked_lines(view: TableView, width: int) -> list[str]:
    """Each row as its key columns on one line, then its other columns as `name: value` fields
    packed into lines of at most `width` columns; a field is never split."""
    lines = []
    for row in view.rows:
        keys = [_key_text(h, c) for h, c in zip(view.headers[: view.keys], row[: view.keys], strict=True)]
        lines.append(SEPARATOR.join(k for k in keys if k))
        line = ""
        for header, cell in zip(view.headers[view.keys :], row[view.keys :], strict=True):
            if cell in ("", "—"):
                continue
            field = f"{header}: {cell}"
            joined = f"{line}{SEPARATOR}{field}" if line else field
            if line and cell_len(INDENT + joined) > width:
                lines.append(INDENT + line)
                joined = field
            line = joined
        if line:
            lines.append(INDENT + line)
    return lines


class FittedTable:
    """A `TableView` drawn as a table where it fits the console, stacked where it does not."""

    def __init__(self, view: TableView) -> None:
        self.view = view

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Any]:
        if natural_width(self.view) <= options.max_width:
            yield full_table(self.view)
            return
        yield Text(self.view.title, style="italic")
        for line in stacked_lines(self.view, options.max_width):
            heading = not line.startswith(INDENT)
            yield Text(line, style="bold" if heading else "", no_wrap=True, overflow="ignore")


def report_renderable(report: ReportContent, compact: bool = False) -> Any:
    """The terminal view as one rich renderable (`compact`: the overall group only, for status)."""
    parts: list[Any] = [Text(prose.headline(report), style="bold")]
    partial = prose.partial_line(report)
    if partial:
        parts.append(Text(partial, style="yellow"))
    # one line each, never wrapped (printed with crop=False): an item's id and its reason stay whole
    for line in prose.unfinished_lines(report):
        parts.append(Text(INDENT + line, style="yellow", no_wrap=True, overflow="ignore"))
    rerun = prose.rerun_line(report)
    if rerun:
        parts.append(Text(rerun, style="yellow"))
    parts += [Text(note, style="yellow") for note in report.notes]
    sequential = prose.sequential_line(report)
    if sequential:
        parts.append(Text(sequential, style="bold cyan"))
    if not compact:
        parts += [Text(line, style="yellow") for line in prose.adapter_lines(report)]
    views = group_tables(report, ["overall"] if compact else list(KIND_TITLES))
    if not compact:
        extra = [comparison_table(report, every_task_metric=False), across_tasks_table(report)]
        views += [view for view in extra if view is not None]
    parts += [FittedTable(view) for view in views]
    parts += [Text(line) for line in prose.methods_lines(report)]
    if report.problems:
        parts.append(Text(problem_counts(report.problems), style="red"))
        if not compact:
            for group in report.problem_groups:
                parts.append(Text.assemble((group.label, "red"), " ", group.headline))
                if group.detail:
                    parts.append(Text(group.detail))
    parts.append(Text(prose.cost_line(report)))
    if not compact:
        parts.append(Text("manifest: " + SEPARATOR.join(prose.manifest_lines(report))))
    return Group(*parts)


def print_report(report: ReportContent, console: Any = None, compact: bool = False) -> None:
    """Print the report on the terminal."""
    (console or Console()).print(report_renderable(report, compact), crop=False)
