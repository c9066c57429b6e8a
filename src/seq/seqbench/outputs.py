"""Writing a run directory: the JSON files, the Parquet table, curves/, and the two reports."""

from __future__ import annotations

import hashlib
import json
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from seq._version import __version__, git_sha
from seq.seqbench.algorithm import Algorithm
from seq.seqbench.calibration import Thresholds
from seq.seqbench.curves import write_curves
from seq.seqbench.metrics import (
    group_metrics,
    independent_seeds,
    interval_json,
    interval_of,
    item_values,
    per_seed_accuracy,
)
from seq.seqbench.properties import evaluate_properties
from seq.seqbench.protocol import CallRecord
from seq.seqbench.run_files import write_predictions
from seq.seqbench.run_report import write_reports
from seq.seqbench.selectors import Selection, union
from seq.seqbench.specs import RunSpec
from seq.seqbench.tasks import TaskRow
from seq.stats import SMALL_N


@dataclass
class RunContext:
    """Everything a finished run knows, handed to the writers."""

    spec: RunSpec
    algorithm: Algorithm
    task_paths: list[Path]
    rows: list[TaskRow]
    selections: dict[str, Selection]
    seeds: list[int]
    independent_seeds: list[int]
    records: list[dict]
    calls: list[CallRecord]
    thresholds: Thresholds | None
    calibration_path: Path | None
    started: float
    ended: float
    status: str


def _dump(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=False, allow_nan=False) + "\n")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def manifest_json(ctx: RunContext) -> dict:
    counts: dict[str, int] = {}
    for row in ctx.rows:
        counts[row.source] = counts.get(row.source, 0) + 1
    return {
        "seqbench": {"seq_version": __version__, "git_sha": git_sha()},
        "status": ctx.status,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(ctx.started)),
        "ended": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(ctx.ended)),
        "wall_s": round(ctx.ended - ctx.started, 3),
        "spec": {
            "name": ctx.spec.name,
            "version": ctx.spec.version,
            "sha256": ctx.spec.sha256,
            "path": str(ctx.spec.path),
        },
        "algorithm": {
            **ctx.algorithm.manifest.to_json(),
            "yaml": str(ctx.algorithm.yaml_path),
            "sha256": ctx.algorithm.sha256,
            "command": list(ctx.algorithm.command),
            "initial_model": str(ctx.algorithm.initial_model),
        },
        "tasks": [
            {"path": str(p), "sha256": _sha256(p), "rows": counts.get(str(p), 0)} for p in ctx.task_paths
        ],
        "seeds": ctx.seeds,
        "independent_seeds": ctx.independent_seeds,
        "seed_axis": (
            f"seed-invariant: evaluated once (seed {ctx.independent_seeds[0]}) and broadcast to the other "
            "seeds; "
            "broadcast copies are never counted as independent observations"
            if ctx.algorithm.manifest.seed_invariant and len(ctx.seeds) > 1
            else "each seed evaluated independently"
        ),
        "sampling_seed": ctx.spec.sampling_seed,
        "calibration": str(ctx.calibration_path) if ctx.calibration_path else None,
        "calibrated": ctx.thresholds is not None,
        "environment": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "argv": sys.argv,
        },
    }


def selection_json(ctx: RunContext) -> dict:
    return {
        "sampling_seed": ctx.spec.sampling_seed,
        "sampling": "stable hash: keys ordered by sha256('SAMPLING_SEED:KEY'), after control/stress pairing",
        "selectors": {name: sel.to_json() for name, sel in ctx.selections.items()},
        "stages": {
            stage.name: {
                "learn_from": stage.learn_from,
                "learn_examples": len(union(ctx.selections, stage.learn_select)) if stage.learn_from else 0,
                "infer_items": len(union(ctx.selections, stage.infer_select)),
            }
            for stage in ctx.spec.stages
        },
    }


def resolved_json(ctx: RunContext) -> dict:
    spec = ctx.spec
    generates = ctx.algorithm.manifest.generate
    return {
        "run_spec": {
            "name": spec.name,
            "version": spec.version,
            "sha256": spec.sha256,
            "path": str(spec.path),
            "seeds": ctx.seeds,
            "sampling_seed": spec.sampling_seed,
            "budget": {
                "learn": spec.learn_budget.to_json("learn"),
                "infer": spec.infer_budget.to_json("infer"),
            },
            "stages": [
                {
                    "name": s.name,
                    "learn_from": s.learn_from,
                    "learn": list(s.learn_select),
                    "model": s.model,
                    "infer": list(s.infer_select),
                }
                for s in spec.stages
            ],
            "properties": {
                name: {
                    "stage": p.stage,
                    "where": {k: list(v) for k, v in p.where.items()},
                    "metric": p.metric,
                    "reference_bytes": p.reference_bytes,
                    "privileged": p.privileged,
                }
                for name, p in spec.properties.items()
            },
            "accuracy_means": "exact_match" if generates else "choice_accuracy",
            "document": spec.raw,
        },
        "calibration": str(ctx.calibration_path) if ctx.calibration_path else None,
    }


def resources_json(ctx: RunContext) -> dict:
    calls = [c.to_json() for c in ctx.calls]
    process = sum(c.process_s for c in ctx.calls)
    total = sum(c.call_s for c in ctx.calls)
    sizes = [c.checkpoint_bytes for c in ctx.calls if c.checkpoint_bytes is not None]
    return {
        "calls": calls,
        "totals": {
            "calls": len(calls),
            "process_s": round(process, 3),
            "call_s": round(total, 3),
            "runner_overhead_s": round(total - process, 3),
            "runner_overhead_fraction": round((total - process) / process, 4) if process else None,
            "peak_rss_mb": round(max((c.max_rss_mb for c in ctx.calls), default=0.0), 1),
            "largest_checkpoint_bytes": max(sizes, default=None),
        },
    }


def scaling_json(ctx: RunContext) -> dict:
    spec, generates = ctx.spec, ctx.algorithm.manifest.generate
    points = []
    for name in spec.scaling_stages:
        stage = spec.stage(name)
        values = item_values(ctx.records, name, spec.scaling_where, "accuracy", generates)
        sizes = [
            c.checkpoint_bytes
            for c in ctx.calls
            if c.stage == name and c.operation == "learn" and c.checkpoint_bytes
        ]
        examples = len(union(ctx.selections, stage.learn_select)) if stage.learn_from else 0
        mean_bytes = round(sum(sizes) / len(sizes)) if sizes else None
        point = {"stage": name, "examples": examples, "items": len(values)}
        point["accuracy"] = interval_json(interval_of(list(values.values()))) if values else None
        point["checkpoint_bytes"] = mean_bytes
        point["bytes_per_example"] = (
            round(mean_bytes / examples, 2) if mean_bytes is not None and examples else None
        )
        points.append(point)
    return {"where": {k: list(v) for k, v in spec.scaling_where.items()}, "points": points}


def diagnostics_json(ctx: RunContext, metrics: dict) -> dict:
    failures = [c.to_json() for c in ctx.calls if c.status != "ok"]
    notes = []
    manifest = ctx.algorithm.manifest
    if not manifest.generate:
        notes.append("the algorithm cannot generate: accuracy is choice accuracy over the candidates")
    if not manifest.score:
        notes.append("the algorithm cannot score: choice accuracy and log-probabilities are not measured")
    if manifest.seed_invariant:
        notes.append(
            "seed-invariant: one evaluation broadcast over the seed axis, not independent observations"
        )
    if manifest.external_pretraining:
        notes.append(
            "the algorithm declares external pretraining: its results are not from these examples alone"
        )
    small = [
        f"{stage}: {g['family']}/{g['condition']}/{g['variant']} has {g['items']} items"
        for stage, groups in metrics["stages"].items()
        for g in groups
        if g["items"] < SMALL_N
    ]
    unanswered = sum(1 for r in ctx.records if not r["broadcast"] and r["status"] != "ok")
    zero = [r for r in ctx.records if not r["broadcast"] and r["target_probability_zero"]]
    return {
        "status": ctx.status,
        "failed_calls": failures,
        "protocol_problems": [p for c in ctx.calls for p in c.problems][:200],
        "unanswered_items": unanswered,
        "targets_with_probability_zero": len(zero),
        "small_groups": small,
        "notes": notes,
    }


def write_run(output: Path, ctx: RunContext) -> list[dict]:
    """Write every file of the run directory; returns the evaluated properties."""
    generates = ctx.algorithm.manifest.generate
    write_predictions(output / "predictions.parquet", ctx.records)
    metrics = {
        "accuracy_means": "exact_match" if generates else "choice_accuracy",
        "seeds": ctx.seeds,
        "independent_seeds": independent_seeds(ctx.records),
        "stages": group_metrics(ctx.records, generates),
        "per_seed_accuracy": per_seed_accuracy(ctx.records, generates),
    }
    properties = evaluate_properties(ctx.spec, ctx.records, generates, ctx.thresholds)
    payload = {
        "manifest.json": manifest_json(ctx),
        "metrics.json": metrics,
        "properties.json": {"calibrated": ctx.thresholds is not None, "properties": properties},
        "diagnostics.json": diagnostics_json(ctx, metrics),
        "resources.json": resources_json(ctx),
        "scaling.json": scaling_json(ctx),
        "selection.json": selection_json(ctx),
        "resolved_specs.json": resolved_json(ctx),
    }
    for name, data in payload.items():
        _dump(output / name, data)
    write_curves(output / "curves", payload["scaling.json"], ctx.records, generates)
    write_reports(output, payload)
    return properties
