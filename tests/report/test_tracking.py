"""`--report-to trackio`: the report's metrics mirrored to a tracker run keyed by the eval id."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import run_cli

import seq

pytest.importorskip("trackio")


def test_metrics_reach_trackio_and_a_later_export_continues_the_same_run(toy_file, tmp_path, monkeypatch):
    monkeypatch.setenv("TRACKIO_DIR", str(tmp_path / "trackio"))
    seq.deploy(toy_file)
    ran = run_cli(
        "eval", "run", "line-controller", "--benchmark", "line", "--envs", "1", "--report-to", "trackio"
    )
    assert ran.returncode == 0, ran.stderr
    report = seq.eval.report(seq.eval.ls()[0]["id"])
    exported = run_cli(
        "eval", "export", report.eval_id, "-o", str(tmp_path / "out"), "--report-to", "trackio"
    )
    assert exported.returncode == 0, exported.stderr
    with sqlite3.connect(tmp_path / "trackio" / "seq.db") as db:
        rows = db.execute("SELECT run_name, metrics FROM metrics ORDER BY id").fetchall()
    assert [name for name, _ in rows] == [report.eval_id, report.eval_id]  # one run, continued
    logged = json.loads(rows[0][1])
    assert logged["overall/all/success"] == report.metric("success").value
    assert logged["task/near/success/n"] == 3.0


def test_an_unknown_tracker_is_refused(toy_file):
    seq.deploy(toy_file)
    result = run_cli("eval", "run", "line-controller", "--benchmark", "line", "--report-to", "mlflow")
    assert result.returncode == 2 and "expected one of wandb, trackio, none" in result.stderr
    assert seq.eval.ls() == []  # refused before the eval started
