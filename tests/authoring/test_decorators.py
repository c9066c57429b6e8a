"""@seq.benchmark and @seq.policy: what they accept and what they refuse."""

from __future__ import annotations

import pytest

import seq
from seq.authoring.benchmark import spec_of
from seq.authoring.policy import policy_spec_of

CONDS = seq.conditions(tasks=["reach", "push"], seeds=range(2))


class _Hooks(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return None

    @seq.check
    def check(self, env):
        return seq.Step(done=True)


def test_name_defaults_to_kebab_case():
    @seq.benchmark(conditions=CONDS)
    class MyToyBench(_Hooks):
        pass

    spec = spec_of(MyToyBench)
    assert spec.name == "my-toy-bench"
    assert spec.max_steps == 500
    assert spec.hooks == {"reset": "reset", "check": "check"}
    assert list(spec.suites) == ["default"] and len(spec.suites["default"]) == 4


def test_explicit_name_and_max_steps():
    @seq.benchmark("toy", conditions=CONDS, max_steps=25)
    class Toy(_Hooks):
        pass

    assert (spec_of(Toy).name, spec_of(Toy).max_steps) == ("toy", 25)


def test_dict_of_suites_names_each_condition():
    easy = seq.conditions(tasks=["reach"])
    hard = seq.conditions(tasks=["push"], seeds=[0, 1])

    @seq.benchmark(conditions={"easy": easy, "hard": hard})
    class Suited(_Hooks):
        pass

    spec = spec_of(Suited)
    assert spec.default_suite == "easy"
    assert [c.suite for c in spec.suites["easy"]] == ["easy"]
    assert [c.suite for c in spec.suites["hard"]] == ["hard", "hard"]


def _refused(match, decorator=None, base=_Hooks):
    decorator = decorator or seq.benchmark(conditions=CONDS)
    with pytest.raises(seq.SeqInputError, match=match):

        @decorator
        class BadBench(base):
            pass


def test_refuses_missing_reset():
    class OnlyCheck(seq.Benchmark):
        @seq.check
        def check(self, env):
            return seq.Step()

    _refused(r"BadBench.*@seq\.reset", base=OnlyCheck)


def test_refuses_missing_check():
    class OnlyReset(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return None

    _refused(r"BadBench.*@seq\.check", base=OnlyReset)


def test_refuses_zero_max_steps():
    _refused("BadBench.*max_steps", decorator=seq.benchmark(conditions=CONDS, max_steps=0))


def test_refuses_non_benchmark_class():
    _refused(r"BadBench.*seq\.Benchmark", base=object)


def test_refuses_default_adapter():
    with pytest.raises(seq.SeqInputError, match="default_adapter"):
        seq.benchmark(conditions=CONDS, default_adapter="x")


def test_setup_parameters_read_from_typed_kwargs():
    @seq.benchmark(conditions=CONDS)
    class WithSetup(_Hooks):
        @seq.setup
        def setup(self, *, scale: float = 1.5, level: int = 2, fast=True, env=None):
            pass

    params = spec_of(WithSetup).setup_parameters
    assert {n: (p.type, p.default) for n, p in params.items()} == {
        "scale": ("float", 1.5),
        "level": ("int", 2),
        "fast": ("bool", True),
    }


def test_setup_parameter_without_default_refused():
    class NoDefault(_Hooks):
        @seq.setup
        def setup(self, *, level: int):
            pass

    _refused("BadBench.*'level'.*default", base=NoDefault)


def test_setup_parameter_untyped_refused():
    class Untyped(_Hooks):
        @seq.setup
        def setup(self, *, thing=None):
            pass

    _refused("BadBench.*'thing'.*typed", base=Untyped)


def test_policy_reads_infer_parameters():
    @seq.policy()
    class NoisyPolicy(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None, noise: float = 0.1, horizon: int = 4):
            return obs

    spec = policy_spec_of(NoisyPolicy)
    assert spec.name == "noisy-policy"
    assert {n: (p.type, p.default) for n, p in spec.parameters.items()} == {
        "noise": ("float", 0.1),
        "horizon": ("int", 4),
    }


def test_policy_without_infer_refused():
    with pytest.raises(seq.SeqInputError, match=r"NoInfer.*@seq\.infer"):

        @seq.policy()
        class NoInfer(seq.Policy):
            @seq.load
            def load(self, weights_dir):
                pass


def test_policy_must_subclass_policy():
    with pytest.raises(seq.SeqInputError, match=r"Plain.*seq\.Policy"):

        @seq.policy()
        class Plain:
            @seq.infer
            def infer(self, obs):
                return obs
