"""`seq eval trend`: every eval of a pairing, scheduled or manual, by version and date, with its
interval, and each version paired against the previous one on their shared episodes."""

from __future__ import annotations

import json
import time

import pytest
from conftest import TOY, refused_in_one_line, run_cli

import seq

SEEDS = [0, 1, 2, 3, 4]
NARROW = {"COLUMNS": "80"}


def _deploy_v2(toy_file) -> None:
    toy_file.write_text(TOY.replace("noise: float = 0.0, chunk", "noise: float = 0.3, chunk"))
    seq.deploy(toy_file)


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

    text = run_cli("eval", "trend", "line-controller", "--benchmark", "line", env=NARROW).stdout
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


def _trend_text(*args: str) -> str:
    result = run_cli("eval", "trend", "line-controller", *args, env=NARROW)
    assert result.returncode == 0, result.stderr
    assert max(map(len, result.stdout.splitlines())) <= 80, result.stdout
    return result.stdout


def test_a_budget_stopped_eval_is_listed_but_a_completed_one_stands_for_its_version(toy_file):
    seq.deploy(toy_file)
    v1 = seq.eval.run("line-controller", benchmark="line", seeds=SEEDS, envs=1).eval_id
    seq.schedule(
        "line-controller", benchmark="line", every="deploy", max_core_hours=1e-9, seeds=SEEDS, envs=1
    )
    _deploy_v2(toy_file)
    (stopped,) = seq.run_due()
    assert stopped.status == "stopped at budget"

    (step,) = seq.trend("line-controller", "line").steps  # v2 has only the canceled eval
    assert (step.baseline_eval, step.eval_id) == (v1, stopped.eval_id)
    done = seq.eval.report(stopped.eval_id).done
    assert step.caveats == [
        f"{stopped.eval_id} (canceled, {done} episode{'' if done == 1 else 's'}) stands for v2 "
        "with the most episodes: it did not complete"
    ]
    assert "stands for v2 with the most episodes: it did not complete" in _trend_text("-b", "line").replace(
        "\n    ", " "
    )

    completed = seq.eval.run("line-controller", benchmark="line", seeds=SEEDS, envs=1).eval_id
    seq.schedule(
        "line-controller", benchmark="line", every="hourly", max_core_hours=1e-9, seeds=SEEDS, envs=1
    )
    (stopped_again,) = seq.run_due(now=time.time() + 3600)  # the newest eval of v2: canceled
    assert stopped_again.status == "stopped at budget"
    found = seq.trend("line-controller", "line")
    assert [(p.eval_id, p.status) for p in found.points] == [
        (v1, "completed"),
        (stopped.eval_id, "canceled"),
        (completed, "completed"),
        (stopped_again.eval_id, "canceled"),
    ]
    (step,) = found.steps
    assert (step.baseline_eval, step.eval_id, step.caveats) == (v1, completed, [])
    assert step.comparison is not None and step.comparison["n"] == 10
    text = _trend_text("-b", "line")
    rows = [line for line in text.splitlines() if line.split()[2:3] in ([stopped_again.eval_id], [completed])]
    assert [row.split()[7] for row in rows] == ["completed", "canceled"], text  # value: 3 words
    assert f"v1 -> v2 ({v1} vs {completed}):" in text and "10 shared episodes, B - A = " in text


def test_a_difference_without_an_interval_says_why(toy_file):
    seq.deploy(toy_file)
    one = {"tasks": ["far"], "seeds": [0], "envs": 1}
    seq.eval.run("line-controller", benchmark="line", **one)
    _deploy_v2(toy_file)
    seq.eval.run("line-controller", benchmark="line", **one)
    (step,) = seq.trend("line-controller", "line", metric="steps").steps
    assert step.comparison is not None and step.comparison["n"] == 1
    assert step.no_interval == "too few shared episodes (1; it takes 2)"
    as_json = json.loads(
        run_cli("eval", "trend", "line-controller", "-b", "line", "--metric", "steps", "--json").stdout
    )
    assert as_json["steps"][0]["no_interval"] == step.no_interval
    text = _trend_text("-b", "line", "--metric", "steps")
    assert "1 shared episode, B - A = " in text and "(no interval: too few shared episodes" in text
    assert "nan" not in text
    assert "1 shared episode," in _trend_text("-b", "line")  # the rate's interval exists at n = 1


def test_an_unknown_metric_is_refused_and_an_eval_without_values_shows_a_dash(toy_file):
    seq.deploy(toy_file)
    seq.eval.run("line-controller", benchmark="line-errors", tasks=["boom-reset"], envs=1)
    seq.eval.run("line-controller", benchmark="line-errors", tasks=["near"], envs=1)
    refused_in_one_line(
        run_cli("eval", "trend", "line-controller", "-b", "line-errors", "--metric", "nope"),
        "--metric nope",
        "distance, duration_s, return, steps, success",
    )
    text = _trend_text("-b", "line-errors")
    errored, ok = [line.split() for line in text.splitlines() if line[:4].isdigit()]  # not the times
    assert errored[3:6] == ["—", "0", "failed"] and ok[3] == "1.00" and ok[7] == "completed"


BREAKS_ON_FAR = TOY.replace(
    "        step = np.clip(",
    "        if obs[1] > 1.5:\n            raise RuntimeError('v2 breaks on far')\n        step = np.clip(",
)


def test_a_version_that_errors_on_some_episodes_is_flagged_and_never_within_threshold(toy_file):
    """The issue's case: a release raising on half of its conditions, every other episode as
    before: 80 shared conditions agree (within threshold on those alone), 80 are lost to errors."""
    many = {"seeds": list(range(80)), "envs": 1}
    seq.deploy(toy_file)
    v1 = seq.eval.run("line-controller", benchmark="line", **many).eval_id
    toy_file.write_text(BREAKS_ON_FAR)
    seq.deploy(toy_file)
    v2 = seq.eval.run("line-controller", benchmark="line", **many).eval_id

    found = seq.trend("line-controller", "line")
    assert [(p.eval_id, p.errors, p.episodes, p.n) for p in found.points] == [
        (v1, 0, 160, 160),
        (v2, 80, 160, 80),
    ]
    (step,) = found.steps
    assert step.comparison is not None and step.comparison["n"] == 80
    assert step.comparison["verdict"] == "within threshold"  # on the episodes both ran, alone
    assert step.verdict == "v2 errored on 80 episodes v1 ran"
    lost = step.left_out["newer errored"]
    assert len(lost) == 80 and all(key.startswith("far|") for key in lost)
    assert "far|seed=7|trial=0" in lost and list(step.left_out) == ["newer errored"]

    text = _trend_text("-b", "line")
    assert "within threshold" not in text
    row = text.splitlines().index(next(line for line in text.splitlines() if v2 in line))
    assert "errors 80 of 160" in text.splitlines()[row + 1]
    assert "verdict: v2 errored on 80 episodes v1 ran" in text
    assert "left out: 80 episodes v2 errored on (far 80)" in text
    as_json = json.loads(run_cli("eval", "trend", "line-controller", "-b", "line", "--json").stdout)
    assert as_json["points"][1]["errors"] == 80 and as_json["steps"][0]["verdict"] == step.verdict


def test_the_stand_in_is_the_eval_with_the_most_episodes_on_every_task_or_the_one_named(toy_file):
    seq.deploy(toy_file)
    full = seq.eval.run("line-controller", benchmark="line", seeds=SEEDS, envs=1).eval_id
    _deploy_v2(toy_file)
    v2_full = seq.eval.run("line-controller", benchmark="line", seeds=SEEDS, envs=1).eval_id
    # newer, completed, more episodes, but of one task: a grid's cell, say
    one_task = seq.eval.run("line-controller", benchmark="line", tasks=["far"], seeds=SEEDS, trials=3, envs=1)
    (step,) = seq.trend("line-controller", "line").steps
    assert (step.baseline_eval, step.eval_id, step.caveats) == (full, v2_full, [])
    assert step.comparison is not None and step.comparison["n"] == 10

    (step,) = seq.trend("line-controller", "line", evals=[one_task.eval_id[:8]]).steps
    assert step.eval_id == one_task.eval_id and step.comparison["n"] == 5  # trial 0 of far's seeds
    assert step.caveats == [
        f"{one_task.eval_id} (completed, 15 episodes) stands for v2 as named: it did not run every "
        "task of the benchmark"
    ]
    assert (
        len(step.left_out["only v1" if False else "only newer"]) == 10
        and len(step.left_out["only older"]) == 5
    )
    text = _trend_text("-b", "line", "--eval", one_task.eval_id)
    assert f"v1 -> v2 ({full} vs {one_task.eval_id}):" in text
    assert "left out: 10 episodes only v2's eval ran (far 10)" in text
    assert "left out: 5 episodes only v1's eval ran (near 5)" in text
    refused_in_one_line(
        run_cli("eval", "trend", "line-controller", "-b", "line", "--eval", "ev-nope"), "--eval ev-nope"
    )
    refused_in_one_line(
        run_cli(
            "eval", "trend", "line-controller", "-b", "line", "--eval", v2_full, "--eval", one_task.eval_id
        ),
        f"--eval {one_task.eval_id}: v2 already has {v2_full} named",
    )


def test_trial_zero_pairs_across_evals_with_and_without_trials(toy_file):
    seq.deploy(toy_file)
    one = seq.eval.run("line-controller", benchmark="line", seeds=SEEDS, envs=1).eval_id  # far|seed=0
    _deploy_v2(toy_file)
    three = seq.eval.run("line-controller", benchmark="line", seeds=SEEDS, trials=3, envs=1).eval_id
    (step,) = seq.trend("line-controller", "line").steps
    assert (step.baseline_eval, step.eval_id) == (one, three)
    assert step.comparison is not None and step.comparison["n"] == 10
    assert len(step.left_out["only newer"]) == 20
    assert all(not key.endswith("|trial=0") for key in step.left_out["only newer"])


def test_each_step_shows_the_arms_and_parameters_it_compares(toy_file):
    seq.deploy(toy_file)
    seq.eval.run("line-controller", benchmark="line", seeds=SEEDS, envs=1, params={"chunk": "2"})
    _deploy_v2(toy_file)  # its default noise is 0.3
    seq.eval.run(
        arms=[seq.Arm("line-controller", {"chunk": "2"}, "chunked"), seq.Arm("line-controller", {}, "plain")],
        benchmark="line",
        seeds=SEEDS,
        envs=1,
    )
    found = seq.trend("line-controller", "line")
    (step,) = found.steps
    assert (step.baseline_arm, step.arm) == ("", "chunked")  # of an eval's arms, the first
    assert step.given == [{"chunk": "2"}, {"chunk": "2"}]
    assert step.differing == {"policy.noise": [0.0, 0.3]}
    text = _trend_text("-b", "line").replace("\n    ", " ")
    assert "A: v1 with chunk=2; B: v2 arm chunked with chunk=2" in text
    assert "parameters that differ: policy.noise 0.0 -> 0.3" in text


def test_trials_of_one_condition_count_once_in_a_step(toy_file):
    """Both versions deterministic: their 4 trials of a condition are copies, so 40 shared
    episodes are worth the 10 conditions they ran."""
    seq.deploy(toy_file)
    four = {"seeds": SEEDS, "trials": 4, "envs": 1}
    seq.eval.run("line-controller", benchmark="line", **four)
    toy_file.write_text(
        TOY.replace(
            "step = np.clip(obs[1] - obs[0], -0.1, 0.1)", "step = np.clip(obs[1] - obs[0], -0.04, 0.04)"
        )
    )
    seq.deploy(toy_file)  # slower: it runs out of steps on some far seeds
    seq.eval.run("line-controller", benchmark="line", **four)
    found = seq.trend("line-controller", "line")
    assert [(p.n, p.conditions) for p in found.points] == [(40, 10), (40, 10)]
    (step,) = found.steps
    compared = step.comparison
    assert compared is not None and (compared["n"], compared["conditions"]) == (40, 10)
    assert compared["effective_n"] == pytest.approx(10)
    assert compared["test"].endswith("(clustered)")
    text = _trend_text("-b", "line").replace("\n    ", " ")
    assert "40 shared episodes (10 conditions, effective n 10)" in text
    assert text.count("10 conditions") == 3  # under each eval's value, and in the step
