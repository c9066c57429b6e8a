"""What `@seq.policy` and `@seq.plan` accept, and what they refuse in words."""

from __future__ import annotations

import pytest

import seq


def _policy(**declared):
    @seq.policy(name="probe", **declared)
    class Probe(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return [0.0]

    return Probe


def test_declarations_are_kept_with_the_version_description():
    probe = _policy(gpu="H100", max_gpus=2, weights=seq.Volume.from_name("pi05"), models=["planner"])
    declared = probe.__seq_spec__.describe()["declared"]
    assert declared == {"gpu": "H100", "max_gpus": 2, "weights": {"volume": "pi05"}, "models": ["planner"]}
    assert "declared" not in _policy().__seq_spec__.describe()  # nothing declared, nothing added


@pytest.mark.parametrize(
    ("declared", "fragment"),
    [
        ({"max_gpus": 2}, "max_gpus=2 needs gpu= naming a card"),
        ({"gpu": "cpu", "max_gpus": 1}, "max_gpus=1 needs gpu= naming a card"),
        ({"gpu": "H100", "max_gpus": 0}, "max_gpus= is the most cards the policy may use"),
        ({"gpu": ""}, "gpu= names a card"),
        ({"weights": "pi05"}, "weights= must be seq.Volume.from_name(NAME)"),
        ({"models": []}, "models= must be a list of model names"),
        ({"models": ["a", "a"]}, "models= names a model twice"),
    ],
)
def test_bad_declarations_are_refused(declared, fragment):
    with pytest.raises(seq.SeqInputError, match="@seq.policy on Probe") as refused:
        _policy(**declared)
    assert fragment in str(refused.value)


def test_a_planner_is_declared_with_its_period_and_keywords():
    @seq.policy(name="composite")
    class Composite(seq.Policy):
        @seq.plan(every_s=2.0)
        def plan(self, obs, *, instruction=None):
            return instruction

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return [0.0]

    spec = Composite.__seq_spec__
    assert spec.plan_every_s == 2.0 and spec.plan_keywords == ("instruction",)
    assert spec.describe()["declared"] == {"plan": {"every_s": 2.0}}


@pytest.mark.parametrize("every_s", [0, -1.0, float("inf"), True, "2"])
def test_a_planner_needs_a_positive_period(every_s):
    with pytest.raises(seq.SeqInputError, match=r"@seq.plan\(every_s=...\) must be a positive number"):
        seq.plan(every_s=every_s)


def test_a_bare_planner_says_how_to_write_it():
    with pytest.raises(seq.SeqInputError, match=r"write @seq.plan\(every_s=2.0\)"):

        @seq.plan
        def plan(self, obs):
            return None


def test_a_planner_takes_only_known_keywords():
    with pytest.raises(seq.SeqInputError, match="@seq.plan takes the keywords instruction, current"):

        @seq.policy
        class Wrong(seq.Policy):
            @seq.plan(every_s=1.0)
            def plan(self, obs, *, image=None):
                return None

            @seq.infer
            def infer(self, obs, *, seed=None, instruction=None):
                return [0.0]


def test_a_benchmark_refuses_a_planner():
    with pytest.raises(seq.SeqInputError, match="@seq.plan belongs on a policy"):

        @seq.benchmark(conditions=seq.conditions(tasks=["a"], seeds=[0]))
        class Bench(seq.Benchmark):
            @seq.reset
            def reset(self, seed, variant):
                return None

            @seq.check
            def check(self, env):
                return seq.Step()

            @seq.plan(every_s=1.0)
            def plan(self, obs):
                return None
