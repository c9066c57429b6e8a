"""One report object, rendered as terminal text, JSON, Markdown and CSV."""

from __future__ import annotations

import csv
import json

from conftest import run_cli

import seq


def test_every_view_renders_the_same_report(toy_file, tmp_path):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line-errors", envs=2)
    markdown, runs = tmp_path / "report.md", tmp_path / "runs.csv"
    result = run_cli("eval", "report", report.eval_id, "--markdown", str(markdown), "--csv", str(runs))
    assert result.returncode == 0, result.stderr
    assert "Per task" in result.stdout and "RuntimeError: this task cannot be built" in result.stdout
    assert "core-seconds" in result.stdout and "manifest" in result.stdout

    text = markdown.read_text()
    assert "| near |" in text and "## Errors and timeouts" in text and "Wilson" in text

    rows = list(csv.DictReader(runs.open()))
    assert len(rows) == 6 and {r["status"] for r in rows} == {"ok", "error", "timed_out"}
    assert all(r["eval_id"] == report.eval_id for r in rows)

    as_json = json.loads(run_cli("eval", "report", report.eval_id, "--json").stdout)
    overall = as_json["groups"][0]
    assert overall["kind"] == "overall" and overall["errors"] == 3 and overall["timed_out"] == 1
    success = next(m for m in overall["metrics"] if m["name"] == "success")
    assert success["method"] == "wilson" and success["n"] == 3 and success["small_n"] is True
    assert as_json["manifest"]["policy"]["name"] == "line-controller"
    assert as_json["manifest"]["environment"]["python"]


def test_status_and_ls(toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", tasks=["near"], envs=1)
    status = run_cli("eval", "status", report.eval_id)
    assert status.returncode == 0 and "3/3 episodes" in status.stdout and "success" in status.stdout
    listing = json.loads(run_cli("eval", "ls", "--json").stdout)
    assert listing[0]["id"] == report.eval_id and listing[0]["done"] == 3
