"""Mirror a report's aggregate metrics to an experiment tracker (wandb or trackio) when installed.

The tracker's run is keyed by the eval id and opened with `resume="allow"`, so a resumed eval, or
an export made later, continues the same run. Project, entity and keys come from the tracker's own
environment variables (`WANDB_PROJECT`, `WANDB_API_KEY`, `TRACKIO_PROJECT` …); trackio's project
defaults to `seq`.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
from collections.abc import Sequence
from typing import Any

from seq.errors import SeqInputError
from seq.record.typed import to_plain
from seq.report.eval_report import Report

TRACKERS = ("wandb", "trackio")


def _put(flat: dict[str, float], key: str, value: float | None) -> None:
    if value is not None and math.isfinite(value):
        flat[key] = float(value)


def tracked_metrics(report: Report) -> dict[str, float]:
    """`[arm/]kind/group/metric` → value, and its interval's ends and n where it has them; each paired
    comparison under `arm/paired/kind/group/metric/…` and the across-tasks view under
    `arm/across_tasks/metric/…`. Their methods are in `tracked_methods`."""
    flat: dict[str, float] = {}
    for group in report.groups:
        prefix = "/".join(part for part in (group.arm, group.kind, group.name) if part)
        for metric in group.metrics:
            _put(flat, f"{prefix}/{metric.name}", metric.value)
            _put(flat, f"{prefix}/{metric.name}/low", metric.low)
            _put(flat, f"{prefix}/{metric.name}/high", metric.high)
            flat[f"{prefix}/{metric.name}/n"] = float(metric.n)
    for key, c in _paired(report):
        _put(flat, f"{key}/difference", c.difference.difference)
        _put(flat, f"{key}/low", c.difference.low)
        _put(flat, f"{key}/high", c.difference.high)
        _put(flat, f"{key}/p_value", c.p_value)
        flat[f"{key}/n"] = float(c.n)
        if c.agresti_min is not None:
            _put(flat, f"{key}/agresti_min/low", c.agresti_min.low)
            _put(flat, f"{key}/agresti_min/high", c.agresti_min.high)
    for row in report.across_tasks:
        key = f"{row['arm']}/across_tasks/{row['metric']}"
        for name in ("iqm", "iqm_low", "iqm_high", "probability_of_improvement", "poi_low", "poi_high"):
            _put(flat, f"{key}/{name}", row.get(name))
    flat["episodes/done"], flat["episodes/total"] = float(report.done), float(report.total)
    return flat


def _paired(report: Report) -> list[tuple[str, Any]]:
    return [
        (f"{row.arm}/paired/{row.kind}/{row.name}/{row.comparison.metric}", row.comparison)
        for row in report.comparisons
    ]


def tracked_methods(report: Report) -> dict[str, str]:
    """The method behind each paired and across-tasks value of `tracked_metrics`, by its key
    prefix: the interval, the test and the verdict."""
    methods = {}
    for key, c in _paired(report):
        test = f"; test {c.test}" if c.test else ""
        methods[key] = f"interval {c.verdict_interval}{test}; verdict {c.verdict}"
    for row in report.across_tasks:
        poi = f"; P(improvement) {row['poi_method']}" if "poi_method" in row else ""
        methods[f"{row['arm']}/across_tasks/{row['metric']}"] = f"IQM {row['method']}{poi}"
    return methods


def check_trackers(trackers: Sequence[str]) -> None:
    """Refuse, before an eval starts, a tracker name that is unknown or not installed."""
    for name in trackers:
        if name == "none":
            continue
        if name not in TRACKERS:
            raise SeqInputError(f"--report-to {name}: expected one of wandb, trackio, none.")
        if importlib.util.find_spec(name) is None:
            raise SeqInputError(f"--report-to {name}: {name} is not installed (pip install {name}).")


def report_to(report: Report, trackers: Sequence[str]) -> list[str]:
    """Log the report's metrics to each tracker named (`none` logs nothing); returns those logged to."""
    check_trackers(trackers)
    logged = []
    for name in [t for t in trackers if t != "none"]:
        tracker: Any = importlib.import_module(name)
        config = {
            "benchmark": report.benchmark,
            "policy": report.policy,
            "arms": report.arms,
            "manifest": to_plain(report.manifest),
            "methods": tracked_methods(report),
        }
        if name == "wandb":
            tracker.init(id=report.eval_id, name=report.eval_id, resume="allow", config=config)
        else:
            tracker.init(
                project=os.environ.get("TRACKIO_PROJECT", "seq"),
                name=report.eval_id,
                resume="allow",
                config=config,
            )
        tracker.log(tracked_metrics(report))
        tracker.finish()
        logged.append(name)
    return logged
