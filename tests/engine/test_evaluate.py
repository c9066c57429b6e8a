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
