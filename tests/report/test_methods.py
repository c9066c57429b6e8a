"""Every paired row and every across-tasks row names its method, in every view: terminal, JSON,
Markdown, the summary CSV and what goes to a tracker."""

from __future__ import annotations

import csv
import json

from conftest import run_cli

import seq
from seq.report.text import sequential_line
from seq.report.tracking import tracked_methods, tracked_metrics


def test_each_paired_and_across_tasks_row_names_its_method(toy_file, tmp_path):
    seq.deploy(toy_file)
    report = seq.eval.run(
        "line-controller", benchmark="line", vs="line-controller", vs_params={"noise": "0.3"}, envs=2
    )
    markdown, runs = tmp_path / "report.md", tmp_path / "runs.csv"
    text = run_cli("eval", "report", report.eval_id, "--markdown", str(markdown), "--csv", str(runs))
    assert text.returncode == 0, text.stderr
    as_json = json.loads(run_cli("eval", "report", report.eval_id, "--json").stdout)

    for row in as_json["comparisons"]:
        c = row["comparison"]
        if c["kind"] == "rate":
            assert c["verdict_interval"] == c["difference"]["method"] == "tango"
            assert c["test"] == "mcnemar-exact" and c["agresti_min"]["method"] == "agresti-min"
        else:
            assert c["verdict_interval"].startswith("paired-t") or c["verdict_interval"].startswith(
                "none"
            )
            assert c["test"] is None and c["agresti_min"] is None
    assert as_json["across_tasks"]
    for row in as_json["across_tasks"]:
        assert row["method"] == "iqm-stratified-bootstrap"
        if "probability_of_improvement" in row:
            assert row["poi_method"] == "poi-stratified-bootstrap"

    section = markdown.read_text().split("## Paired comparisons")[1].split("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith(f"| {report.arms[1]} |")]
    assert len(rows) == len(as_json["comparisons"])
    for line in rows:
        assert "Tango score" in line or "paired Student t" in line or "no interval" in line, line
        if "| success |" in line:
            assert "Tango score" in line and "(McNemar exact)" in line
    across_md = [line for line in markdown.read_text().splitlines() if "IQM, stratified bootstrap" in line]
    assert len(across_md) == 2  # one row per arm

    summary = list(csv.DictReader((tmp_path / "runs.summary.csv").open()))
    paired = [r for r in summary if r["row"] == "paired"]
    assert len(paired) == len(as_json["comparisons"])
    assert all(r["method"] for r in paired)
    assert {r["test"] for r in paired if r["metric"] == "success"} == {"mcnemar-exact"}
    assert {r["method"] for r in summary if r["row"] == "across-tasks"} == {
        "iqm-stratified-bootstrap",
        "poi-stratified-bootstrap",
    }

    flat, methods = tracked_metrics(report), tracked_methods(report)
    arm = report.arms[1]
    key = f"{arm}/paired/overall/all/success"
    assert flat[f"{key}/difference"] == report.comparison("success").difference.difference
    assert methods[key].startswith("interval tango; test mcnemar-exact; verdict ")
    assert methods[f"{arm}/across_tasks/success"].startswith("IQM iqm-stratified-bootstrap")
    assert all(value == value for value in flat.values())  # no NaN goes to a tracker

    terminal = text.stdout
    assert "Tango score" in terminal and "McNemar exact" in terminal
    assert "Agresti–Min [95%]" in terminal
    assert "the interval other tools report, shown and not used" in terminal


def test_a_sequential_test_at_its_horizon_is_undecided_not_no_difference():
    interval = {"difference": 0.0, "low": -0.08, "high": 0.08, "level": 0.95}
    sequential = {
        "decision": "no difference",  # as records written before this wording hold it
        "look": 5,
        "looks": 5,
        "pairs_used": 40,
        "pairs_planned": 40,
        "statistic": 0.0,
        "boundary": 2.03,
        "interval": interval,
        "metric": "success",
        "alpha": 0.05,
        "test": "group-sequential McNemar",
    }
    from types import SimpleNamespace

    from seq.record.manifest import SequentialDecision

    line = sequential_line(SimpleNamespace(sequential=SequentialDecision(**sequential)))
    assert "undecided (not significant) at look 5 of 5" in line and "no difference" not in line
