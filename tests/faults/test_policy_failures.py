"""A policy's or a benchmark's own failure is data (an `error` episode, counted); an infrastructure
failure (a worker dead, an import failing) is not: its item stays unfinished and `--resume` runs
it. An eval whose every episode errors is `failed`, exit code 1; `--rerun-failed` runs the errored
episodes again as new attempts."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import refused_in_one_line, run_cli
from fault_helpers import FAULTS, only_eval, rows, run_without

import seq


@pytest.fixture
def faults(tmp_path: Path, toy_file: Path) -> Path:
    path = tmp_path / "faults.py"
    path.write_text(FAULTS)
    for file in (toy_file, path):
        assert run_cli("deploy", str(file)).returncode == 0
    return path


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_a_policy_that_raises_at_every_act_fails_the_eval_with_one_traceback_in_the_user_s_file(faults):
    failed = run_cli("eval", "run", "flaky", "-b", "line", "--envs", "2", env={"SEQ_FAULT": "raise"})
    assert failed.returncode == 1, failed.stderr
    eval_id = only_eval()
    report = seq.eval.report(eval_id)
    assert (report.status, report.done, report.total) == ("failed", 6, 6)
    assert {(e.status, e.failure) for e in report.episodes} == {("error", "policy")}
    words = " ".join(failed.stdout.split())
    assert "failed, 6/6 episodes" in words and "FAILED: all 6 episodes errored" in words
    assert "6 episodes: RuntimeError: the model is not loaded (first at task near seed 0)" in words
    assert failed.stdout.count("Traceback") == 1  # the same error told once
    raised_at = _line_of(faults, 'raise RuntimeError("the model is not loaded")')
    assert f'File "{faults}", line {raised_at}, in infer' in failed.stdout
    assert "/code/" not in failed.stdout and "seq/engine" not in failed.stdout

    # the model loads now: --rerun-failed runs every errored episode again, as its second attempt
    rerun = run_cli("eval", "run", "--rerun-failed", eval_id[:6])
    assert rerun.returncode == 0, rerun.stderr
    report = seq.eval.report(eval_id)
    assert (report.status, report.done, report.reruns) == ("completed", 6, 6)
    assert {(e.status, e.attempt) for e in report.episodes} == {("ok", 2)}
    assert report.metric("success").n == 6
    assert "6 episodes were run again (--rerun-failed): each counts by its last attempt" in " ".join(
        rerun.stdout.split()
    )
    assert len(rows(eval_id)) == 12  # the first attempts are kept


def test_some_errored_episodes_are_data_and_rerun_failed_runs_only_those(faults):
    first = run_cli("eval", "run", "flaky", "-b", "line", "--envs", "2", env={"SEQ_FAULT": "raise-far"})
    assert first.returncode == 0, first.stderr  # the policy's own errors: counted, not a failed run
    eval_id = only_eval()
    report = seq.eval.report(eval_id)
    assert report.status == "completed" and report.group("overall", "all").errors == 3
    assert seq.eval.run(rerun_failed=eval_id, envs=2).status == "completed"
    by_task: dict[str, set] = {}
    for episode in seq.eval.report(eval_id).episodes:
        by_task.setdefault(episode.task, set()).add((episode.status, episode.attempt))
    assert by_task == {"near": {("ok", 1)}, "far": {("ok", 2)}}
    assert seq.eval.report(eval_id).reruns == 3
    refused_in_one_line(
        run_cli("eval", "run", "--rerun-failed", eval_id, "--resume", eval_id), "--rerun-failed", "--resume"
    )


def test_a_worker_that_dies_leaves_its_items_unfinished_and_resume_runs_them(faults):
    died = run_cli("eval", "run", "flaky", "-b", "line", "--envs", "1", env={"SEQ_FAULT": "die"})
    assert died.returncode == 1, died.stderr
    eval_id = only_eval()
    report = seq.eval.report(eval_id)
    assert (report.status, report.done) == ("incomplete", 3)
    assert all(e.task == "near" and e.status == "ok" for e in report.episodes)
    assert sorted(u.item_id for u in report.unfinished) == ["far|seed=0", "far|seed=1", "far|seed=2"]
    lines = died.stdout.splitlines()
    (line,) = [line for line in lines if "work items (first far|seed=0)" in line]  # one reason, one line
    assert line.strip().startswith("3 work items")
    assert "the worker process died (exit code 9) while running this episode" in line
    resumed = run_cli("eval", "run", "--resume", eval_id)
    assert resumed.returncode == 0, resumed.stderr
    report = seq.eval.report(eval_id)
    assert (report.status, report.done) == ("completed", 6) and report.reruns == 0
    assert {e.attempt for e in report.episodes if e.task == "far"} == {2}


def test_an_import_failing_in_the_benchmark_s_environment_is_not_the_benchmark_s_failure(faults):
    simulator = "seq_fault_simulator"
    run = run_cli("eval", "run", "flaky", "-b", "box-line", "--param", f"benchmark.simulator={simulator}")
    assert run.returncode == 1, run.stderr
    eval_id = only_eval()
    report = seq.eval.report(eval_id)
    assert (report.status, report.done, len(report.unfinished)) == ("incomplete", 0, 8)
    reason = f"ModuleNotFoundError: No module named '{simulator}' (in the benchmark's environment)"
    assert {u.reason for u in report.unfinished} == {reason}
    assert {r.ended_by for r in rows(eval_id)} == {"import_failed"}
    (faults.parent / f"{simulator}.py").write_text("")  # installed now, beside the benchmark's file
    assert run_cli("eval", "run", "--resume", eval_id).returncode == 0
    assert seq.eval.report(eval_id).status == "completed"


@pytest.mark.parametrize(
    ("what", "said"),
    [
        ("none", "the policy returns returned None, not an action."),
        ("text", "the policy returns returned a string ('move left'), not an action."),
        ("wide", "the policy returns returned actions of shape (3,) (3 numbers each) for an action space "
         "of shape (1,) (1 number)."),
    ],
)  # fmt: skip
def test_an_output_that_is_not_an_action_is_the_policy_s_error_naming_it(faults, what, said):
    report = seq.eval.run("returns", benchmark="box-line", envs=1, params={"what": what})
    far = [e for e in report.episodes if e.task == "far"]
    assert report.status == "completed" and len(far) == 4
    assert all(e.status == "error" and e.failure == "policy" for e in far)
    assert all(e.error == said for e in far), far[0].error
    assert all(e.status == "ok" for e in report.episodes if e.task == "near")


def test_nan_actions_are_counted_and_flagged(faults):
    report = seq.eval.run("returns", benchmark="box-line", envs=1, params={"what": "nan"})
    flagged = {e.item_id for e in report.episodes if e.metrics.get("nan_actions")}
    assert flagged and all(e.status == "ok" for e in report.episodes)
    assert report.metric("nan_actions").n == 8  # 0 where an episode sent none
    (group,) = [g for g in report.problem_groups if g.status == "nan_actions"]
    assert group.count == len(flagged) and "actions holding NaN" in group.headline
    text = run_cli("eval", "report", report.eval_id).stdout
    assert f"{len(flagged)} with NaN actions" in text


def test_a_step_that_returns_the_wrong_number_of_values_is_the_env_s_error(faults):
    run = run_cli("eval", "run", "flaky", "-b", "box-line", "--param", "benchmark.steps_wrong=true")
    assert run.returncode == 1  # every episode errored
    report = seq.eval.report(only_eval())
    assert report.status == "failed" and {e.failure for e in report.episodes} == {"benchmark"}
    said = "the env BoxLine of benchmark box-line: step returned 3 values; expected gymnasium's 5"
    assert all(said in e.error for e in report.episodes)


def test_a_built_in_whose_simulator_is_not_installed_is_refused_before_the_eval_is_stored():
    """`pusht` without its extra: before, --dry-run passed and every episode failed on the import."""
    for dry_run in ([], ["--dry-run"]):
        result = run_without("gym_pusht", "eval", "run", "random", "-b", "pusht", *dry_run)
        refused_in_one_line(result, "pusht needs gym_pusht", "pip install 'seq[pusht]'")
    assert seq.eval.ls() == []
