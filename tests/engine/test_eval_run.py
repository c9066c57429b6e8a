"""The local engine end to end, through `seq.eval.run`, on the pure-Python line benchmark."""

from __future__ import annotations

import pytest
from conftest import refused_in_one_line, run_cli

import seq


def _metrics_without_time(report: seq.Report) -> list[tuple]:
    return [
        (e.item_id, e.status, {k: v for k, v in e.metrics.items() if k != "duration_s"}, e.steps, e.queries)
        for e in report.episodes
    ]


def test_eval_runs_every_condition_and_reports_groups(toy_file):
    report = seq.eval.run("line-controller", benchmark=seq.deploy(toy_file)[0].version.label, envs=2)
    assert report.status == "completed" and not report.partial
    assert (report.done, report.total) == (6, 6)
    success = report.metric("success")
    assert success.value == 1.0 and success.method == "wilson" and success.n == 6
    assert 0.5 < success.low < 1.0 and success.high == 1.0
    assert success.small_n
    kinds = [(g.kind, g.name) for g in report.groups]
    assert kinds == [
        ("overall", "all"),
        ("suite", "easy"),
        ("suite", "hard"),
        ("task", "near"),
        ("task", "far"),
    ]
    assert report.metric("distance").method.startswith("bootstrap")
    for episode in report.episodes:
        assert set(episode.metrics) >= {"success", "distance", "steps", "return", "duration_s"}
        assert episode.ended_by == "check"


def test_score_hook_adds_a_key_per_group(toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", envs=1)
    fast = report.metric("fast_success", "task", "near")
    assert fast.source == "score" and fast.low is None
    near_steps = [e.steps for e in report.episodes if e.task == "near"]
    assert fast.value == sum(s <= 12 for s in near_steps) / 3
    assert report.metric("fast_success", "suite", "hard").value == 0.0  # far needs > 12 steps


def test_same_eval_twice_gives_identical_episodes(toy_file):
    seq.deploy(toy_file)
    first = seq.eval.run("line-controller", benchmark="line", envs=2, params={"noise": "0.05"})
    second = seq.eval.run("line-controller", benchmark="line", envs=1, params={"noise": "0.05"})
    assert first.eval_id != second.eval_id
    assert _metrics_without_time(first) == _metrics_without_time(second)
    assert first.manifest.parameters["policy"] == {"noise": 0.05, "chunk": 1}


def test_errors_crashes_and_timeouts_are_recorded_and_the_eval_goes_on(toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line-errors", envs=2)
    by_task = {}
    for episode in report.episodes:
        by_task.setdefault(episode.task, []).append(episode)
    # the worker that died under `crash` is the infrastructure's failure: that item has no result
    assert report.status == "incomplete" and (report.done, report.total) == (5, 6)
    (crashed,) = report.unfinished
    assert crashed.task == "crash" and "exit code 7" in crashed.reason and crashed.attempts == 1
    assert [e.status for e in by_task["boom-reset"]] == ["error", "error"]
    assert {e.failure for e in by_task["boom-reset"]} == {"benchmark"}
    assert "RuntimeError: this task cannot be built" in by_task["boom-reset"][0].error
    assert "Traceback" in by_task["boom-reset"][0].error
    assert by_task["hang"][0].status == "timed_out" and by_task["hang"][0].ended_by == "timeout"
    assert by_task["near"][0].status == "ok" and by_task["far"][0].status == "ok"
    statuses = sorted(p.status for p in report.problems)
    assert statuses == ["error", "error", "timed_out"]
    # errors are left out of the metrics, a timeout counts as an episode that did not succeed
    assert report.metric("success").n == 3


def test_action_chunks_run_steps_per_query_actions_per_query(toy_file):
    seq.deploy(toy_file)
    whole = seq.eval.run(
        "line-controller", benchmark="line", tasks=["far"], seeds=[0], envs=1, params={"chunk": "4"}
    )
    (episode,) = whole.episodes
    assert episode.queries == -(-episode.steps // 4)
    partial = seq.eval.run(
        "line-controller",
        benchmark="line",
        tasks=["far"],
        seeds=[0],
        envs=1,
        params={"chunk": "4", "eval.steps_per_query": "2"},
    )
    (episode,) = partial.episodes
    assert episode.queries == -(-episode.steps // 2)


def test_old_gym_api_and_max_steps_override(toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run(
        "line-controller",
        benchmark="line",
        tasks=["far"],
        seeds=[1],
        envs=1,
        max_steps=5,
        params={"old_api": "true"},
    )
    (episode,) = report.episodes
    assert episode.status == "ok" and episode.steps == 5 and episode.ended_by == "max_steps"
    assert episode.metrics["success"] == 0.0


def test_python_classes_run_without_deploy(toy_file):
    from seq.registry.loader import import_file

    module = import_file(toy_file, "line_bench_direct")
    report = seq.eval.run(module.LineController, benchmark=module.Line, tasks=["near"], seeds=[0], envs=1)
    assert report.done == 1 and report.benchmark == "line@v1"


def test_a_script_that_runs_an_eval_at_import_is_told_to_use_a_main_guard(toy_file, tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(
        toy_file.read_text()
        + "\nreport = seq.eval.run(LineController, benchmark=Line, tasks=['near'], envs=1)\n"
    )
    result = run_cli_script(script)
    assert result.returncode == 1
    assert "put the seq.eval.run call under" in result.stderr and "__main__" in result.stderr

    guarded = tmp_path / "guarded.py"
    guarded.write_text(
        toy_file.read_text()
        + "\nif __name__ == '__main__':\n"
        + "    report = seq.eval.run(LineController, benchmark=Line, tasks=['near'], seeds=[0], envs=1)\n"
        + "    print('done', report.done)\n"
    )
    result = run_cli_script(guarded)
    assert result.returncode == 0, result.stderr
    assert "done 1" in result.stdout


def run_cli_script(path):
    import subprocess
    import sys

    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)


def test_importing_seq_imports_no_simulator():
    import subprocess
    import sys

    heavy = "{'mujoco', 'metaworld', 'gymnasium', 'scipy'}"
    code = f"import sys, seq; print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_watchdog_kills_a_step_blocked_past_timeout_and_the_eval_goes_on(toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line-wedge", envs=1)
    by_task = {e.task: e for e in report.episodes}
    assert report.status == "completed" and report.done == 3
    assert by_task["wedge"].status == "timed_out" and by_task["wedge"].ended_by == "watchdog"
    assert "watchdog" in by_task["wedge"].error
    assert by_task["near"].status == by_task["far"].status == "ok"


def test_seq_devices_spreads_workers_over_gpus_round_robin(monkeypatch):
    from seq.engine.local import device_environment

    monkeypatch.delenv("SEQ_DEVICES", raising=False)
    assert device_environment(0) == {}
    monkeypatch.setenv("SEQ_DEVICES", "0, 2")
    assert [device_environment(i)["CUDA_VISIBLE_DEVICES"] for i in range(4)] == ["0", "2", "0", "2"]
    assert device_environment(1)["MUJOCO_EGL_DEVICE_ID"] == "2"


@pytest.mark.parametrize(
    "option, said",
    [
        (("--max-steps", "100000000000000000000"), "max_steps must be a positive integer below 2**31"),
        (("--timeout-s", "nan"), "timeout_s must be a positive number of seconds, got nan"),
        (("--trials", "100000000000000000000"), "--trials must be a positive integer up to 10,000,000"),
        (("--seeds", "0-99999999999"), "100,000,000,000 seeds; at most 10,000,000"),
        (("--seeds", "5000000000"), "a seed is an integer from 0 to 2**32 - 1"),
        (("--seeds", "0-4999999", "--trials", "3"), "the eval would hold 30,000,000 episodes"),
    ],
)
def test_limits_no_record_or_simulator_could_hold_are_refused_in_one_line(toy_file, option, said):
    """Seen: a huge --max-steps ended in a codec traceback, huge --trials hung planning, and
    --timeout-s nan turned the watchdog off."""
    seq.deploy(toy_file)
    refused_in_one_line(run_cli("eval", "run", "line-controller", "-b", "line", *option), said)
    assert seq.eval.ls() == []


def test_one_task_or_seed_given_alone_in_python_is_that_one_not_its_letters(toy_file):
    seq.deploy(toy_file)
    planned = seq.eval.dry_run("line-controller", benchmark="line", tasks="far", seeds=2)
    assert planned["episodes"] == 1
    for seeds in ("5-2", [0, "1"], 2.5):
        with pytest.raises(seq.SeqInputError, match="expected seeds as integers"):
            seq.eval.dry_run("line-controller", benchmark="line", seeds=seeds)
