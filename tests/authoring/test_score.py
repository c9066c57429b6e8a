"""`@seq.score` runs on an instance whose `@seq.setup` ran (setup once per instance,
score once per group), with each arm's own setup parameters, and where the workers ran."""

from __future__ import annotations

import textwrap

import seq

SCORED = textwrap.dedent(
    """
    import os

    import seq


    class Counter:
        def reset(self, seed=None):
            self.t = 0
            return [0.0], {}

        def step(self, action):
            self.t += 1
            return [float(self.t)], 0.0, False, False, {}


    class Scored(seq.Benchmark):
        @seq.setup
        def setup(self, bar: int = 3):
            self.settings = {"bar": bar, "pid": os.getpid()}

        @seq.reset
        def reset(self, seed, variant):
            return Counter()

        @seq.check
        def check(self, env):
            return seq.Step(done=env.t >= 2, metrics={"success": 1.0})

        @seq.score
        def score(self, results):
            return {"under_bar": sum(r.steps < self.settings["bar"] for r in results) / len(results),
                    "bar": self.settings["bar"], "scored_in": self.settings["pid"]}


    @seq.benchmark(name="scored", conditions=seq.conditions(tasks=["a", "b"], seeds=[0]), max_steps=5)
    class ScoredHere(Scored):
        pass


    @seq.benchmark(name="scored-apart", conditions=seq.conditions(tasks=["a", "b"], seeds=[0]),
                   max_steps=5, memory="1GiB")
    class ScoredApart(Scored):
        pass


    @seq.policy(name="still")
    class Still(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return [0.0]
    """
)


def _scores(eval_id: str) -> dict:
    return {key: values for key, (values, _) in seq.Store().scores(eval_id).items()}


def _errors(eval_id: str) -> dict:
    return {key: error for key, (_, error) in seq.Store().scores(eval_id).items() if error}


def test_score_reads_what_setup_built_with_each_arms_setup_parameters(tmp_path):
    path = tmp_path / "scored.py"
    path.write_text(SCORED)
    seq.deploy(path)
    report = seq.eval.run("still", benchmark="scored", envs=1, sweep={"benchmark.bar": [2, 3]})
    scores = _scores(report.eval_id)
    assert not _errors(report.eval_id)
    assert scores[("bar=2", "overall", "all")]["bar"] == 2.0
    assert scores[("bar=2", "overall", "all")]["under_bar"] == 0.0  # every episode takes 2 steps
    assert scores[("bar=3", "task", "a")] | {"scored_in": 0} == {"under_bar": 1.0, "bar": 3.0, "scored_in": 0}


def test_a_benchmark_that_declares_isolation_is_scored_in_a_process_like_its_workers(tmp_path):
    import os

    path = tmp_path / "scored.py"
    path.write_text(SCORED)
    seq.deploy(path)
    report = seq.eval.run("still", benchmark="scored-apart", envs=1, params={"bar": 3})
    scores = _scores(report.eval_id)
    assert not _errors(report.eval_id)
    assert scores[("", "overall", "all")]["under_bar"] == 1.0
    assert scores[("", "overall", "all")]["scored_in"] != os.getpid()
