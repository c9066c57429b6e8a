"""The grid's summary: pooled rates, the gate, and the files summary.tsv and summary.json.

The gate passes only when at least one trial ran, no cell errored, every per-cell floor holds and
the pooled success rate (or, with `gate_on="lower-bound"`, its interval's lower bound) is at least
the threshold. The pool counts each distinct episode once, however many cells share it, and its
interval is clustered by condition (`seq.grid.pool`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seq.grid.pool import pooled
from seq.grid.results import CellResult

GATE_ON = ("rate", "lower-bound")
MEASURES = {"rate": "success_rate", "lower-bound": "success_low"}  # what each gate holds to the threshold
POOLED = ("success_rate", "success_low", "success_high", "n_success", "n_trials", "n_conditions",
          "effective_n", "n_cell_trials", "interval")  # fmt: skip
COLUMNS = ("mode", "policy", "family", "variation", "suite", "success_rate", "success_low",
           "success_high", "completion_rate", "avg_reward", "n_success", "n_trials", "wall_clock_s",
           "error")  # fmt: skip


@dataclass
class Summary:
    """What `seq.grid.run` returns: the pooled numbers, the gate's verdict and every cell."""

    ok: bool
    gated: bool
    passed: bool
    gate_threshold: float
    gate_on: str
    success_rate: float | None
    success_low: float | None
    success_high: float | None
    completion_rate: float | None
    n_trials: int
    n_success: int
    cells: list[CellResult]
    run_dir: Path
    summary: dict[str, Any] = field(repr=False, default_factory=dict)
    reasons: list[str] = field(default_factory=list)  # why the gate fails, where it does
    complete: bool = True  # every planned cell ran (False: interrupted, or a summary mid-run)
    n_conditions: int = 0  # the conditions behind the n_trials distinct episodes
    effective_n: float = 0.0  # what they are worth as independent episodes

    @property
    def errors(self) -> list[CellResult]:
        return [cell for cell in self.cells if cell.error]

    def gate_line(self) -> str:
        """`gate PASS|FAIL: success_rate=… [low, high] threshold=… n=…` (and the conditions
        behind n, where trials repeat them)."""
        verdict = "PASS" if self.passed else "FAIL"
        interval = f"[{_num(self.success_low)}, {_num(self.success_high)}]"
        on = " on lower-bound" if self.gate_on == "lower-bound" else ""
        conditions = f" in {self.n_conditions} conditions" if 0 < self.n_conditions < self.n_trials else ""
        return (
            f"gate {verdict}: success_rate={_num(self.success_rate)} {interval} "
            f"threshold={self.gate_threshold:.2f}{on} n={self.n_trials}{conditions}"
        )


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def gate(
    cells: Sequence[CellResult],
    threshold: float,
    gate_on: str,
    floors: dict[str, float | None],
    planned: int | None = None,
    totals: dict[str, Any] | None = None,
) -> list[str]:
    """Why the gate fails (an empty list: it passes). A run that has not run all `planned` cells
    (interrupted, or still running) never passes. `totals`: `pooled(cells)`, where computed."""
    totals = totals or pooled(cells)
    reasons = []
    missing = 0 if planned is None else planned - len(cells)
    if missing > 0:
        reasons.append(f"{missing} of {planned} cells not run")
    if totals["n_trials"] == 0:
        reasons.append("no trial ran")
    reasons += [f"cell {cell.key} errored: {cell.error}" for cell in cells if cell.error]
    reasons += mixed_versions(cells)
    measure = totals[MEASURES[gate_on]]
    if measure is not None and measure < threshold:
        what = "success_rate" if gate_on == "rate" else "the interval's lower bound"
        reasons.append(f"{what} {measure:.3f} < threshold {threshold:.2f}")
    for cell in cells:
        floor = floors.get(cell.key)
        if floor is not None and not cell.error and (cell.success_rate or 0.0) < floor:
            reasons.append(f"cell {cell.key}: success_rate {cell.success_rate:.3f} < floor {floor:.2f}")
    return reasons


def mixed_versions(cells: Sequence[CellResult]) -> list[str]:
    """A family or policy whose cells ran more than one version (one redeployed mid-run): its
    cells do not measure one thing, so the pooled rate is not a verdict on either."""
    seen: dict[tuple[str, str], set[str]] = {}
    for cell in cells:
        if cell.benchmark_version:
            seen.setdefault(("family", cell.family), set()).add(cell.benchmark_version)
        if cell.policy_version:
            seen.setdefault(("policy", cell.policy), set()).add(cell.policy_version)
    return [
        f"the cells of {kind} {name} ran {len(labels)} versions ({', '.join(sorted(labels))})"
        for (kind, name), labels in seen.items()
        if len(labels) > 1
    ]


def pivot(cells: Sequence[CellResult], metric: str) -> dict[str, dict[str, float | str | None]]:
    """`{mode@policy: {family/variation: value}}`; an errored cell is "ERR"."""
    rows: dict[str, dict[str, Any]] = {}
    for cell in cells:
        rows.setdefault(cell.row, {})[cell.column] = "ERR" if cell.error else getattr(cell, metric)
    return rows


def _tsv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value).replace("\t", " ").replace("\n", " ")


def write_tsv(path: Path, cells: Sequence[CellResult], totals: dict[str, Any] | None = None) -> None:
    """One row per cell, then the success and completion pivot blocks ('-': not in the grid),
    then the pooled numbers (each distinct episode once)."""
    lines = ["\t".join(COLUMNS)]
    lines += ["\t".join(_tsv_value(getattr(cell, column)) for column in COLUMNS) for cell in cells]
    columns = list(dict.fromkeys(cell.column for cell in cells))
    for metric in ("success_rate", "completion_rate"):
        table = pivot(cells, metric)
        lines += ["", f"{metric}_pivot", "\t".join(["mode@policy", *columns])]
        for row, values in table.items():
            shown = [_pivot_value(values.get(column, "-")) for column in columns]
            lines.append("\t".join([row, *shown]))
    totals = totals or pooled(cells)
    lines += ["", "pooled", "\t".join(POOLED), "\t".join(_tsv_value(totals[key]) for key in POOLED)]
    path.write_text("\n".join(lines) + "\n")


def _pivot_value(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else ("-" if value is None else str(value))


def read_tsv_cells(path: Path) -> list[dict[str, str]]:
    """The per-cell rows of a summary.tsv (up to the first blank line), as text."""
    lines = Path(path).read_text().splitlines()
    header = lines[0].split("\t")
    rows = []
    for line in lines[1:]:
        if not line.strip():
            break
        rows.append(dict(zip(header, line.split("\t"), strict=True)))
    return rows


def build(
    cells: Sequence[CellResult],
    *,
    run_dir: Path,
    grid: dict[str, Any],
    gated: bool,
    threshold: float,
    gate_on: str,
    floors: dict[str, float | None],
    planned: int | None = None,
) -> Summary:
    """The summary of `cells` (written by `write`), of the `planned` cells of the grid."""
    totals = pooled(cells)
    reasons = gate(cells, threshold, gate_on, floors, planned, totals)
    passed = not reasons
    planned = len(cells) if planned is None else planned
    data = {
        "grid": grid,
        "run_dir": str(run_dir),
        "n_cells": planned,
        "complete": len(cells) >= planned,
        "gate": {
            "gated": gated,
            "passed": passed,
            "threshold": threshold,
            "on": gate_on,
            "reasons": reasons,
            # each measure beside the one gated on: whether it reaches the threshold
            "reaches": {
                on: totals[key] is not None and totals[key] >= threshold for on, key in MEASURES.items()
            },
        },
        **totals,
        "cells": [cell.to_dict(episodes=False) for cell in cells],
        "matrix": {
            "success_rate": pivot(cells, "success_rate"),
            "completion_rate": pivot(cells, "completion_rate"),
        },
        "evals": sorted({cell.eval_id for cell in cells if cell.eval_id}),
    }
    ran_all = len(cells) >= planned
    ok = passed if gated else (ran_all and totals["n_trials"] > 0 and not any(c.error for c in cells))
    return Summary(ok, gated, passed, threshold, gate_on, totals["success_rate"], totals["success_low"],
                   totals["success_high"], totals["completion_rate"], totals["n_trials"],
                   totals["n_success"], list(cells), run_dir, data, reasons, ran_all,
                   totals["n_conditions"], totals["effective_n"])  # fmt: skip


def write(summary: Summary) -> None:
    summary.run_dir.mkdir(parents=True, exist_ok=True)
    (summary.run_dir / "summary.json").write_text(json.dumps(summary.summary, indent=2, default=str))
    write_tsv(summary.run_dir / "summary.tsv", summary.cells, summary.summary)
