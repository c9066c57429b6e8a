"""`seqbench report RUN`: re-apply the current calibration to a finished run and rewrite its reports.

A run made before calibration says UNCALIBRATED; after `seqbench calibrate`, this turns its stored
property values (never recomputed, never re-run) into PASS/FAIL with the evidence.
"""

from __future__ import annotations

import json
from pathlib import Path

from seq.seqbench.calibration import load_thresholds
from seq.seqbench.properties import NOT_MEASURED, apply_threshold
from seq.seqbench.run_files import RUN_FILES, load_run
from seq.seqbench.run_report import write_reports
from seq.stats import Interval


def rereport(run_dir: Path, calibration: Path | None = None) -> list[dict]:
    """Rewrite properties.json, manifest.json's calibration fields, report.md and report.html."""
    run = load_run(run_dir)
    path = calibration or (Path(run.manifest["calibration"]) if run.manifest.get("calibration") else None)
    spec = run.spec
    thresholds = load_thresholds(path, spec["name"], spec["version"], spec["sha256"])
    properties = []
    for prop in run.properties:
        if prop["value"] is not None and prop["status"] != NOT_MEASURED:
            i = prop["interval"]
            interval = Interval(i["mean"], i["low"], i["high"], i["n"], i["method"], i["level"])
            prop = {**prop, **apply_threshold(prop["name"], prop["value"], interval, thresholds)}
        properties.append(prop)
    run.manifest["calibration"] = str(path) if path else None
    run.manifest["calibrated"] = thresholds is not None
    (run.path / "manifest.json").write_text(json.dumps(run.manifest, indent=2) + "\n")
    (run.path / "properties.json").write_text(
        json.dumps({"calibrated": thresholds is not None, "properties": properties}, indent=2) + "\n"
    )
    payload = {
        name: json.loads((run.path / name).read_text()) for name in RUN_FILES if name.endswith(".json")
    }
    write_reports(run.path, payload)
    return properties
