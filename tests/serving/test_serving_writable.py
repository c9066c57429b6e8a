"""Inputs a policy can trust: every array a policy receives, inline or served over seq's, openpi's
or vla-eval's protocol, batched or not, is writable and its own."""

from __future__ import annotations

import numpy as np
import pytest

import seq
from seq.authoring.benchmark import spec_of
from seq.engine.episode import EpisodeRunner
from seq.record.store import WorkItem
from seq.serving import connect, serve
from seq.serving.inline import ActRequest, InlinePolicy
from seq.serving.inputs import writable

SEEN: list[int] = []  # how many arrays each act of the scribbling policies wrote into


def _arrays(value):
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _arrays(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _arrays(item)


def _scribble(obs) -> np.ndarray:
    """Write into every array of `obs`, as MetaWorld's experts write into theirs."""
    arrays = list(_arrays(obs))
    for array in arrays:
        array[...] = 0
    SEEN.append(len(arrays))
    return np.zeros(1)


@seq.policy(name="scribbler")
class Scribbler(seq.Policy):
    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None):
        return _scribble(obs)


@seq.policy(name="batched-scribbler")
class BatchedScribbler(seq.Policy):
    @seq.infer(batched=True)
    def infer(self, obs, *, seed=None, instruction=None):
        return [_scribble(o) for o in obs]


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


class FrozenEnv:
    """An env whose observation's arrays are all read-only, the image a real camera frame."""

    action_space = None

    def _obs(self):
        yy, xx = np.mgrid[0:48, 0:64]
        image = np.stack([xx * 4, yy * 5, (xx + yy) * 2], axis=-1).astype(np.uint8)
        return {
            "state": _frozen(np.arange(4.0) + self.t),
            "image": _frozen(image),
            "pair": (_frozen(np.ones(2, np.float32)), [_frozen(np.arange(3))]),
        }

    def reset(self, seed=None):
        self.t = 0
        self.last = self._obs()
        return self.last, {}

    def step(self, action):
        assert self.last["state"][0] == self.t, "the policy wrote into the env's own array"
        self.t += 1
        self.last = self._obs()
        return self.last, 0.0, False, False, {}


@seq.benchmark(name="frozen", conditions=seq.conditions(tasks=["look"], seeds=range(2)), max_steps=3)
class Frozen(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return FrozenEnv()

    @seq.check
    def check(self, env):
        return seq.Step(done=False)


def _dict_only(obs):
    """The arrays openpi and vla-eval can carry: a flat dict (their clients send the payload as is)."""
    return {"state": obs["state"], "image": obs["image"], "ones": obs["pair"][0]}


def run_episodes(handle):
    """Both episodes of the frozen benchmark through the one episode loop."""
    runner = EpisodeRunner(Frozen(), spec_of(Frozen), handle)
    conditions = runner.spec.suites[runner.spec.default_suite]
    return [runner.run(WorkItem(c.key, i, c, 0)) for i, c in enumerate(conditions)]


def _ok(results):
    assert all(r.status == "ok" for r in results), [r.error for r in results if r.error]
    assert len(results) == 2 and all(r.steps == 3 for r in results)


def test_an_inline_policy_may_write_into_every_observation_array():
    SEEN.clear()
    for policy in (Scribbler(), BatchedScribbler()):
        _ok(run_episodes(InlinePolicy(policy, {})))
    assert SEEN and set(SEEN) == {4}


@pytest.mark.parametrize("policy", [Scribbler, BatchedScribbler])
@pytest.mark.parametrize("image_encoding", ["raw", "jpeg"])
def test_a_served_policy_may_write_into_every_observation_array_over_seq(policy, image_encoding):
    SEEN.clear()
    with serve(policy(), port=0) as server:
        with connect(server.url, image_encoding=image_encoding) as remote:
            _ok(run_episodes(remote))
            env = FrozenEnv()
            obs, _ = env.reset()
            for slot in range(3):
                remote.begin_episode(None, slot=slot)
            chunks = remote.act_many([ActRequest(obs, slot, "look", slot) for slot in range(3)])
    assert all(isinstance(chunk, np.ndarray) for chunk in chunks), chunks
    assert set(SEEN) == {4}


@pytest.mark.parametrize(("protocol", "image_encoding"), [("openpi", "raw"), ("vla-eval", "jpeg")])
def test_a_served_policy_may_write_into_every_observation_array_over_the_peer_protocols(
    protocol, image_encoding
):
    flat = seq.Adapter()  # on the server: the peers' clients send the env's dict as their payload
    flat.obs_transforms = [seq.tf.custom(_dict_only, label=seq.tf.lossy("the nested pair is flattened"))]
    SEEN.clear()
    with serve(Scribbler(), port=0, adapter=flat) as server:
        with connect(server.url, protocol=protocol, image_encoding=image_encoding) as remote:
            _ok(run_episodes(remote))
    assert set(SEEN) == {3}


def test_only_read_only_arrays_are_copied():
    owned = {"state": np.zeros(3), "items": [np.ones(2)], "pair": (np.arange(2), "x")}
    assert writable(owned) is owned
    frozen = {"state": _frozen(np.zeros(3)), "keep": owned["state"], "pair": (_frozen(np.ones(1)), 2)}
    fixed = writable(frozen)
    assert fixed is not frozen and not frozen["state"].flags.writeable  # the caller's dict is untouched
    assert fixed["state"].flags.writeable and fixed["pair"][0].flags.writeable and fixed["pair"][1] == 2
    assert fixed["keep"] is owned["state"]
