"""`seq evolve report --html`: the evolve report as one self-contained HTML file (inline CSS and
SVG, no script, no network).

It renders the numbers the Markdown view renders (`seq.evolve.log_report.report_data`) with the
console's own plotting (`seq.report.charts`: altair specs drawn to SVG by vl-convert) and its
templates' style: a task × model heatmap (the target on each cycle's version and on its
candidates, the reference on the candidates), the capability frontier of each cycle (the
target's success per task and slice with 95% intervals), the candidates by operator and decision,
and the promoted conditions with their evidence.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seq.evolve.log_report import (
    FRESH_COLUMNS,
    NO_EVOLVED_SLICE,
    SLICES,
    _pct,
    drop_text,
    failed_text,
    fresh_caption,
    fresh_cells,
    gate_text,
    gates_text,
    interval_text,
    no_candidates_text,
    promoted_caption,
    reference_text,
    rejected_text,
    report_data,
    unjudged_text,
)
from seq.record.store import Store


def _heatmap(data: dict[str, Any]) -> dict[str, Any] | None:
    from seq.report.charts import svg, value_heatmap

    rows = [{"x": r["column"], "y": r["task"], "value": r["success"]} for r in data["heatmap"]]
    if not rows:
        return None
    chart = value_heatmap(rows, "model · version", "task", "success", "The success per task and model")
    return {"title": "Task × model (success)", "svg": svg(chart.to_dict(validate=False))}


def _frontier(view: dict[str, Any]) -> dict[str, Any] | None:
    from seq.report.charts import interval_chart, svg

    rows = [
        {"group": r["task"], "arm": r["slice"], "value": r["success"], "low": r["low"], "high": r["high"]}
        for r in view["frontier"]
    ]
    if not rows:
        return None
    title = f"cycle {view['cycle']}: the target's success, 95% Wilson intervals"
    chart = interval_chart(rows, "task", list(SLICES), title, legend="slice")
    return {"title": f"Capability frontier, cycle {view['cycle']}", "svg": svg(chart.to_dict(validate=False))}


def _frontier_table(view: dict[str, Any]) -> list[dict[str, Any]]:
    by_task: dict[str, dict[str, Any]] = {}
    for row in view["frontier"]:
        by_task.setdefault(row["task"], {})[row["slice"]] = row
    return [
        {"task": task, "cells": [interval_text(parts[p]) if p in parts else "—" for p in SLICES]}
        for task, parts in by_task.items()
    ]


def _heatmap_table(data: dict[str, Any]) -> dict[str, Any]:
    columns = list(dict.fromkeys(r["column"] for r in data["heatmap"]))
    tasks = sorted({r["task"] for r in data["heatmap"]})
    cell = {(r["task"], r["column"]): r for r in data["heatmap"]}
    return {
        "columns": columns,
        "rows": [
            {
                "task": task,
                "cells": [interval_text(cell[task, c]) if (task, c) in cell else "—" for c in columns],
            }
            for task in tasks
        ],
    }


def render_html(benchmark: str | None = None, store: Store | None = None) -> str:
    """The evolve report as one self-contained HTML document."""
    from seq.report.html import template_environment

    data = report_data(benchmark, store)
    cycles = [
        {**view, "chart": _frontier(view), "frontier_table": _frontier_table(view)} for view in data["cycles"]
    ]
    template = template_environment("seq.evolve").get_template("evolve_report.html")
    return template.render(
        data=data,
        heatmap=_heatmap(data),
        heatmap_table=_heatmap_table(data),
        cycles=cycles,
        pct=_pct,
        failed_text=failed_text,
        rejected_text=rejected_text,
        no_candidates_text=no_candidates_text,
        drop_text=drop_text,
        gate_text=gate_text,
        gates_text=gates_text,
        promoted_caption=promoted_caption,
        fresh_caption=fresh_caption,
        fresh_cells=fresh_cells,
        fresh_columns=FRESH_COLUMNS,
        unjudged_text=unjudged_text,
        no_evolved_slice=NO_EVOLVED_SLICE,
        reference_text=reference_text,
    )


def write_html(path: str | Path, benchmark: str | None = None, store: Store | None = None) -> Path:
    """Write the HTML report to `path` (its folder is made); returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_html(benchmark, store), encoding="utf-8")
    return target
