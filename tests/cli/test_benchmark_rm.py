"""`seq benchmark rm`: an eval running on the benchmark refuses the delete unless --force cancels
it; --dry-run shows what the delete would touch (versions, evals, running evals, schedules)."""

from __future__ import annotations

import subprocess
import sys
import time

from conftest import default_ctrl_c, refused_in_one_line, run_cli

import seq


def _start_slow_eval():
    """An eval of 6 episodes of about 6 s each (60 steps of 0.1 s), in a process of its own."""
    return subprocess.Popen(
        [sys.executable, "-c", "from seq.cli import main; main()", "eval", "run", "line-controller",
         "--benchmark", "line", "--envs", "1", "--param", "delay=0.1", "--max-steps", "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=default_ctrl_c,
    )  # fmt: skip


def _wait_until_running(process, limit_s: float = 120) -> str:
    deadline = time.monotonic() + limit_s
    while True:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the eval did not start in time"
        rows = seq.eval.ls()
        if rows and rows[0]["status"] == "running":
            return rows[0]["id"]
        time.sleep(0.1)


def test_a_running_eval_refuses_the_delete_unless_force_cancels_it(toy_file):
    assert run_cli("deploy", str(toy_file)).returncode == 0
    seq.schedule("line-controller", benchmark="line", every="daily")
    process = _start_slow_eval()
    try:
        eval_id = _wait_until_running(process)
        refused_in_one_line(run_cli("benchmark", "rm", "line"), "running eval(s)", eval_id, "--force")

        shown = run_cli("benchmark", "rm", "line", "--dry-run")
        assert shown.returncode == 0, shown.stderr
        assert "would remove line: version(s) v1" in shown.stdout
        assert f"running eval {eval_id} on " in shown.stdout and "unless --force cancels it" in shown.stdout
        assert "schedule #1 line-controller on line (daily) names it" in shown.stdout
        assert "nothing removed (--dry-run)" in shown.stdout
        assert [b for b in seq.benchmarks() if b["name"] == "line"]  # still there
        assert process.poll() is None  # and still running

        forced = run_cli("benchmark", "rm", "line", "--force")
        assert forced.returncode == 0, forced.stderr
        assert f"canceled running eval(s) {eval_id}" in forced.stdout
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert not [b for b in seq.benchmarks() if b["name"] == "line"]
    report = seq.eval.report(eval_id)
    assert report.status == "canceled" and report.done < report.total  # what ran is kept
