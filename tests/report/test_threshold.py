"""The equivalence margin: refused at input unless it is in (0, 1); a record that holds a bad one
(written before the check) still reports, without an equivalence verdict."""

from __future__ import annotations

import csv
import json
import sqlite3

import pytest
from conftest import refused_in_one_line, run_cli

import seq


@pytest.mark.parametrize("value", ["-1", "0", "nan", "1"])
def test_a_threshold_outside_0_1_is_refused_before_the_eval_is_stored(toy_file, value):
    seq.deploy(toy_file)
    result = run_cli(
        "eval", "run", "line-controller", "--benchmark", "line", "--vs", "line-controller",
        "--threshold", value,
    )  # fmt: skip
    refused_in_one_line(result, "--threshold must be a number between 0 and 1", value)
    assert seq.eval.ls() == []


def test_eval_compare_refuses_a_bad_threshold(toy_file):
    seq.deploy(toy_file)
    first = seq.eval.run("line-controller", benchmark="line", tasks=["near"], envs=1)
    second = seq.eval.run("line-controller", benchmark="line", tasks=["near"], envs=1)
    result = run_cli("eval", "compare", first.eval_id, second.eval_id, "--threshold", "nan")
    refused_in_one_line(result, "--threshold must be a number between 0 and 1", "nan")
    with pytest.raises(seq.SeqInputError, match="between 0 and 1"):
        seq.eval.compare(first.eval_id, second.eval_id, threshold=-1)


def test_a_record_holding_a_bad_threshold_still_reports(toy_file, tmp_path, seq_home):
    seq.deploy(toy_file)
    report = seq.eval.run(
        "line-controller", benchmark="line", vs="line-controller", seeds=range(40), envs=2
    )  # 80 conditions agreeing: Tango's interval fits inside ±0.05 from 73
    assert report.comparison("success").verdict == "within threshold"
    with sqlite3.connect(seq_home / "seq.db") as db:  # as a record written before the check
        db.execute(
            "UPDATE evals SET arguments = json_set(arguments, '$.threshold', -1) WHERE id = ?",
            (report.eval_id,),
        )
    runs = tmp_path / "runs.csv"
    result = run_cli("eval", "report", report.eval_id, "--csv", str(runs))
    assert result.returncode == 0, result.stderr
    assert "stored threshold -1 is not between 0 and 1" in result.stdout
    assert "verdict: within threshold" not in result.stdout and "│ within threshold" not in result.stdout
    assert "verdict: undecided" in result.stdout or "│ undecided" in result.stdout
    status = run_cli("eval", "status", report.eval_id)
    assert status.returncode == 0, status.stderr
    as_json = json.loads(run_cli("eval", "report", report.eval_id, "--json").stdout)
    assert as_json["threshold"] is None
    assert {row["comparison"]["verdict"] for row in as_json["comparisons"]} <= {
        "undecided", "B higher", "B lower"
    }  # fmt: skip
    summary = list(csv.DictReader((tmp_path / "runs.summary.csv").open()))
    assert all(row["threshold"] == "" for row in summary if row["row"] == "paired")
