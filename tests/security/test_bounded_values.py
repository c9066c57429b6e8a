"""What a policy or a benchmark emits cannot grow the record or the report beyond a bound an
episode, and values that are not numbers are said where they occur. Seen before: 34 episodes
whose errors were 20 MB messages made a 681 MB seq.db and a 1.42 GB report.json; a NaN reward
silently removed `return` from the printed report; inf rewards printed `inf [inf, inf]`; infinite
actions were not flagged (only NaN ones were)."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

import pytest
from conftest import run_cli

import seq
from seq.record.episode import MAX_ERROR_CHARS

ODD = textwrap.dedent('''
    """A point on a line whose reward or metric is not finite on some tasks."""
    import math

    import numpy as np

    import seq


    class Line:
        def __init__(self, task):
            self.task, self.x, self.action_space = task, 0.0, None

        def reset(self, seed=None):
            self.x = 0.0
            return np.array([self.x]), {}

        def step(self, action):
            value = float(np.asarray(action).reshape(-1)[0])
            self.x += value if math.isfinite(value) else 0.0
            reward = {"nan-reward": math.nan, "inf-reward": math.inf}.get(self.task, 1.0)
            return np.array([self.x]), reward, False, False, {}


    @seq.benchmark(
        name="odd",
        conditions=seq.conditions(tasks=["nan-reward", "inf-reward", "nan-metric", "fine"], seeds=range(2)),
        max_steps=3,
    )
    class Odd(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return Line(variant.task)

        @seq.check
        def check(self, env):
            spread = math.nan if env.task == "nan-metric" else 0.5
            return seq.Step(done=False, metrics={"success": 1.0, "spread": spread})


    @seq.policy(name="odd-policy")
    class OddPolicy(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None, inf: bool = False, shout: int = 0):
            if shout:
                raise RuntimeError("the policy says: " + "blah " * (shout // 5) + "THE END")
            return np.array([math.inf if inf else 0.1])
''')
SHOUT = 2_000_000  # characters of each episode's error message


@pytest.fixture
def odd(tmp_path: Path) -> None:
    path = tmp_path / "odd_bench.py"
    path.write_text(ODD)
    seq.deploy(path)


def _record_bytes(home: Path) -> int:
    db = home / "seq.db"
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db.stat().st_size


def test_a_huge_error_is_kept_to_its_head_and_tail(odd, seq_home):
    report = seq.eval.run("odd-policy", benchmark="odd", envs=1, params={"shout": SHOUT})
    assert len(report.episodes) == 8 and all(e.status == "error" for e in report.episodes)
    for episode in report.episodes:
        error = episode.error
        assert len(error) < MAX_ERROR_CHARS + 100
        assert error.startswith("Traceback") and error.rstrip().endswith("THE END")  # head and tail
        assert "characters left out of" in error  # and the length it had
    assert _record_bytes(seq_home) < 2_000_000  # 8 episodes of 2 MB each: 16 MB unbounded
    as_json = run_cli("eval", "report", report.eval_id, "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert len(as_json.stdout) < 400_000  # proportional to the episodes, not to the messages
    printed = run_cli("eval", "report", report.eval_id)
    assert printed.returncode == 0 and len(printed.stdout) < 100_000
    assert "8 episodes: " in printed.stdout


def test_a_non_finite_reward_or_metric_is_a_problem_naming_metric_groups_and_episodes(odd):
    report = seq.eval.run("odd-policy", benchmark="odd", envs=1)
    found = {p.where: p.message for p in report.problems if p.status == "non_finite"}
    assert set(found) == {"metric return", "metric spread"}
    assert found["metric return"].startswith("metric return is NaN in 2 episodes and inf in 2 episodes of 8")
    assert "task nan-reward" in found["metric return"] and "task inf-reward" in found["metric return"]
    assert "task fine" not in found["metric return"]
    assert found["metric spread"].startswith("metric spread is NaN in 2 episodes of 8")
    assert "task nan-metric" in found["metric spread"]
    printed = run_cli("eval", "report", report.eval_id).stdout
    assert "2 metric(s) NaN or infinite" in printed
    assert "metric return is NaN in 2 episodes and inf in 2 episodes of 8" in " ".join(printed.split())
    problems = json.loads(run_cli("eval", "report", report.eval_id, "--json").stdout)["problems"]
    assert sum(p["status"] == "non_finite" for p in problems) == 2


def test_infinite_actions_are_counted_as_nan_ones_are(odd):
    report = seq.eval.run("odd-policy", benchmark="odd", envs=1, params={"inf": True})
    assert all(e.status == "ok" and e.metrics["nan_actions"] == 3 for e in report.episodes)
    flagged = [p for p in report.problems if p.status == "nan_actions"]
    assert len(flagged) == 8 and "NaN or inf" in flagged[0].message
