"""A runner killed with SIGKILL or stopped with Ctrl-C keeps what ran; a resume finishes the rest."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

from conftest import default_ctrl_c, refused_in_one_line, run_cli

import seq


def _episode_count(home) -> int:
    db = home / "seq.db"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as connection:
            return connection.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _start_slow_eval(toy_file):
    """An eval of 6 episodes that each take about a second, in a subprocess of its own group."""
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from seq.cli import main; main()",
            "eval",
            "run",
            "line-controller",
            "--benchmark",
            "line",
            "--envs",
            "1",
            "--param",
            "delay=0.05",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=default_ctrl_c,
    )


def _wait_for_episodes(home, count: int, process, limit_s: float = 120) -> None:
    deadline = time.monotonic() + limit_s
    while _episode_count(home) < count:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the eval recorded no episode in time"
        time.sleep(0.05)


def _rows(report):
    return [
        (e.item_id, e.status, e.steps, {k: v for k, v in e.metrics.items() if k != "duration_s"})
        for e in report.episodes
    ]


def test_sigkill_then_resume_gives_the_uninterrupted_rows(toy_file, seq_home):
    assert run_cli("deploy", str(toy_file)).returncode == 0
    process = _start_slow_eval(toy_file)
    _wait_for_episodes(seq_home, 2, process)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    (row,) = seq.eval.ls()
    assert row["status"] == "interrupted" and 2 <= row["done"] < 6

    resumed = run_cli("eval", "run", "--resume", row["id"], "--envs", "2")
    assert resumed.returncode == 0, resumed.stderr
    report = seq.eval.report(row["id"])
    assert (report.done, report.total, report.status) == (6, 6, "completed")
    assert len({e.item_id for e in report.episodes}) == 6

    fresh = seq.eval.run("line-controller", benchmark="line", envs=2, params={"delay": "0.05"})
    assert _rows(report) == _rows(fresh)


def test_ctrl_c_cancels_and_reports_partial_results(toy_file, seq_home):
    assert run_cli("deploy", str(toy_file)).returncode == 0
    process = _start_slow_eval(toy_file)
    _wait_for_episodes(seq_home, 1, process)
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr  # as every command stopped by Ctrl-C
    assert "PARTIAL" in stdout and "of 6 episodes" in stdout
    (row,) = seq.eval.ls()
    assert row["status"] == "canceled" and 1 <= row["done"] < 6
    report = seq.eval.report(row["id"])
    assert report.partial


def test_sigterm_to_the_command_cancels_as_ctrl_c_does(toy_file, seq_home):
    """`timeout 60 seq eval run ...` or a job scheduler's stop: SIGTERM to seq's process alone."""
    assert run_cli("deploy", str(toy_file)).returncode == 0
    process = _start_slow_eval(toy_file)
    _wait_for_episodes(seq_home, 1, process)
    os.kill(process.pid, signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr
    (row,) = seq.eval.ls()
    assert row["status"] == "canceled" and 1 <= row["done"] < 6
    assert seq.eval.report(row["id"]).partial


def test_a_resume_refuses_the_options_it_would_not_take(toy_file, seq_home):
    seq.deploy(toy_file)
    eval_id = seq.eval.run("line-controller", benchmark="line", seeds=[0], envs=1).eval_id
    for flag in ("--resume", "--rerun-failed"):
        for option in (("--envs-per-worker", "1"), ("--tasks", "near"), ("--max-steps", "3")):
            refused_in_one_line(
                run_cli("eval", "run", flag, eval_id, *option),
                f"{flag} EVAL_ID runs the eval with the arguments it was stored with",
                f"so {option[0]} is not taken",
            )
    assert run_cli("eval", "run", "--resume", eval_id, "--envs", "1").returncode == 0


def test_ctrl_c_with_the_reader_of_stdout_gone_still_exits_130_and_says_how_to_resume(toy_file, seq_home):
    """`seq eval run … | cat`: Ctrl-C stops `cat` too, so the report cannot be written."""
    assert run_cli("deploy", str(toy_file)).returncode == 0
    process = _start_slow_eval(toy_file)
    _wait_for_episodes(seq_home, 1, process)
    process.stdout.close()  # the reader is gone: writing the report breaks the pipe
    os.killpg(process.pid, signal.SIGINT)
    stderr = process.stderr.read()
    process.wait(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    (row,) = seq.eval.ls()
    said = stderr[stderr.index("seq: canceled") :]  # the last thing said, within 80 columns
    assert all(len(line) <= 80 for line in said.splitlines()), stderr
    assert f"seq eval run --resume {row['id']} runs the rest." in " ".join(said.split()), stderr
