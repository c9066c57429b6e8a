"""The versions a grid's benchmark and policy names resolve to, so that a resume never pools the
cells of one version with those of another (a benchmark or policy redeployed in between).

A run records, at its start, what each unpinned name resolved to (`versions.json`); each cell
records the versions its eval ran. `--resume` resolves the names again and refuses when one now
resolves to another version: `coin@v1 → coin@v2`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.grid.cells import Cell, EvalGroup
from seq.grid.results import CellResult

FILE = "versions.json"
Resolved = dict[str, dict[str, str]]  # kind -> name as the config writes it -> NAME@vN


def resolved(groups: Sequence[EvalGroup], plans: Mapping[str, Mapping[str, Any]]) -> Resolved:
    """What each benchmark and registered policy name of `groups` resolves to now, as the evals'
    dry runs (`plans`, by group id) say (a served policy has no version of ours)."""
    found: Resolved = {"benchmark": {}, "policy": {}}
    for group in groups:
        plan = plans.get(group.id)
        if not plan:
            continue
        found["benchmark"][group.first.benchmark] = plan["benchmark"]
        for arm, planned in zip(group.arms, plan.get("arms") or [], strict=False):
            if not arm.policy.served and arm.policy.policy:
                found["policy"][arm.policy.policy] = planned["policy"]
    return found


def record(run_dir: Path, resolved: Resolved) -> None:
    """Add what names resolved to, keeping what the run recorded before."""
    before = _recorded(run_dir)
    merged = {kind: {**resolved.get(kind, {}), **before.get(kind, {})} for kind in ("benchmark", "policy")}
    (run_dir / FILE).write_text(json.dumps(merged, indent=2))


def _recorded(run_dir: Path) -> Resolved:
    with contextlib.suppress(OSError, ValueError):
        data = json.loads((run_dir / FILE).read_text())
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if isinstance(v, dict)}
    return {}


def check_resume(
    run_dir: Path, cells: Sequence[Cell], kept: dict[str, CellResult], now: Resolved, source: str
) -> None:
    """Refuse to resume when a name of the grid resolves to another version than when the run
    began, or than a persisted cell ran."""
    changes: list[str] = []
    for kind, names in _recorded(run_dir).items():
        for name, label in names.items():
            current = now.get(kind, {}).get(name)
            if current is not None and current != label:
                changes.append(f"{kind} {label} → {current}")
    for cell in cells:
        result = kept.get(cell.key)
        if result is None:
            continue
        ran = (("benchmark", cell.benchmark, result.benchmark_version),
               ("policy", cell.policy.policy, result.policy_version))  # fmt: skip
        for kind, ran_name, version in ran:
            current = now.get(kind, {}).get(ran_name or "")
            if version and current and current != version:
                changes.append(f"{kind} {version} → {current}")
    if changes:
        shown = ", ".join(dict.fromkeys(changes))
        raise SeqInputError(
            f"--resume: {source}: {shown} since run {run_dir.name} began; its cells would pool two "
            "versions. Pin the old version (NAME@vN) in the config, or start a fresh run without --resume."
        )
