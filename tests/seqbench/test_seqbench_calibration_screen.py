"""Calibration from weak and strong reference profiles, and the screen's PROMOTE / DROP / INCONCLUSIVE."""

from __future__ import annotations

import json

import pytest
from seqbench_helpers import SCREEN_SPEC, one_line_error, reference_run, seqbench_cli

from seq.seqbench.calibration import calibrate
from seq.seqbench.rereport import rereport
from seq.seqbench.screening import screen

WEAK = (("random", (0, 1, 2)), ("memorizer", (0, 1, 2)))
STRONG = ("count-lm", (0, 1, 2))


def _values(run) -> dict[str, float]:
    data = json.loads((run / "properties.json").read_text())["properties"]
    return {p["name"]: p["value"] for p in data}


def test_reports_are_uncalibrated_until_calibration_then_order_the_references(tmp_path):
    weak = [reference_run(*w) for w in WEAK]
    strong = reference_run(*STRONG)
    for run in [*weak, strong]:
        assert "UNCALIBRATED" in (run / "report.md").read_text()
    output = tmp_path / "calibration" / "v1.json"
    result = seqbench_cli(
        "calibrate", "--weak", weak[0], "--weak", weak[1], "--strong", strong, "--output", output
    )
    assert result.returncode == 0, result.stderr
    entry = json.loads(output.read_text())["specs"]["full_v1@1"]
    calibrated = [name for name, p in entry["properties"].items() if p["threshold"] is not None]
    strong_values, weak_values = _values(strong), [_values(w) for w in weak]
    differ = [n for n in strong_values if abs(strong_values[n] - max(w[n] for w in weak_values)) > 0.05]
    assert set(differ) <= set(calibrated) and len(calibrated) >= 8
    for name, prop in entry["properties"].items():
        if prop["threshold"] is None:
            assert "do not separate" in prop["note"]
        else:
            assert max(w[name] for w in weak_values) < prop["threshold"] < strong_values[name]
    strong_props = {p["name"]: p for p in rereport(strong, output)}
    for run in weak:
        weak_props = {p["name"]: p for p in rereport(run, output)}
        for name in calibrated:
            assert strong_props[name]["status"] == "PASS" and weak_props[name]["status"] == "FAIL", name
            assert "threshold" in weak_props[name]["evidence"]
    report = (strong / "report.md").read_text()
    assert "UNCALIBRATED**:" not in report and "| PASS |" in report


def test_calibration_refuses_runs_of_different_specs(tmp_path):
    strong = reference_run(*STRONG)
    other = tmp_path / "other"
    other.mkdir()
    for name in ("manifest.json", "properties.json", "resolved_specs.json", "predictions.parquet"):
        (other / name).write_bytes((strong / name).read_bytes())
    manifest = json.loads((other / "manifest.json").read_text())
    manifest["spec"]["version"] = 9
    (other / "manifest.json").write_text(json.dumps(manifest))
    result = seqbench_cli("calibrate", "--weak", other, "--strong", strong, "--output", tmp_path / "c.json")
    assert "calibrate runs of one spec" in one_line_error(result)


def test_screen_promotes_the_strong_reference_against_exact_knn(tmp_path):
    baseline = reference_run("exact-knn", (0, 1, 2))
    result = seqbench_cli(
        "screen",
        SCREEN_SPEC,
        "--candidate",
        reference_run(*STRONG),
        "--baseline",
        baseline,
        "--output",
        tmp_path / "screen",
    )
    assert result.returncode == 0, result.stderr
    assert "PROMOTE" in result.stdout.splitlines()[-1]
    data = json.loads((tmp_path / "screen" / "screen.json").read_text())
    assert data["verdict"] == "PROMOTE" and len(data["metrics"]) == 10
    binding = next(m for m in data["metrics"] if m["metric"] == "binding")
    assert binding["low"] > 0 and binding["method"] == "agresti-min"  # one observation per item each side
    assert (tmp_path / "screen" / "screen.md").is_file() and (tmp_path / "screen" / "screen.html").is_file()


def test_screen_drops_random_with_three_seeds_but_not_with_one(tmp_path):
    baseline = reference_run("exact-knn", (0, 1, 2))
    seeds = [reference_run("random", (seed,)) for seed in (0, 1, 2)]
    three = screen(SCREEN_SPEC, seeds, baseline, tmp_path / "three")
    assert three["verdict"] == "DROP", three["metrics"]
    assert three["candidate"]["seeds"] == 3
    assert all(m["high"] is not None and m["high"] <= 0 for m in three["metrics"])
    one = screen(SCREEN_SPEC, seeds[:1], baseline, tmp_path / "one")
    assert one["verdict"] in ("INCONCLUSIVE", "PROMOTE")
    assert one["verdict"] != "DROP"


def test_screen_refuses_overlapping_seeds_and_other_specs(tmp_path):
    baseline = reference_run("exact-knn", (0, 1, 2))
    seed0 = reference_run("random", (0,))
    result = seqbench_cli(
        "screen",
        SCREEN_SPEC,
        "--candidate",
        seed0,
        "--candidate",
        seed0,
        "--baseline",
        baseline,
        "--output",
        tmp_path / "s",
    )
    assert "seed 0 is in both candidate runs" in one_line_error(result)
    spec = tmp_path / "screen.yaml"
    spec.write_text(SCREEN_SPEC.read_text().replace("name: full_v1", "name: causal_v2"))
    result = seqbench_cli(
        "screen", spec, "--candidate", seed0, "--baseline", baseline, "--output", tmp_path / "s"
    )
    assert "screens runs of causal_v2@1" in one_line_error(result)


@pytest.mark.parametrize("missing", ["properties.json", "predictions.parquet"])
def test_calibrate_names_a_missing_run_file(tmp_path, missing):
    strong = reference_run(*STRONG)
    partial = tmp_path / "partial"
    partial.mkdir()
    for name in ("manifest.json", "properties.json", "resolved_specs.json", "predictions.parquet"):
        if name != missing:
            (partial / name).write_bytes((strong / name).read_bytes())
    with pytest.raises(Exception, match=missing):
        calibrate([partial], [strong], tmp_path / "c.json")
