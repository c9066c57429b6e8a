"""`seq.evaluate`: a policy object from the caller's memory, evaluated in the caller's process."""

from __future__ import annotations

import numpy as np
import pytest

import seq


@seq.policy(name="trained-line")
class TrainedLine(seq.Policy):
    """A 'model' whose gain is learned: it only reaches the goal once `gain` is large enough."""

    def __init__(self) -> None:
        self.gain = 0.0
        self.calls = 0

    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None):
        self.calls += 1
        return np.array([np.clip(self.gain * (obs[1] - obs[0]), -0.1, 0.1)])


def test_the_object_itself_is_evaluated_as_it_trains(toy_file):
    seq.deploy(toy_file)
    model = TrainedLine()
    before = seq.evaluate(model, "line", tasks=["near"], max_steps=30)
    assert before.metric("success").value == 0.0 and model.calls > 0  # the very object was called
    model.gain = 1.0  # "training"
    after = seq.evaluate(model, "line", tasks=["near"], max_steps=30)
    assert after.metric("success").value == 1.0
    assert before.policy == after.policy == "trained-line@v1"  # same code, same version
    assert after.manifest.arms[0].in_memory


def test_an_in_memory_eval_cannot_be_sharded(toy_file):
    seq.deploy(toy_file)
    with pytest.raises(seq.SeqInputError, match="cannot be sharded"):
        seq.evaluate(TrainedLine(), "line", eval_id="ev-mem", shard_id=0, num_shards=2)


def test_a_plain_function_is_evaluated_as_an_inline_policy(toy_file):
    import hashlib

    seq.deploy(toy_file)
    seen = []

    def step_toward(obs, *, seed=None):
        seen.append(seed)
        return np.array([np.clip(obs[1] - obs[0], -0.1, 0.1)])

    report = seq.evaluate(step_toward, "line", tasks=["near"], max_steps=30)
    assert report.metric("success").value == 1.0 and seen and all(s is not None for s in seen)
    arm = report.manifest.arms[0]
    assert report.policy == "callable-step-toward@v1" and arm.in_memory
    import inspect

    assert arm.policy_sha256 == hashlib.sha256(inspect.getsource(step_toward).strip().encode()).hexdigest()
    lam = seq.evaluate(lambda obs, **kw: np.zeros(1), "line", tasks=["near"], max_steps=5)
    assert lam.policy == "callable-lambda@v1" and lam.done == lam.total
    both = seq.evaluate(step_toward, "line", tasks=["near"], max_steps=30, vs=lambda obs: np.zeros(1))
    assert [arm.policy for arm in both.manifest.arms] == ["callable-step-toward@v1", "callable-lambda@v2"]


def test_a_function_that_cannot_take_an_observation_is_refused_in_one_sentence(toy_file):
    seq.deploy(toy_file)
    with pytest.raises(seq.SeqInputError, match="takes the observation as its one positional argument"):
        seq.evaluate(lambda obs, goal: obs, "line", tasks=["near"], max_steps=5)
