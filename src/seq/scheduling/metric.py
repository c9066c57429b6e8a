"""The metric a schedule's list and a trend show: the one asked for, else `success`, else the
first metric the report computes."""

from __future__ import annotations

from seq.report.eval_report import Report
from seq.report.rows import MetricRow

DEFAULT_METRIC = "success"


def primary_metric(report: Report, name: str | None = None, arm: str | None = None) -> MetricRow | None:
    """The overall row of metric `name` (default: `success`, else the first) for `arm` (default:
    the first); None when the eval has no such row (no episode yet, or no such metric)."""
    try:
        rows = report.group("overall", "all", arm).metrics
    except KeyError:
        return None
    wanted = name or DEFAULT_METRIC
    for row in rows:
        if row.name == wanted:
            return row
    return rows[0] if rows and name is None else None
