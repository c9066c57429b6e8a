"""Scheduled evals: a schedule fires through the scheduler process (`seq scheduler run`), after a
deploy, within its budget, and once for all the fires it missed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import TOY, refused_in_one_line, run_cli

import seq
from seq.record.schedules import Schedules
from seq.record.store import Store

NEAR = ("--tasks", "near", "--seeds", "0", "--envs", "1")
HOUR = 3600.0


def _schedules() -> list[dict]:
    result = run_cli("eval", "schedules", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _scheduled_evals() -> list[dict]:
    return [row for row in seq.eval.ls() if row["policy"].startswith("line-controller")]


def _never_firing_schedule(every: str = "0 0 30 2 *") -> None:
    """A schedule as an older seq stored it: a cron expression no date matches (February 30)."""
    store = Store()
    Schedules(store).put("line-controller", "line", every, 1, None, {"envs": 1}, time.time(), None)
    store.close()


def _new_policy_version(toy_file: Path) -> None:
    """The toy with a noisier controller: `seq deploy` registers line-controller@v2."""
    toy_file.write_text(TOY.replace("noise: float = 0.0, chunk", "noise: float = 0.3, chunk"))
    result = run_cli("deploy", str(toy_file))
    assert "line-controller@v2  (policy, registered)" in result.stdout, result.stdout + result.stderr


def test_a_cron_schedule_runs_an_eval_through_the_scheduler_process(toy_file):
    seq.deploy(toy_file)
    made = run_cli(
        "eval", "schedule", "line-controller", "--benchmark", "line", "--every", "* * * * * */1", *NEAR
    )
    assert made.returncode == 0, made.stderr
    assert "schedule #1 line-controller on line, every * * * * * */1 (on)" in made.stdout
    _never_firing_schedule()  # the scheduler still wakes for the other one
    scheduler = subprocess.Popen(
        [sys.executable, "-c", "from seq.cli import main; main()", "scheduler", "run", "--poll", "0.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(
            row["status"] == "completed" for row in _scheduled_evals()
        ):
            assert scheduler.poll() is None, scheduler.communicate()
            time.sleep(0.5)
    finally:
        scheduler.send_signal(signal.SIGTERM)  # as a service manager stops it
        out, err = scheduler.communicate(timeout=60)
    assert scheduler.returncode == 0, err
    assert "#1 line-controller on line: completed, eval ev-" in out
    listed, never = _schedules()
    assert never["next_run"] == "never fires" and never["runs"] == 0
    completed = [row for row in _scheduled_evals() if row["status"] == "completed"]
    assert completed and {row["policy"] for row in completed} == {"line-controller@v1"}
    assert listed["runs"] >= 1 and listed["last_run"]["cause"] == "time"
    assert seq.eval.report(completed[0]["id"]).metric("success").value == 1.0


def test_every_deploy_runs_after_seq_deploy_of_a_new_version(toy_file):
    seq.deploy(toy_file)
    assert (
        run_cli("eval", "schedule", "line-controller", "-b", "line", "--every", "deploy", *NEAR).returncode
        == 0
    )
    nothing = run_cli("scheduler", "run", "--once")
    assert nothing.returncode == 0 and "running" not in nothing.stdout  # v1 was there before the schedule
    assert _scheduled_evals() == []
    _new_policy_version(toy_file)
    assert _schedules()[0]["due_now"]
    ran = run_cli("scheduler", "run", "--once")
    assert "#1 line-controller on line: running line-controller@v2" in ran.stdout, ran.stdout + ran.stderr
    assert re.search(r"^ev-[0-9a-f]+: (\d+)/\1 \(100%\) · success ", ran.stderr, re.M), ran.stderr  # progress
    (evaluated,) = _scheduled_evals()
    assert (evaluated["policy"], evaluated["status"]) == ("line-controller@v2", "completed")
    again = run_cli("scheduler", "run", "--once")
    assert "running" not in again.stdout and len(_scheduled_evals()) == 1  # once per new version
    last = _schedules()[0]["last_run"]
    assert (last["cause"], last["policy_version"], last["eval_id"]) == ("deploy", 2, evaluated["id"])


def test_the_budget_stops_a_run_and_then_skips_the_schedule(toy_file):
    seq.deploy(toy_file)
    (row,) = seq.schedule(
        "line-controller", benchmark="line", every="hourly", max_core_hours=1e-9, envs=1, seeds=[0, 1, 2]
    )
    (stopped,) = seq.run_due(now=time.time() + HOUR)
    assert stopped.status == "stopped at budget" and stopped.core_s > 0
    report = seq.eval.report(stopped.eval_id)
    assert report.status == "canceled" and report.partial and 1 <= report.done < report.total == 6
    assert "budget of 1e-09 core-hours was spent" in report.error
    shown = run_cli("eval", "report", stopped.eval_id).stdout
    assert "the eval is canceled: schedule #1 stopped when its budget of 1e-09" in shown.replace("\n", " ")
    (skipped,) = seq.run_due(now=time.time() + 2 * HOUR)
    assert (skipped.status, skipped.eval_id) == ("skipped", None)
    assert len(_scheduled_evals()) == 1
    (listed,) = seq.schedules()
    assert listed["budget_spent"] and listed["last_run"]["status"] == "skipped"
    text = run_cli("eval", "schedules").stdout
    assert "of 1e-09 core-hours - spent, it runs no more" in text and "budget of 1e-09" in text
    seq.schedule("line-controller", benchmark="line", every="hourly", max_core_hours=1.0, envs=1, seeds=[0])
    (again,) = seq.run_due(now=time.time() + 3 * HOUR)  # a budget raised: it runs again
    assert again.status == "completed" and again.schedule_id == row.id


def test_fires_missed_while_no_scheduler_ran_run_once(toy_file):
    seq.deploy(toy_file)
    created = time.time()
    seq.schedule("line-controller", benchmark="line", every="daily", envs=1, tasks=["near"], seeds=[0])
    (run,) = seq.run_due(now=created + 3 * 24 * HOUR)  # off for three days: three midnights
    assert (run.missed, run.status) == (3, "completed")
    success = seq.eval.report(run.eval_id).metric("success")
    shown = f"success {success.value:.2f} [{success.low:.2f}, {success.high:.2f}] n=1"
    assert shown in run_cli("eval", "schedules").stdout
    assert seq.run_due(now=created + 3 * 24 * HOUR + 1) == []
    assert len(_scheduled_evals()) == 1


def test_the_scheduler_process_runs_missed_fires_once_on_start(toy_file):
    seq.deploy(toy_file)
    run_cli("eval", "schedule", "line-controller", "-b", "line", "--every", "* * * * * */1", *NEAR)
    time.sleep(2.5)  # at least two fires pass with no scheduler running
    ran = run_cli("scheduler", "run", "--once")
    assert "fires missed, run once" in ran.stdout, ran.stdout + ran.stderr
    assert len(_scheduled_evals()) == 1


def test_a_schedule_switched_off_runs_nothing_and_is_listed_off(toy_file):
    seq.deploy(toy_file)
    seq.schedule("line-controller", benchmark="line", every="hourly", envs=1)
    seq.schedule("line-controller", benchmark="line", every="deploy", envs=1)
    off = run_cli("eval", "schedule", "line-controller", "-b", "line", "--off")
    assert off.stdout.count("(off)") == 2, off.stdout + off.stderr
    assert seq.run_due(now=time.time() + HOUR) == []
    assert [row["next_run"] for row in seq.schedules()] == [None, None]
    (back,) = seq.schedule("line-controller", benchmark="line", every="hourly", envs=1)
    assert back.enabled and seq.run_due(now=time.time() + 1) == []  # the time it was off is not owed


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (("--every", "sometimes"), ("--every 'sometimes'", "cron expression")),
        (("--every", "0 0 31 2 *"), ("--every '0 0 31 2 *'", "no date from now on matches", "never run")),
        (("--every", "0 0 1 1 * 0 2020"), ("--every '0 0 1 1 * 0 2020'", "never run")),
        (("--every", "deploy", "--max-core-hours", "0"), ("--max-core-hours 0.0", "above 0")),
        (("--every", "deploy", "--max-core-hours", "inf"), ("--max-core-hours inf", "finite")),
        (("--every", "daily", "--trials", "0"), ("--trials 0",)),
        (("--off",), ("no schedule evaluates line-controller on line",)),
        (("--every", "daily", "--tasks", "nowhere"), ("--tasks nowhere", "no such task")),
        (("--every", "daily", "--param", "nois=1"), ("--param nois", "policy.noise")),
        ((), ("needs --every",)),
    ],
)
def test_bad_schedules_are_refused_in_one_line(toy_file, args, fragments):
    seq.deploy(toy_file)
    refused_in_one_line(run_cli("eval", "schedule", "line-controller", "-b", "line", *args), *fragments)


def test_a_schedule_that_never_fires_is_listed_so_and_the_others_run(toy_file):
    seq.deploy(toy_file)
    _never_firing_schedule()
    seq.schedule("line-controller", benchmark="line", every="hourly", envs=1, tasks=["near"], seeds=[0])
    listed = run_cli("eval", "schedules")
    assert listed.returncode == 0, listed.stderr
    assert "every 0 0 30 2 *  (on)\n    next: never fires;" in listed.stdout
    assert [row["next_run"] for row in _schedules()][0] == "never fires"
    (ran,) = seq.run_due(now=time.time() + HOUR)
    assert ran.status == "completed" and ran.schedule_id == 2
    once = run_cli("scheduler", "run", "--once")
    assert once.returncode == 0, once.stderr
    off = run_cli("eval", "schedule", "line-controller", "-b", "line", "--every", "0 0 30 2 *", "--off")
    assert off.returncode == 0 and "every 0 0 30 2 * (off)" in off.stdout, off.stderr


def test_the_schedule_command_takes_the_options_of_seq_eval_run(toy_file):
    seq.deploy(toy_file)
    given = "--suite default --tasks near --seeds 0,1 --max-steps 5 --record none --envs 1".split()
    result = run_cli("eval", "schedule", "line-controller", "-b", "line", "--every", "hourly", *given)
    assert result.returncode == 0, result.stderr
    (row,) = _schedules()
    stored = {"suites": ["default"], "tasks": ["near"], "seeds": [0, 1], "max_steps": 5, "record": "none"}
    assert row["options"] == {**stored, "envs": 1}
    (ran,) = seq.run_due(now=time.time() + HOUR)
    report = seq.eval.report(ran.eval_id)
    assert ran.status == "completed" and [(e.task, e.seed) for e in report.episodes] == [
        ("near", 0),
        ("near", 1),
    ]
    assert all(e.steps == 5 for e in report.episodes)  # the toy needs more than 5 steps to reach 0.5
    refused_in_one_line(run_cli("eval", "schedule", "-b", "line", "--every", "daily"), "needs POLICY")


def test_unknown_names_and_a_pinned_deploy_schedule_are_refused(toy_file):
    seq.deploy(toy_file)
    refused_in_one_line(
        run_cli("eval", "schedule", "line-controler", "-b", "line", "--every", "daily"), "line-controller"
    )
    refused_in_one_line(
        run_cli("eval", "schedule", "line-controller@v1", "-b", "line", "--every", "deploy"),
        "without a version",
    )
    with pytest.raises(seq.SeqInputError, match="schedule option 'resume'"):
        seq.schedule("line-controller", benchmark="line", every="daily", resume="ev-1")


def test_the_flat_names_stay_the_functions_once_the_package_is_imported():
    import seq.scheduling.runner  # what the CLI and the scheduler import

    assert seq.schedule is seq.scheduling.schedule and seq.schedules is seq.scheduling.schedules
    assert seq.trend is seq.scheduling.trend and seq.run_due is seq.scheduling.run_due
    assert {"schedule", "schedules", "trend", "run_due", "run_scheduler", "install_scheduler"} <= set(
        seq.__all__
    )
