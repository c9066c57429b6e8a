"""`@seq.infer(batched=True)`: declared on the spec, honoured inline and by the server's batches."""

from __future__ import annotations

import numpy as np
import pytest

import seq
from seq.authoring.policy import policy_spec_of
from seq.serving.inline import InlinePolicy, split_batch


def test_infer_is_used_bare_or_with_batched():
    @seq.policy(name="plain")
    class Plain(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return obs

    @seq.policy(name="called")
    class Called(seq.Policy):
        @seq.infer()
        def infer(self, obs, *, seed=None, instruction=None):
            return obs

    @seq.policy(name="many")
    class Many(seq.Policy):
        @seq.infer(batched=True)
        def infer(self, obs, *, seed=None, instruction=None, gain: float = 1.0):
            return np.stack(obs) * gain

    assert not policy_spec_of(Plain).batched and not policy_spec_of(Called).batched
    spec = policy_spec_of(Many)
    assert spec.batched and spec.hooks == {"infer": "infer"} and list(spec.parameters) == ["gain"]
    assert spec.describe()["batched"] is True and policy_spec_of(Plain).describe()["batched"] is False
    with pytest.raises(TypeError, match=r"@seq.infer\(batched=True\)"):
        seq.infer(True)


def test_inline_calls_a_batched_infer_with_batches_of_one():
    calls = []

    @seq.policy(name="recorder")
    class Recorder(seq.Policy):
        @seq.infer(batched=True)
        def infer(self, obs, *, seed=None, instruction=None, gain: float = 1.0):
            calls.append((len(obs), seed, instruction))
            return np.stack(obs) * gain  # an array whose first axis is the batch

    handle = InlinePolicy(Recorder(), {"gain": 2.0})
    chunk = handle.act(np.array([1.0, 2.0]), seed=5, instruction="go")
    np.testing.assert_array_equal(chunk, [[2.0, 4.0]])
    assert calls == [(1, [5], ["go"])]


def test_a_batched_infer_must_return_one_output_per_observation():
    assert len(split_batch([np.zeros(2)] * 3, 3)) == 3
    assert len(split_batch(np.zeros((3, 4, 2)), 3)) == 3
    assert len(split_batch({"actions": np.zeros((3, 2))}, 3)) == 3
    with pytest.raises(ValueError, match="expected 3, got 2 outputs"):
        split_batch([np.zeros(2)] * 2, 3)
    with pytest.raises(ValueError, match="expected 1, got float"):
        split_batch(1.5, 1)
