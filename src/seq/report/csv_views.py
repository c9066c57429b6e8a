"""The report as CSV: one row per episode (`write_csv`), and the report's own rows — every group's
metrics, every paired comparison and the across-tasks view, each naming its method
(`write_summary_csv`)."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

from seq.report.report_content import ReportContent

EPISODE_FIELDS = [
    "eval_id",
    "arm",
    "item_id",
    "task",
    "suite",
    "variation",
    "seed",
    "trial",
    "status",
    "failure",
    "attempt",
    "ended_by",
    "steps",
    "queries",
    "duration_s",
]
SUMMARY_FIELDS = [
    "eval_id",
    "row",
    "arm",
    "baseline",
    "group_kind",
    "group",
    "metric",
    "metric_kind",
    "n",
    "conditions",
    "effective_n",
    "value",
    "low",
    "high",
    "method",
    "p_value",
    "test",
    "verdict",
    "threshold",
    "agresti_min_low",
    "agresti_min_high",
]


def _cell(value: Any) -> Any:
    """An empty cell for a value that is not a finite number, as for one that is missing."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return value


def write_csv(report: ReportContent, path: Path) -> Path:
    """One row per episode, with every metric as a column."""
    metric_names: dict[str, None] = {}
    for episode in report.episodes:
        for key in episode.metrics:
            metric_names.setdefault(key)
    fields = [*EPISODE_FIELDS, *[m for m in metric_names if m not in ("steps", "duration_s")], "error"]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for e in report.episodes:
            row = {
                "eval_id": report.eval_id,
                "arm": e.arm,
                "item_id": e.item_id,
                "task": e.task,
                "suite": e.suite,
                "variation": e.variation,
                "seed": e.seed,
                "trial": e.trial,
                "status": e.status,
                "failure": e.failure,
                "attempt": e.attempt,
                "ended_by": e.ended_by,
                "steps": e.steps,
                "queries": e.queries,
                "duration_s": e.duration_s,
                **{k: v for k, v in e.metrics.items() if k not in ("steps", "duration_s")},
                "error": (e.error or "").strip().splitlines()[-1] if e.error else "",
            }
            writer.writerow({key: _cell(value) for key, value in row.items()})
    return path


def summary_rows(report: ReportContent) -> list[dict[str, Any]]:
    """The report's rows for `write_summary_csv`: `row` is `group`, `paired` or `across-tasks`."""
    kinds = {name: kind.kind for name, kind in report.kinds.items()}
    rows: list[dict[str, Any]] = []
    for group in report.groups:
        for metric in group.metrics:
            rows.append(
                {
                    "row": "group",
                    "arm": group.arm,
                    "group_kind": group.kind,
                    "group": group.name,
                    "metric": metric.name,
                    "metric_kind": kinds.get(metric.name, metric.source),
                    "n": metric.n,
                    "conditions": metric.conditions,
                    "effective_n": metric.effective_n,
                    "value": metric.value,
                    "low": metric.low,
                    "high": metric.high,
                    "method": metric.method,
                }
            )
    for row in report.comparisons:
        c = row.comparison
        seed_interval = c.agresti_min
        rows.append(
            {
                "row": "paired",
                "arm": row.arm,
                "baseline": row.baseline,
                "group_kind": row.kind,
                "group": row.name,
                "metric": c.metric,
                "metric_kind": c.kind,
                "n": c.n,
                "conditions": c.conditions,
                "effective_n": c.effective_n,
                "value": c.difference.difference,
                "low": c.difference.low,
                "high": c.difference.high,
                "method": c.verdict_interval,
                "p_value": c.p_value,
                "test": c.test,
                "verdict": c.verdict,
                "threshold": c.threshold,
                "agresti_min_low": None if seed_interval is None else seed_interval.low,
                "agresti_min_high": None if seed_interval is None else seed_interval.high,
            }
        )
    for summary in report.across_tasks:
        rows.append(
            {
                "row": "across-tasks",
                "arm": summary["arm"],
                "metric": summary["metric"],
                "n": summary["tasks"],
                "value": summary["iqm"],
                "low": summary["iqm_low"],
                "high": summary["iqm_high"],
                "method": summary["method"],
            }
        )
        if "probability_of_improvement" in summary:
            rows.append(
                {
                    "row": "across-tasks",
                    "arm": summary["arm"],
                    "baseline": report.arms[0],
                    "metric": f"P({summary['metric']} > A)",
                    "n": summary["tasks"],
                    "value": summary["probability_of_improvement"],
                    "low": summary["poi_low"],
                    "high": summary["poi_high"],
                    "method": summary["poi_method"],
                }
            )
    return rows


def write_summary_csv(report: ReportContent, path: Path) -> Path:
    """The report's own rows (`summary_rows`), each naming its interval's method and its test."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=SUMMARY_FIELDS)
        writer.writeheader()
        for row in summary_rows(report):
            writer.writerow(
                {key: _cell(row.get(key)) for key in SUMMARY_FIELDS} | {"eval_id": report.eval_id}
            )
    return path
