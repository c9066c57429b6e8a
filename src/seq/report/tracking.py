"""Mirror a report's aggregate metrics to an experiment tracker (wandb or trackio) when installed.

The tracker's run is keyed by the eval id and opened with `resume="allow"`, so a resumed eval, or
an export made later, continues the same run. Project, entity and keys come from the tracker's own
environment variables (`WANDB_PROJECT`, `WANDB_API_KEY`, `TRACKIO_PROJECT` …); trackio's project
defaults to `seq`.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Sequence
from typing import Any

from seq.errors import SeqInputError
from seq.record.typed import to_plain
from seq.report.report import Report

TRACKERS = ("wandb", "trackio")


def tracked_metrics(report: Report) -> dict[str, float]:
    """`[arm/]kind/group/metric` → value, and its interval's ends and n where it has them."""
    flat: dict[str, float] = {}
    for group in report.groups:
        prefix = "/".join(part for part in (group.arm, group.kind, group.name) if part)
        for metric in group.metrics:
            flat[f"{prefix}/{metric.name}"] = metric.value
            if metric.low is not None and metric.high is not None:
                flat[f"{prefix}/{metric.name}/low"] = metric.low
                flat[f"{prefix}/{metric.name}/high"] = metric.high
            flat[f"{prefix}/{metric.name}/n"] = float(metric.n)
    flat["episodes/done"], flat["episodes/total"] = float(report.done), float(report.total)
    return flat


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
