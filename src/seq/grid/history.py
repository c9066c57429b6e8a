"""Past grid runs: an index under `SEQ_HOME` of run directories, and their summaries.

Runs live wherever their config's `output_dir` put them; `SEQ_HOME/grid/runs.jsonl` remembers
each run directory, so `seq grid ls` finds them from anywhere.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.record.paths import seq_home


def _index() -> Path:
    return seq_home() / "grid" / "runs.jsonl"


def remember(run_dir: Path, source: str) -> None:
    """Add a run directory to the index (once)."""
    path = _index()
    resolved = str(run_dir.resolve())
    if any(entry["run_dir"] == resolved for entry in _entries()):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as index:
        entry = {"run_dir": resolved, "config": source, "started": time.strftime("%Y-%m-%d %H:%M:%S")}
        index.write(json.dumps(entry) + "\n")


def _entries() -> list[dict[str, Any]]:
    path = _index()
    if not path.is_file():
        return []
    entries = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("run_dir"), str):
            entries.append(entry)
    return entries


def _summary(run_dir: Path) -> tuple[dict[str, Any], str | None]:
    """A run's summary.json and, where it is damaged, why (a run not summarised yet is `{}`)."""
    path = run_dir / "summary.json"
    if not path.exists():
        return {}, None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return {}, f"{path} is not readable JSON"
    why = _damage(data)
    return (data, None) if why is None else ({}, f"{path} is damaged ({why})")


def _damage(data: Any) -> str | None:
    """What makes `data` no grid summary, or None."""
    if not isinstance(data, dict):
        return "expected a mapping"
    cells = data.get("cells", [])
    if not isinstance(cells, list) or not all(isinstance(cell, dict) for cell in cells):
        return "'cells' is not a list of cells"
    numbers = {key: data.get(key) for key in ("n_trials", "success_rate", "success_low", "success_high")}
    for key, value in numbers.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            return f"{key!r} is not a number"
    for key in ("gate", "matrix"):
        if not isinstance(data.get(key, {}), dict):
            return f"{key!r} is not a mapping"
    matrix = data.get("matrix", {}).get("success_rate", {})
    if not isinstance(matrix, dict) or not all(isinstance(row, dict) for row in matrix.values()):
        return "'matrix.success_rate' is not a table"
    return None


def ls(limit: int | None = None) -> list[dict[str, Any]]:
    """Grid runs, newest first: run directory, config, cells, trials, pooled success, the gate
    (as last judged) and whether every cell ran."""
    rows = []
    for entry in reversed(_entries()):
        run_dir = Path(entry["run_dir"])
        if not run_dir.is_dir():
            continue
        data, damaged = _summary(run_dir)
        cells = data.get("cells", [])
        errors = sum(1 for cell in cells if cell.get("error"))
        complete = (run_dir / "aaa_done_flag.txt").is_file() and not damaged
        rows.append(
            {
                "run": run_dir.name,
                "run_dir": str(run_dir),
                "config": entry.get("config"),
                "started": entry.get("started"),
                "cells": len(cells),
                "n_cells": data.get("n_cells"),
                "errors": errors,
                "n_trials": data.get("n_trials", 0),
                "success_rate": data.get("success_rate"),
                "success_low": data.get("success_low"),
                "success_high": data.get("success_high"),
                "gate": data.get("gate"),
                "complete": complete,  # every cell ran (some may have errored)
                "status": _status(complete, errors, data, damaged),
                "damaged": damaged,
            }
        )
    return rows[:limit] if limit else rows


def _status(complete: bool, errors: int, data: dict[str, Any], damaged: str | None) -> str:
    """One word on how the run ended: damaged, partial, errors, gate-fail, passed or done."""
    gate = data.get("gate") or {}
    if damaged:
        return "damaged"
    if not complete:
        return "partial"
    if errors:
        return "errors"
    if gate.get("gated"):
        return "passed" if gate.get("passed") else "gate-fail"
    return "done" if data.get("n_trials") else "empty"


def show(run: str | Path) -> dict[str, Any]:
    """The summary of a run: its directory, or its name (the stamp, or a unique prefix of it)."""
    path = Path(run)
    if not (path / "summary.json").is_file():
        matches = [Path(row["run_dir"]) for row in ls() if row["run"].startswith(str(run))]
        if len(matches) != 1:
            what = "no grid run" if not matches else f"{len(matches)} grid runs"
            raise SeqInputError(f"RUN {run}: {what} match (seq grid ls lists them).")
        path = matches[0]
    data, damaged = _summary(path)
    if damaged:
        raise SeqInputError(f"RUN {run}: {damaged}; `seq grid run CONFIG --resume` rebuilds it.")
    if not data:
        raise SeqInputError(f"RUN {run}: {path} has no summary.json yet.")
    return data
