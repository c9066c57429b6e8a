"""Calibration: thresholds for each property from weak and strong reference profiles.

For each property, the threshold is the midpoint between the best weak reference and the worst
strong reference, set only where the strong references all score above every weak one (the
references "separate"); elsewhere the property stays UNCALIBRATED with the reason recorded. Every
run must have used the same spec (name, version and sha256). One file can hold several specs.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.seqbench.run_files import load_run


@dataclass(frozen=True)
class Thresholds:
    """The calibration of one spec, as read from a calibration file."""

    properties: dict
    source: str


def spec_key(spec: dict) -> str:
    return f"{spec['name']}@{spec['version']}"


def load_thresholds(path: Path | None, spec_name: str, version: int, sha256: str) -> Thresholds | None:
    """The thresholds for a spec, or None when the file or its entry for this exact spec is missing."""
    if path is None or not Path(path).is_file():
        return None
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError as error:
        raise SeqInputError(f"{path}: not valid JSON ({error.msg}, line {error.lineno}).") from None
    entry = data.get("specs", {}).get(f"{spec_name}@{version}")
    if not entry or entry.get("spec_sha256") != sha256:
        return None
    return Thresholds(entry.get("properties", {}), f"calibration {Path(path).name}")


def calibrate(weak: list[Path], strong: list[Path], output: Path) -> dict:
    """Write (or update) a calibration file from reference runs; returns this spec's entry."""
    if not weak or not strong:
        raise SeqInputError("seqbench calibrate needs at least one --weak and one --strong run.")
    runs = [(path, "weak", load_run(path)) for path in weak] + [
        (path, "strong", load_run(path)) for path in strong
    ]
    first_spec = runs[0][2].spec
    for path, _, run in runs:
        if (run.spec["name"], run.spec["version"], run.spec["sha256"]) != (
            first_spec["name"],
            first_spec["version"],
            first_spec["sha256"],
        ):
            raise SeqInputError(
                f"{path}: made with spec {spec_key(run.spec)} ({run.spec['sha256'][:12]}…), but {runs[0][0]} "
                f"with {spec_key(first_spec)} ({first_spec['sha256'][:12]}…); calibrate runs of one spec."
            )
    names = [p["name"] for p in runs[0][2].properties]
    properties = {}
    for name in names:
        values: dict[str, list[dict]] = {"weak": [], "strong": []}
        for path, role, run in runs:
            prop = next((p for p in run.properties if p["name"] == name), None)
            if prop is None or prop["value"] is None:
                continue
            values[role].append({"run": f"{run.algorithm_label} ({Path(path).name})", "value": prop["value"]})
        entry: dict = {"threshold": None, "weak": values["weak"], "strong": values["strong"]}
        if values["weak"] and values["strong"]:
            weak_best = max(values["weak"], key=lambda v: v["value"])
            strong_worst = min(values["strong"], key=lambda v: v["value"])
            entry["weak_best"], entry["strong_worst"] = weak_best, strong_worst
            if strong_worst["value"] > weak_best["value"]:
                entry["threshold"] = round((weak_best["value"] + strong_worst["value"]) / 2, 6)
            else:
                entry["note"] = (
                    f"the reference profiles do not separate (strong worst {strong_worst['value']:.3f} ≤ "
                    f"weak best {weak_best['value']:.3f})"
                )
        else:
            entry["note"] = "not measured in every reference run"
        properties[name] = entry
    spec_entry = {
        "spec_sha256": first_spec["sha256"],
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "references": [
            {
                "role": role,
                "run": str(path),
                "algorithm": run.algorithm_label,
                "seeds": run.manifest["seeds"],
                "tasks": {Path(t["path"]).name: t["sha256"] for t in run.manifest["tasks"]},
            }
            for path, role, run in runs
        ],
        "properties": properties,
    }
    data: dict[str, Any] = {"calibration": output.stem, "specs": {}}
    if output.is_file():
        try:
            data = json.loads(output.read_text())
        except json.JSONDecodeError:
            raise SeqInputError(f"{output}: exists but is not valid JSON; move it away first.") from None
    data.setdefault("specs", {})[spec_key(first_spec)] = spec_entry
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(data, indent=2) + "\n")
    return spec_entry
