"""The golden test: CSV → learn → infer → metrics → properties → Parquet / Markdown / HTML, through a
black-box fixture algorithm run in a subprocess, checked against values computed independently here."""

from __future__ import annotations

import csv
import json
import math

import pyarrow.parquet as pq
import yaml
from seqbench_helpers import TINY_SPEC, cohort_files, fixture_yaml, seqbench_cli

from seq.seqbench.pipeline import run
from seq.seqbench.run_files import RUN_FILES


def _expected(full_csv):
    """What the fixture's lookup table must score, computed from the CSV alone."""
    rows = list(csv.DictReader(full_csv.open()))
    table = {
        r["input"]: r["target"] for r in rows if r["split"] == "train" and r["family"] in ("recall", "markov")
    }
    main = [r for r in rows if r["split"] == "test" and r["family"] in ("recall", "markov")]
    main = [r for r in main if r["condition"] in ("short", "exact", "paraphrase")]
    exact = {r["id"]: float(table.get(r["input"]) == r["target"]) for r in main}
    recall = [r for r in main if r["family"] == "recall"]
    log_p = [
        0.0 if table.get(r["input"]) == r["target"] else -20.0 if r["input"] in table else math.log(0.25)
        for r in recall
    ]
    return rows, main, exact, recall, sum(log_p) / len(log_p)


def test_csv_to_reports_through_a_black_box_subprocess(tmp_path):
    algorithm = fixture_yaml(tmp_path / "algo")
    full = cohort_files("full.csv")[0]
    out = tmp_path / "run"
    result = seqbench_cli("run", TINY_SPEC, "--algorithm", algorithm, "--tasks", full, "--output", out)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    for name in RUN_FILES:
        assert (out / name).is_file(), name
    assert (out / "curves" / "learning_curve.csv").is_file() and (
        out / "curves" / "learning_curve.svg"
    ).is_file()

    rows, main, exact, recall, mean_log_p = _expected(full)
    table = pq.read_table(out / "predictions.parquet").to_pylist()
    main_records = [r for r in table if r["stage"] == "main"]
    assert len(main_records) == 2 * len(main)  # two seeds, every probe once per seed
    assert {r["seed"] for r in table} == {0, 1} and not any(r["broadcast"] for r in table)
    for record in main_records:
        assert record["exact_match"] == exact[record["item_id"]]
        assert record["status"] == "ok"
        assert len(record["candidates"]) == len(record["log_probabilities"]) == 4
    corrected = [r for r in table if r["stage"] == "correction" and r["condition"] == "corrected"]
    assert corrected and all(r["exact_match"] == 1.0 for r in corrected)

    properties = {p["name"]: p for p in json.loads((out / "properties.json").read_text())["properties"]}
    markov = [r for r in main if r["family"] == "markov"]
    assert math.isclose(properties["prediction"]["value"], sum(exact[r["id"]] for r in markov) / len(markov))
    assert math.isclose(properties["retrieval"]["value"], sum(exact[r["id"]] for r in recall) / len(recall))
    assert properties["retrieval"]["value"] == 0.5  # exact probes known, paraphrases never trained
    assert properties["one_example_correction"]["value"] == 1.0
    assert math.isclose(properties["likelihood"]["value"], mean_log_p, rel_tol=1e-6)
    assert properties["retrieval"]["interval"]["method"] == "wilson"
    assert properties["likelihood"]["interval"]["method"].startswith("bootstrap")
    assert all(p["status"] == "UNCALIBRATED" for p in properties.values())
    assert properties["retrieval"]["items"] == len(recall) and properties["retrieval"]["seeds"] == [0, 1]

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["independent_seeds"] == [0, 1]
    assert manifest["algorithm"]["name"] == "lookup" and manifest["spec"]["name"] == "tiny_v1"
    assert manifest["tasks"][0]["rows"] == len(rows)
    metrics = json.loads((out / "metrics.json").read_text())
    groups = {(g["family"], g["condition"]): g for g in metrics["stages"]["main"]}
    assert groups[("recall", "exact")]["exact_match"]["mean"] == 1.0
    assert groups[("recall", "paraphrase")]["exact_match"]["mean"] == 0.0
    selection = json.loads((out / "selection.json").read_text())
    assert len(selection["selectors"]["probes"]["ids"]) == len(main)
    resources = json.loads((out / "resources.json").read_text())
    assert [c["operation"] for c in resources["calls"]] == ["learn", "infer"] * 4
    assert all(c["status"] == "ok" and c["process_s"] > 0 for c in resources["calls"])

    markdown = (out / "report.md").read_text()
    assert "UNCALIBRATED" in markdown and "| retrieval | 0.500 [" in markdown
    html = (out / "report.html").read_text()
    assert html.startswith("<!doctype html>") and "<table>" in html and "retrieval" in html
    assert "retrieval                  0.500  UNCALIBRATED" in result.stdout


def test_a_seed_invariant_algorithm_is_evaluated_once_and_broadcast(tmp_path):
    algorithm = fixture_yaml(tmp_path / "algo", seed_invariant=True)
    out = tmp_path / "run"
    result = seqbench_cli(
        "run",
        TINY_SPEC,
        "--algorithm",
        algorithm,
        "--tasks",
        cohort_files("full.csv")[0],
        "--output",
        out,
        "--quiet",
    )
    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["seeds"] == [0, 1] and manifest["independent_seeds"] == [0]
    assert "broadcast" in manifest["seed_axis"]
    resources = json.loads((out / "resources.json").read_text())
    assert {c["seed"] for c in resources["calls"]} == {0}  # one evaluation
    table = pq.read_table(out / "predictions.parquet").to_pylist()
    copies = [r for r in table if r["seed"] == 1]
    assert copies and all(r["broadcast"] and r["source_seed"] == 0 for r in copies)
    properties = {p["name"]: p for p in json.loads((out / "properties.json").read_text())["properties"]}
    items = len([r for r in table if r["seed"] == 0 and r["stage"] == "main" and r["family"] == "recall"])
    assert properties["retrieval"]["interval"]["n"] == items  # broadcast copies are not observations
    assert properties["retrieval"]["seeds"] == [0]


def test_a_score_only_algorithm_is_measured_by_choice_accuracy(tmp_path):
    algorithm = fixture_yaml(tmp_path / "algo", generate=False)
    out = tmp_path / "run"
    full = cohort_files("full.csv")[0]
    result = seqbench_cli(
        "run",
        TINY_SPEC,
        "--algorithm",
        algorithm,
        "--tasks",
        full,
        "--output",
        out,
        "--quiet",
        "--seeds",
        "0",
    )
    assert result.returncode == 0, result.stderr
    table = pq.read_table(out / "predictions.parquet").to_pylist()
    assert all(r["output"] is None and r["exact_match"] is None for r in table)
    properties = {p["name"]: p for p in json.loads((out / "properties.json").read_text())["properties"]}
    assert properties["retrieval"]["metric"] == "choice_accuracy"
    exact = [r for r in table if r["stage"] == "main" and r["condition"] == "exact"]
    assert all(r["choice_correct"] == 1.0 for r in exact)  # the stored target scores 0.0, the others null
    paraphrase = [r for r in table if r["stage"] == "main" and r["condition"] == "paraphrase"]
    assert all(r["choice_correct"] == 0.25 for r in paraphrase)  # a four-way tie shares the credit
    assert "cannot generate" in (out / "report.md").read_text()


def test_an_infer_only_stage_reuses_an_earlier_checkpoint(tmp_path):
    spec = yaml.safe_load(TINY_SPEC.read_text())
    spec["stages"].append({"name": "again", "model": "main", "infer": ["probes"]})
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    result = run(
        path, str(fixture_yaml(tmp_path / "algo")), cohort_files("full.csv"), tmp_path / "run", seeds=[0]
    )
    calls = [(c.operation, c.stage) for c in result.calls]
    assert ("infer", "again") in calls and ("learn", "again") not in calls
    table = pq.read_table(tmp_path / "run" / "predictions.parquet").to_pylist()
    by_stage = {}
    for r in table:
        by_stage.setdefault(r["stage"], {})[r["item_id"]] = r["exact_match"]
    assert by_stage["again"] == by_stage["main"]


def test_the_reference_algorithms_are_listed():
    result = seqbench_cli("algorithms")
    assert result.returncode == 0
    assert [line.split()[0] for line in result.stdout.splitlines()] == [
        "exact-knn",
        "random",
        "memorizer",
        "count-lm",
    ]
