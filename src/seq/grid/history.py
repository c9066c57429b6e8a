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
from seq.record.store import seq_home


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
    for line in path.read_text().splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return entries


def _summary(run_dir: Path) -> dict[str, Any] | None:
    try:
        return json.loads((run_dir / "summary.json").read_text())
    except (OSError, ValueError):
        return None


def ls(limit: int | None = None) -> list[dict[str, Any]]:
    """Grid runs, newest first: run directory, config, cells, trials, pooled success, the gate
    (as last judged) and whether every cell ran."""
    rows = []
    for entry in reversed(_entries()):
        run_dir = Path(entry["run_dir"])
        if not run_dir.is_dir():
            continue
        data = _summary(run_dir) or {}
        cells = data.get("cells", [])
        rows.append(
            {
                "run": run_dir.name,
                "run_dir": str(run_dir),
                "config": entry.get("config"),
                "started": entry.get("started"),
                "cells": len(cells),
                "errors": sum(1 for cell in cells if cell.get("error")),
                "n_trials": data.get("n_trials", 0),
                "success_rate": data.get("success_rate"),
                "gate": data.get("gate"),
                "complete": (run_dir / "aaa_done_flag.txt").is_file(),
            }
        )
    return rows[:limit] if limit else rows


def show(run: str | Path) -> dict[str, Any]:
    """The summary of a run: its directory, or its name (the stamp, or a unique prefix of it)."""
    path = Path(run)
    if not (path / "summary.json").is_file():
        matches = [Path(row["run_dir"]) for row in ls() if row["run"].startswith(str(run))]
        if len(matches) != 1:
            what = "no grid run" if not matches else f"{len(matches)} grid runs"
            raise SeqInputError(f"RUN {run}: {what} match (seq grid ls lists them).")
        path = matches[0]
    data = _summary(path)
    if data is None:
        raise SeqInputError(f"RUN {run}: {path} has no readable summary.json.")
    return data
