"""The episode loop (`seq.engine.episode`): what a benchmark's check returns is read the same way
on its fast path as on its general one."""

from __future__ import annotations

import textwrap

import pytest

import seq

CHECKS = textwrap.dedent('''
    import numpy as np

    import seq


    class Env:
        action_space = None

        def reset(self, seed=None):
            return np.zeros(1), {}

        def step(self, action):
            return np.zeros(1), 0.0, False, False, {}


    @seq.benchmark(name="odd-metrics", conditions=seq.conditions(tasks=["none", "zero", "empty"], seeds=[0]),
                   max_steps=3)
    class OddMetrics(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            self.task = variant.task
            return Env()

        @seq.check
        def check(self, env):
            return seq.Step(done=False, metrics={"none": None, "zero": 0, "empty": {}}[self.task])


    @seq.policy(name="zero-one")
    class ZeroOne(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.zeros(1)
''')


@pytest.fixture
def odd_metrics(tmp_path):
    (tmp_path / "odd_metrics.py").write_text(CHECKS)
    seq.deploy(tmp_path / "odd_metrics.py")


def test_metrics_that_are_not_a_dict_are_the_benchmarks_error_and_an_empty_dict_is_none(odd_metrics):
    report = seq.eval.run("zero-one", benchmark="odd-metrics", envs=1)
    by_task = {e.task: e for e in report.episodes}
    assert by_task["empty"].status == "ok" and by_task["empty"].steps == 3
    for task in ("none", "zero"):
        episode = by_task[task]
        assert (episode.status, episode.failure) == ("error", "benchmark")
        assert "expected a dict of numbers" in episode.error
