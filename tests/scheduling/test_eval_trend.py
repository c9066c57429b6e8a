"""`seq eval trend`: every eval of a pairing, scheduled or manual, by version and date, with its
interval, and each version paired against the previous one on their shared episodes."""

from __future__ import annotations

import json
import time

import pytest
from conftest import TOY, refused_in_one_line, run_cli

import seq

SEEDS = [0, 1, 2, 3, 4]


def _history(toy_file) -> dict[str, str]:
    """A manual eval of v1, a timed schedule's eval of v1, then a deploy of v2 and its eval."""
    seq.deploy(toy_file)
    manual = seq.eval.run("line-controller", benchmark="line", seeds=SEEDS, envs=1).eval_id
    seq.schedule("line-controller", benchmark="line", every="hourly", seeds=SEEDS, envs=1)
    seq.schedule("line-controller", benchmark="line", every="deploy", seeds=SEEDS, envs=1)
    (timed,) = seq.run_due(now=time.time() + 3600)
    toy_file.write_text(TOY.replace("noise: float = 0.0, chunk", "noise: float = 0.3, chunk"))
    seq.deploy(toy_file)
    (deployed,) = seq.run_due()
    assert timed.status == deployed.status == "completed"
    return {"manual": manual, "time": timed.eval_id, "deploy": deployed.eval_id}


def test_the_trend_lists_scheduled_and_manual_evals_with_intervals(toy_file):
    evals = _history(toy_file)
    result = run_cli("eval", "trend", "line-controller", "--benchmark", "line", "--json")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert (found["policy"], found["benchmark"], found["metric"]) == ("line-controller", "line", "success")
    rows = [(p["eval_id"], p["policy_version"], p["source"]) for p in found["points"]]
    assert rows == [
        (evals["manual"], 1, "manual"),
        (evals["time"], 1, "schedule #1 (time)"),
        (evals["deploy"], 2, "schedule #2 (deploy)"),
    ]
    for point in found["points"]:
        assert point["n"] == 10 and point["method"] == "wilson"
        assert point["low"] <= point["value"] <= point["high"]
        assert point["created_at"] > 0 and point["status"] == "completed"
    (step,) = found["steps"]  # v2 against v1's newest eval, the scheduled one
    assert (step["baseline_version"], step["version"]) == (1, 2)
    assert (step["baseline_eval"], step["eval_id"]) == (evals["time"], evals["deploy"])
    compared = step["comparison"]
    v1, v2 = found["points"][1], found["points"][2]
    assert compared["n"] == 10 and compared["kind"] == "rate"
    assert compared["difference"]["difference"] == pytest.approx(v2["value"] - v1["value"])
    assert (
        compared["difference"]["low"]
        <= compared["difference"]["difference"]
        <= compared["difference"]["high"]
    )
    assert compared["test"] == "mcnemar-exact" and compared["p_value"] is not None

    text = run_cli("eval", "trend", "line-controller", "--benchmark", "line").stdout
    assert max(map(len, text.splitlines())) <= 80, text
    assert f"v1 -> v2 ({evals['time']} vs {evals['deploy']}):" in text
    assert "10 shared episodes, B - A = " in text and "#2 deploy" in text and "manual" in text


def test_the_python_twin_and_another_metric(toy_file):
    evals = _history(toy_file)
    found = seq.trend("line-controller", "line", metric="distance")
    assert found.metric == "distance" and [p.eval_id for p in found.points] == list(evals.values())
    assert all(p.method != "wilson" and p.low is not None for p in found.points)  # a mean: bootstrap
    (step,) = found.steps
    assert step.comparison is not None and step.comparison["kind"] == "mean"


def test_a_pairing_never_evaluated_is_refused(toy_file):
    seq.deploy(toy_file)
    refused_in_one_line(
        run_cli("eval", "trend", "line-controller", "-b", "line"), "no eval has run line-controller"
    )
