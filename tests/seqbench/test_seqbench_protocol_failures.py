"""Protocol enforcement: checkpoint mutation, budgets, malformed predictions, missing checkpoints."""

from __future__ import annotations

import json
import time

import yaml
from seqbench_helpers import TINY_SPEC, cohort_files, fixture_yaml, one_line_error, seqbench_cli


def _spec_with_budget(tmp_path, **learn):
    spec = yaml.safe_load(TINY_SPEC.read_text())
    spec["budget"]["learn"].update(learn)
    path = tmp_path / "budget_spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _run(tmp_path, mode, spec=TINY_SPEC):
    out = tmp_path / "run"
    algorithm = fixture_yaml(tmp_path / "algo", mode)
    result = seqbench_cli(
        "run",
        spec,
        "--algorithm",
        algorithm,
        "--tasks",
        cohort_files("full.csv")[0],
        "--output",
        out,
        "--seeds",
        "0",
        "--quiet",
    )
    return result, out


def test_infer_that_writes_into_its_checkpoint_fails_the_run_naming_the_file(tmp_path):
    result, out = _run(tmp_path, "mutate-on-infer")
    line = one_line_error(result, code=1)
    model = out / "work" / "seed-0" / "main" / "model"
    assert "run failed: infer (seed 0, stage main) changed the checkpoint" in line
    assert f"{model} (modified)" in line


def test_learn_that_changes_its_input_checkpoint_fails_the_run(tmp_path):
    result, _ = _run(tmp_path, "touch-model-in")
    line = one_line_error(result, code=1)
    assert "learn (seed 0, stage main) changed its input checkpoint" in line
    assert str(tmp_path / "algo" / "initial.json") in line


def test_a_learn_over_its_time_budget_is_killed_and_recorded(tmp_path):
    started = time.monotonic()
    result, out = _run(tmp_path, "slow-learn", _spec_with_budget(tmp_path, wall_s=1))
    assert time.monotonic() - started < 20  # killed, not waited for (it sleeps 30 s)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "over its wall-time budget of 1 s" in result.stderr
    calls = json.loads((out / "resources.json").read_text())["calls"]
    learn = calls[0]
    assert learn["operation"] == "learn" and learn["status"] == "over_budget"
    assert learn["reason"].startswith("killed after") and 1.0 <= learn["process_s"] < 5
    assert calls[1]["status"] == "skipped"  # no checkpoint to infer with
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed_with_failures"
    assert "over_budget" in (out / "report.md").read_text()
    diagnostics = json.loads((out / "diagnostics.json").read_text())
    assert diagnostics["unanswered_items"] > 0


def test_a_learn_over_its_memory_budget_is_killed_and_recorded(tmp_path):
    result, out = _run(tmp_path, "hog-memory", _spec_with_budget(tmp_path, memory_mb=150))
    assert result.returncode == 1
    learn = json.loads((out / "resources.json").read_text())["calls"][0]
    assert learn["status"] == "over_budget" and "memory" in learn["reason"]


def test_a_malformed_predictions_line_is_reported_with_its_line_number(tmp_path):
    result, out = _run(tmp_path, "bad-line")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "predictions.jsonl line 3: not valid JSON" in result.stderr
    diagnostics = json.loads((out / "diagnostics.json").read_text())
    assert any(p.startswith("predictions.jsonl line 3:") for p in diagnostics["protocol_problems"])
    infer = json.loads((out / "resources.json").read_text())["calls"][1]
    assert infer["status"] == "failed" and "line 3" in infer["reason"]


def test_a_learn_that_writes_no_checkpoint_is_a_failed_call(tmp_path):
    result, out = _run(tmp_path, "no-model")
    assert result.returncode == 1
    learn = json.loads((out / "resources.json").read_text())["calls"][0]
    assert learn["status"] == "failed" and "wrote no checkpoint" in learn["reason"]


def test_checkpoint_budget_is_enforced_after_learn(tmp_path):
    result, out = _run(tmp_path, "ok", _spec_with_budget(tmp_path, checkpoint_mb=0.001))
    assert result.returncode == 1
    learn = json.loads((out / "resources.json").read_text())["calls"][0]
    assert learn["status"] == "over_budget" and "checkpoint" in learn["reason"]


def test_example_budget_is_checked_before_any_call(tmp_path):
    result, out = _run(tmp_path, "ok", _spec_with_budget(tmp_path, examples=5))
    line = one_line_error(result)
    assert "stage main would send" in line and "budget.learn.examples of 5" in line
    assert not (out / "manifest.json").exists()
