"""The evolve log of a benchmark: its cycles, clusters, candidates with evidence, and the review
queue, as one JSON file beside the record (`SEQ_HOME/evolve/NAME.json`, written atomically).

The rows (episodes, evals, versions) stay in the record; this file only names them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.record.paths import seq_home


def path_of(benchmark: str) -> Path:
    return seq_home() / "evolve" / f"{benchmark}.json"


def load(benchmark: str) -> dict[str, Any]:
    """The log of `benchmark` (an empty one if it never evolved)."""
    path = path_of(benchmark)
    if not path.exists():
        return {"benchmark": benchmark, "cycles": []}
    try:
        return json.loads(path.read_text())
    except ValueError:
        raise SeqInputError(f"{path}: not a readable evolve log (expected JSON).") from None


def save(state: dict[str, Any]) -> Path:
    path = path_of(state["benchmark"])
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(state, indent=1, default=_plain))
    os.replace(temporary, path)
    return path


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, float):
        return None
    return str(value)


def logs() -> list[dict[str, Any]]:
    """Every benchmark's evolve log in this workspace."""
    folder = seq_home() / "evolve"
    return [load(p.stem) for p in sorted(folder.glob("*.json"))] if folder.exists() else []


START = "seq evolve run NAME --policy P --reference R starts one"


def only(benchmark: str | None) -> dict[str, Any]:
    """The log of `benchmark`, or the only one there is; refused when that is ambiguous."""
    if benchmark:
        base = benchmark.partition("@")[0]
        state = load(base)
        if not state["cycles"]:
            raise SeqInputError(f"benchmark {base!r} has not evolved here (seq evolve run {base} …).")
        return state
    found = logs()
    if not found:
        raise SeqInputError(f"no benchmark has evolved here yet ({START}).")
    if len(found) != 1:
        names = ", ".join(s["benchmark"] for s in found) or "none"
        raise SeqInputError(f"name the benchmark (--benchmark NAME); evolved here: {names}.")
    return found[0]
