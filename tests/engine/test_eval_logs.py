"""`seq eval logs`: what an eval's workers and policy servers print is kept per eval, tagged with
the worker and the arm, masked, streamed with --follow while the eval runs, kept for a while;
the terminal shows it only with -v."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import refused_in_one_line, run_cli

import seq
from seq.isolation.secrets import set_secret

CHATTY = textwrap.dedent("""
    import os
    import sys
    import time

    import numpy as np

    import seq

    GATE = os.environ.get("SEQ_TEST_GATE", "")


    class Env:
        action_space = None

        def __init__(self, task):
            self.task, self.x = task, 0.0

        def reset(self, seed=None):
            return np.array([self.x]), {}

        def step(self, action):
            self.x += float(np.asarray(action).reshape(-1)[0])
            if self.task == "gated":
                while GATE and not os.path.exists(GATE):
                    time.sleep(0.02)
                print("past the gate", flush=True)
            return np.array([self.x]), 0.0, False, False, {}


    @seq.benchmark(name="chatty", conditions=seq.conditions(tasks=["a"], seeds=range(2)), max_steps=2)
    class Chatty(seq.Benchmark):
        @seq.setup
        def setup(self):
            print("setup: renderer test-gl", file=sys.stderr)

        @seq.reset
        def reset(self, seed, variant):
            print(f"reset {variant.task} seed={seed}")
            return Env(variant.task)

        @seq.check
        def check(self, env):
            return seq.Step(done=False, metrics={"success": 0.0})


    @seq.benchmark(name="chatty-secret", conditions=seq.conditions(tasks=["a"], seeds=range(1)),
                   max_steps=2, secrets=[seq.Secret.from_name("chatty-token")])
    class ChattySecret(Chatty):
        @seq.reset
        def reset(self, seed, variant):
            print(f"connecting with {os.environ['CHATTY_TOKEN']}")
            return Env(variant.task)


    @seq.benchmark(name="chatty-gated", conditions=[seq.Condition(task="a", seed=0),
                   seq.Condition(task="gated", seed=0)], max_steps=2)
    class ChattyGated(Chatty):
        pass


    @seq.policy(name="talker")
    class Talker(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None, gain: float = 1.0):
            print(f"talker gain={gain}")
            return np.array([0.1 * gain])
""")


@pytest.fixture
def chatty(tmp_path: Path) -> Path:
    path = tmp_path / "chatty.py"
    path.write_text(CHATTY)
    seq.deploy(path)
    return path


def _texts(eval_id: str, **narrow) -> list[str]:
    return [line.text for line in seq.eval.logs(eval_id, **narrow)]


def test_each_workers_lines_are_kept_with_their_arm_and_the_terminal_stays_quiet(chatty):
    result = run_cli(
        "eval", "run", "talker", "-b", "chatty", "--vs", "talker", "--vs-param", "gain=2", "--envs", "1",
        "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "reset a" not in result.stderr and "talker gain" not in result.stderr
    eval_id = json.loads(result.stdout)["eval_id"]
    lines = list(seq.eval.logs(eval_id))
    assert {(line.side, line.instance) for line in lines} == {("benchmark", 0)}
    assert lines[0].text == "setup: renderer test-gl" and lines[0].arm == ""
    arms = {arm.name for arm in seq.Store().get_eval(eval_id).manifest.arms}
    assert arms == {"gain=default", "gain=2"}
    second = _texts(eval_id, arm="gain=2")
    assert second.count("talker gain=2.0") == 4 and "talker gain=1.0" not in second  # 2 seeds × 2 steps
    assert second.count("reset a seed=0") == 1 and second.count("reset a seed=1") == 1
    assert "talker gain=1.0" in _texts(eval_id, arm="gain=default")
    assert _texts(eval_id, side="policy") == [] and _texts(eval_id, instance=1) == []
    shown = run_cli("eval", "logs", eval_id, "--arm", "gain=2")
    assert shown.returncode == 0 and "[benchmark 0 (gain=2)] talker gain=2.0" in shown.stdout
    as_json = [json.loads(row) for row in run_cli("eval", "logs", eval_id, "--json").stdout.splitlines()]
    assert len(as_json) == len(lines) and as_json[0]["side"] == "benchmark"


def test_the_terminal_shows_the_lines_with_verbose(chatty):
    result = run_cli("eval", "run", "talker", "-b", "chatty", "--envs", "1", "-v")
    assert result.returncode == 0, result.stderr
    assert "reset a seed=1" in result.stderr and "setup: renderer test-gl" in result.stderr


def test_a_served_policys_lines_are_its_arms_and_a_secret_shows_as_stars(chatty):
    set_secret("chatty-token", "CHATTY_TOKEN", "hunter2-log-secret")
    report = seq.eval.run("talker", benchmark="chatty-secret", envs=1)  # secrets: the policy is served
    benchmark = _texts(report.eval_id, side="benchmark")
    assert "connecting with ***" in benchmark
    assert "talker gain=1.0" in _texts(report.eval_id, side="policy", instance=0)
    assert "talker gain=1.0" not in benchmark
    shown = run_cli("eval", "logs", report.eval_id)
    assert "connecting with ***" in shown.stdout and "hunter2" not in shown.stdout
    for path in (seq.Store().path.parent / "logs").rglob("*"):
        assert path.is_dir() or b"hunter2" not in path.read_bytes()


def test_follow_streams_a_running_eval_and_stops_when_it_ends(chatty, tmp_path):
    gate = tmp_path / "gate"
    environment = {**os.environ, "SEQ_TEST_GATE": str(gate)}
    command = [sys.executable, "-c", "from seq.cli import main; main()"]
    run = subprocess.Popen(
        [*command, "eval", "run", "talker", "-b", "chatty-gated", "--envs", "1", "--json"],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not seq.eval.ls() and time.monotonic() < deadline:
            time.sleep(0.1)
        (row,) = seq.eval.ls()
        follow = subprocess.Popen(
            [*command, "eval", "logs", row["id"], "--follow"], stdout=subprocess.PIPE, text=True
        )
        first = follow.stdout.readline()  # printed while the gated episode holds the eval open
        assert first.startswith("[benchmark 0] ") and seq.eval.status(row["id"]).status == "running"
        gate.touch()
        rest, _ = follow.communicate(timeout=120)  # ends by itself once the eval has ended
        assert follow.returncode == 0
        assert run.wait(timeout=120) == 0
        assert "past the gate" in rest and rest.rstrip().endswith("past the gate")
    finally:
        gate.touch()
        run.kill()


def test_logs_past_their_retention_are_pruned(chatty, monkeypatch):
    report = seq.eval.run("talker", benchmark="chatty", envs=1)
    folder = seq.Store().path.parent / "logs" / report.eval_id
    assert list(folder.iterdir()) and _texts(report.eval_id)
    assert seq.eval.prune_logs() == 0  # kept 7 days by default
    done = run_cli("eval", "prune-logs", env={"SEQ_LOG_RETENTION_DAYS": "1"})
    assert done.returncode == 0 and "pruned 0 log stream(s)" in done.stdout
    with monkeypatch.context() as patched:  # opening the record prunes what is past retention
        patched.setenv("SEQ_LOG_RETENTION_DAYS", "0")
        seq.Store()
    assert not folder.exists() and _texts(report.eval_id) == []
    again = seq.eval.run("talker", benchmark="chatty", envs=1)
    done = run_cli("eval", "prune-logs", "--days", "0")
    assert done.returncode == 0 and "pruned 1 log stream(s)" in done.stdout
    assert _texts(again.eval_id) == []
    bad = run_cli("eval", "ls", env={"SEQ_LOG_RETENTION_DAYS": "soon"})
    refused_in_one_line(bad, "SEQ_LOG_RETENTION_DAYS=soon")


def test_removing_an_eval_removes_its_logs(chatty):
    report = seq.eval.run("talker", benchmark="chatty", envs=1)
    folder = seq.Store().path.parent / "logs" / report.eval_id
    assert folder.is_dir()
    seq.eval.rm(report.eval_id)
    assert not folder.exists()


def test_bad_arguments_are_refused_in_one_line(chatty):
    report = seq.eval.run("talker", benchmark="chatty", envs=1)
    refused_in_one_line(run_cli("eval", "logs", report.eval_id, "--side", "sim"), "--side sim")
    refused_in_one_line(run_cli("eval", "logs", report.eval_id, "--arm", "B"), "--arm B", "no such arm")
    refused_in_one_line(run_cli("eval", "logs", "ev-nope"), "ev-nope")
