"""`seq eval export --format vla-eval`: vla-eval's own result tools read what seq writes."""

from __future__ import annotations

import json

import pytest
from conftest import refused_in_one_line, run_cli

import seq

collector = pytest.importorskip("vla_eval.results.collector")


def test_vla_eval_s_own_aggregation_agrees_with_the_exported_file(tmp_path, toy_file, capsys):
    from vla_eval.cli.smoke import _errored_episodes
    from vla_eval.results.export import print_export_summary

    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", trajectories=True, envs=2)
    files = seq.eval.export(report.eval_id, tmp_path / "out", format="vla-eval")
    assert list(files.values()) == [tmp_path / "out" / "line_aggregate.json"]
    aggregate = json.loads(files["line"].read_text())

    assert aggregate["benchmark"] == "line" and aggregate["eval_id"] == report.eval_id
    assert aggregate["num_episodes_total"] == 6 and aggregate["num_errors"] == 0
    assert aggregate["mean_success"] == round(report.metric("success").value, 4)
    for task in aggregate["tasks"]:  # vla-eval's collector computes the same task entries
        assert collector._build_task_result(task["task"], task["episodes"], aggregate["metric_keys"]) == task
    assert [t["task"] for t in aggregate["tasks"]] == ["far", "near"]  # by name, as vla-eval lists them
    first = aggregate["tasks"][1]["episodes"][0]
    assert first["episode_id"] == 0 and first["seq"]["seed"] == 0 and first["suite"] == "easy"
    assert first["task_idx"] == 0 and first["metrics"]["success"] is True

    steps = (
        (tmp_path / "out" / "episodes" / "line" / "task0000_ep0000_success.jsonl").read_text().splitlines()
    )
    rows = [json.loads(line) for line in steps]
    assert len(rows) == first["steps"] and rows[0]["step"] == 0 and rows[-1]["done"] is True
    assert {"reward", "action", "act_seed"} <= rows[0].keys()

    assert _errored_episodes(aggregate) == []
    print_export_summary([aggregate])
    printed = capsys.readouterr().out
    assert "Benchmark: line" in printed and "near" in printed


def test_errored_episodes_count_as_vla_eval_counts_them(tmp_path, toy_file):
    from vla_eval.cli.smoke import _errored_episodes

    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line-errors", envs=2)
    (path,) = seq.eval.export(report.eval_id, tmp_path, format="vla-eval").values()
    aggregate = json.loads(path.read_text())
    errored = [e for e in report.episodes if e.status == "error"]
    assert aggregate["num_errors"] == len(errored) > 0
    lines = _errored_episodes(aggregate)
    assert len(lines) == len(errored) and any("this task cannot be built" in line for line in lines)
    boom = next(t for t in aggregate["tasks"] if t["task"] == "boom-reset")
    assert boom["mean_success"] == 0.0 and all(e["metrics"]["success"] is False for e in boom["episodes"])


def test_the_cli_exports_either_format_and_refuses_another(tmp_path, toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", envs=2)
    done = run_cli("eval", "export", report.eval_id, "-o", str(tmp_path / "vla"), "--format", "vla-eval")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "vla" / "line_aggregate.json").is_file()
    assert not (tmp_path / "vla" / "episodes").exists()  # no trajectories were recorded
    refused_in_one_line(run_cli("eval", "export", report.eval_id, "--format", "csv"), "--format", "vla-eval")


TWIN = '''
"""seq's toy `line` benchmark as a vla-eval StepBenchmark: tasks near (easy) and far (hard), the
episode's number its seed, success within 0.05 of the goal, 60 steps at most."""
import numpy as np
from vla_eval.benchmarks.base import StepBenchmark, StepResult

GOALS = {"near": 0.5, "far": 2.0}


class LineTwin(StepBenchmark):
    def get_tasks(self):
        return [{"name": "near", "suite": "easy"}, {"name": "far", "suite": "hard"}]

    def reset(self, task):
        self.goal = GOALS[task["name"]]
        self.x = float(np.random.default_rng(task["episode_idx"]).uniform(-1.0, 0.0))
        return np.array([self.x, self.goal])

    def step(self, action):
        self.x += float(np.clip(np.asarray(action["actions"]).reshape(-1)[0], -0.1, 0.1))
        distance = abs(self.x - self.goal)
        obs = np.array([self.x, self.goal])
        return StepResult(obs=obs, reward=-distance, done=distance < 0.05, info={"distance": distance})

    def make_obs(self, raw_obs, task):
        return {"state": raw_obs}

    def get_step_result(self, step_result):
        return {"success": bool(step_result.done), "distance": step_result.info["distance"]}

    def get_metric_keys(self):
        return {"success": "mean", "distance": "mean"}

    def get_metadata(self):
        return {"max_steps": 60}
'''

STATE_LINE = '''
import numpy as np
import seq


@seq.policy(name="state-line")
class StateLine(seq.Policy):
    """The line controller for an array, or vla-eval's {"state": array}."""

    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None):
        state = obs["state"] if isinstance(obs, dict) else obs
        return np.array([np.clip(state[1] - state[0], -0.1, 0.1)])
'''

# what differs between two runs by nature: clocks, ids, the server's hello, the benchmark's path
VARYING = {"created_at", "eval_id", "server_info", "sid", "eid", "elapsed_sec"}


def _same(ours, theirs, where: str) -> None:
    """`ours` has every field `theirs` has, with the same value (floats to float32's precision:
    vla-eval sends actions as float32), and at most a `seq` key more."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict), where
        assert set(ours) - {"seq"} == set(theirs), (where, sorted(ours), sorted(theirs))
        for key, value in theirs.items():
            if key not in VARYING:
                _same(ours[key], value, f"{where}.{key}")
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), where
        for index, (mine, value) in enumerate(zip(ours, theirs, strict=True)):
            _same(mine, value, f"{where}[{index}]")
    elif isinstance(theirs, float):
        assert type(ours) is float and ours == pytest.approx(theirs, rel=1e-5, abs=1e-6), (
            where,
            ours,
            theirs,
        )
    else:
        assert type(ours) is type(theirs) and ours == theirs, (where, ours, theirs)


def test_the_export_equals_a_real_vla_eval_run_field_by_field(tmp_path, toy_file, monkeypatch):
    """The same benchmark (seq's `line`, and its twin in vla-eval) and the same policy: `seq eval
    run` then `seq eval export --format vla-eval`, against `vla-eval run` with the policy served
    by seq. Every field vla-eval writes is there with vla-eval's value; seq's extras sit under
    `seq`."""
    from vla_eval import api

    from seq.serving import serve

    (tmp_path / "line_twin.py").write_text(TWIN)
    (tmp_path / "state_line.py").write_text(STATE_LINE)
    monkeypatch.syspath_prepend(str(tmp_path))
    seq.deploy(toy_file)
    seq.deploy(tmp_path / "state_line.py")

    report = seq.eval.run("state-line", benchmark="line", envs=1)
    (path,) = seq.eval.export(report.eval_id, tmp_path / "seq", format="vla-eval").values()
    ours = json.loads(path.read_text())

    config = {
        "benchmarks": [{"benchmark": "line_twin:LineTwin", "name": "line", "episodes_per_task": 3}],
        "output_dir": str(tmp_path / "vla-eval"),
    }
    with serve("state-line", port=0) as server:
        api.run(config, server_url=server.url, docker=False)
    theirs = json.loads((tmp_path / "vla-eval" / "line_aggregate.json").read_text())

    assert theirs["num_episodes_total"] == 6 and theirs["num_errors"] == 0  # the run itself went well
    config_theirs, config_ours = theirs.pop("config"), ours.pop("config")
    assert (
        config_theirs.pop("benchmark") == "line_twin:LineTwin" and config_ours.pop("benchmark") == "line@v1"
    )
    assert config_ours == config_theirs
    _same(ours, theirs, "aggregate")
    assert ours["seq"]["harness_version"].startswith("seq-") and ours["harness_version"] == "0.8.0"
    episode = ours["tasks"][1]["episodes"][2]
    assert (
        episode["seq"]["seed"] == 2 and episode["seq"]["status"] == "success" and "return" in episode["seq"]
    )


def test_an_id_prefix_names_the_eval_as_plain_export_takes_it(tmp_path, toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", envs=1, seeds=[0])
    prefix = report.eval_id[: len("ev-") + 4]
    done = run_cli("eval", "export", prefix, "--format", "vla-eval", "-o", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "line_aggregate.json").read_text())["eval_id"] == report.eval_id
