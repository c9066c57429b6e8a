"""`seq scheduler install`: the systemd user timer and the crontab line it writes run the
scheduler, as written, for this SEQ_HOME."""

from __future__ import annotations

import configparser
import os
import shlex
import subprocess
import time

from conftest import run_cli

import seq


def _due_schedule(toy_file) -> None:
    """A schedule that fires every second, waited for until its first fire is due (a scheduler
    that looked within the second it was made would rightly find nothing to run)."""
    seq.deploy(toy_file)
    seq.schedule(
        "line-controller", benchmark="line", every="* * * * * */1", envs=1, tasks=["near"], seeds=[0]
    )
    (listed,) = seq.schedules()
    time.sleep(max(0.0, listed["next_run"] - time.time()) + 0.2)


def _evals() -> list[dict]:
    return seq.eval.ls()


def test_the_systemd_timer_runs_the_scheduler_as_written(toy_file, tmp_path, seq_home):
    _due_schedule(toy_file)
    config = tmp_path / "config"
    result = run_cli("scheduler", "install", "--no-enable", env={"XDG_CONFIG_HOME": str(config)})
    assert result.returncode == 0, result.stderr
    units = config / "systemd" / "user"
    assert f"wrote {units / 'seq-scheduler.timer'}" in result.stdout
    assert "systemctl --user enable --now seq-scheduler.timer" in result.stdout
    timer = configparser.ConfigParser(interpolation=None)
    timer.read(units / "seq-scheduler.timer")
    assert timer["Timer"]["OnCalendar"] == "*-*-* *:*:00" and timer["Timer"]["Persistent"] == "true"
    assert timer["Install"]["WantedBy"] == "timers.target"
    service = configparser.ConfigParser(interpolation=None, strict=False)
    service.optionxform = str  # type: ignore[assignment,method-assign]
    text = (units / "seq-scheduler.service").read_text()
    service.read_string(text)
    assert service["Service"]["Type"] == "oneshot"
    environment = dict(
        line.removeprefix('Environment="').removesuffix('"').split("=", 1)
        for line in text.splitlines()
        if line.startswith("Environment=")
    )
    assert environment["SEQ_HOME"] == str(seq_home.resolve())
    command = shlex.split(service["Service"]["ExecStart"])
    assert command[-3:] == ["scheduler", "run", "--once"]
    ran = subprocess.run(
        command, env={"PATH": os.environ["PATH"], **environment}, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr
    assert "#1 line-controller on line: completed" in ran.stdout
    assert [row["status"] for row in _evals()] == ["completed"]


def test_the_crontab_line_runs_the_scheduler_as_written(toy_file, seq_home):
    _due_schedule(toy_file)
    result = run_cli("scheduler", "install", "--cron", "--print")
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    fields = line.split(" ", 5)
    assert fields[:5] == ["*"] * 5 and line.endswith(f"# seq-scheduler {seq_home.resolve()}")
    command = fields[5].rsplit(" # seq-scheduler", 1)[0]  # what cron hands to sh
    ran = subprocess.run(
        ["sh", "-c", command], env={"PATH": os.environ["PATH"]}, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr
    log = (seq_home / "scheduler.log").read_text()
    assert "#1 line-controller on line: completed" in log
    assert [row["status"] for row in _evals()] == ["completed"]


def test_print_writes_nothing(tmp_path):
    config = tmp_path / "config"
    result = run_cli("scheduler", "install", "--print", env={"XDG_CONFIG_HOME": str(config)})
    assert result.returncode == 0 and "ExecStart=" in result.stdout and "OnCalendar=" in result.stdout
    assert not config.exists()
