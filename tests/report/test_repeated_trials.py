"""Trials of one condition are repeated measures: a benchmark whose outcome the condition fixes,
run with many trials, is as uncertain as its conditions, however many trials it runs."""

from __future__ import annotations

import textwrap

import pytest
from conftest import run_cli

import seq
from seq.stats import wilson_interval
from seq.stats.resampling import wilson

FIXED = textwrap.dedent('''
    """Twenty conditions whose outcome the seed decides: no trial can change it."""
    import numpy as np

    import seq


    class Fixed:
        def __init__(self, seed):
            self.seed, self.last = seed, None

        def reset(self, seed=None):
            return np.array([float(self.seed)]), {}

        def step(self, action):
            self.last = float(np.asarray(action).reshape(-1)[0])
            return np.array([float(self.seed)]), 0.0, False, False, {}


    @seq.benchmark(name="fixed", conditions=seq.conditions(tasks=["fixed"], seeds=range(20)), max_steps=3)
    class FixedOutcomes(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return Fixed(seed)

        @seq.check
        def check(self, env):
            done = env.last is not None
            return seq.Step(done=done, metrics={"success": float(done and env.last > 0)})


    @seq.policy(name="wins-below")
    class WinsBelow(seq.Policy):
        """Wins the conditions whose seed is below `below`: 10 of 20, or 11 with below=11."""

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None, below: int = 10):
            return np.array([1.0 if obs[0] < below else -1.0])


    @seq.policy(name="mostly-wins")
    class MostlyWins(seq.Policy):
        """Wins each episode with probability 0.95, whatever the condition: trials independent."""

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.array([1.0 if np.random.default_rng(seed).random() < 0.95 else -1.0])
''')


@pytest.fixture
def fixed_file(tmp_path):
    path = tmp_path / "fixed_bench.py"
    path.write_text(FIXED)
    seq.deploy(path)
    return path


def test_ten_trials_of_twenty_fixed_conditions_are_as_wide_as_twenty_outcomes(fixed_file):
    report = seq.eval.run("wins-below", benchmark="fixed", trials=10, envs=2)
    success = report.metric("success")
    twenty = wilson_interval(10, 20)
    assert success.n == 200 and success.conditions == 20 and success.effective_n == pytest.approx(20)
    assert success.low == pytest.approx(twenty.low, abs=1e-9)
    assert success.high == pytest.approx(twenty.high, abs=1e-9)
    assert round(success.low, 2) == 0.30 and round(success.high, 2) == 0.70
    assert report.trials.identical


def test_the_report_says_what_the_trials_are_worth(fixed_file):
    first = seq.eval.run("wins-below", benchmark="fixed", trials=10, envs=2)
    result = run_cli("eval", "report", first.eval_id, env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    words = " ".join(result.stdout.split())
    assert "0.50 [0.30, 0.70] eff. n 20" in words
    assert "200 episodes in 20 conditions" in words
    assert "more trials of a deterministic policy add no evidence; more seeds do" in words
    assert "Wilson score at the effective n" in words


@pytest.mark.parametrize("sequential", [False, True])
def test_two_policies_that_differ_on_one_condition_are_not_called_different(fixed_file, sequential):
    report = seq.eval.run(
        "wins-below",
        benchmark="fixed",
        vs="wins-below",
        vs_params={"below": "11"},
        trials=10,
        envs=2,
        sequential=sequential,
    )
    if sequential:
        assert report.sequential.decision not in ("A better", "B better")
    comparison = report.comparison("success")
    assert comparison.table.only_b == 10 and comparison.table.only_a == 0  # one condition, ten copies
    assert comparison.verdict == "undecided" and comparison.p_value == pytest.approx(1.0)
    assert comparison.effective_n == pytest.approx(20)


def test_with_one_trial_nothing_changes(fixed_file):
    report = seq.eval.run("wins-below", benchmark="fixed", vs="wins-below", vs_params={"below": "11"}, envs=2)
    comparison = report.comparison("success")
    assert comparison.test == "mcnemar-exact" and comparison.difference.method == "tango"
    assert report.metric("success").method == "wilson" and not report.trials.repeated


def test_a_rate_near_1_from_few_conditions_counts_each_condition_once_and_says_why(fixed_file):
    report = seq.eval.run("mostly-wins", benchmark="fixed", trials=5, envs=2)
    success = report.metric("success")
    assert 0.9 < success.value < 1.0 and success.conditions == 20
    assert success.effective_n == pytest.approx(20)  # independent-looking trials, yet each counts once
    assert (success.low, success.high) == pytest.approx(wilson(success.value * 20, 20, 0.95))
    words = " ".join(run_cli("eval", "report", report.eval_id).stdout.split())
    assert "Near the edge — success" in words and "More seeds, not more trials, narrow it." in words
    deterministic = seq.eval.run("wins-below", benchmark="fixed", trials=5, envs=2, params={"below": "19"})
    assert "Near the edge" not in " ".join(run_cli("eval", "report", deterministic.eval_id).stdout.split())
