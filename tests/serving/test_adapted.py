"""AdaptedPolicy: the adapter runs between the env and the policy, and the loop does not change."""

from __future__ import annotations

import numpy as np
import pytest

import seq
from seq.authoring.adapter import TransformError
from seq.authoring.benchmark import spec_of
from seq.engine.episode import EpisodeRunner
from seq.record.store import WorkItem
from seq.serving.adapted import AdaptedPolicy
from seq.serving.inline import InlinePolicy


class CameraLine:
    """A point on a line seen by a 64x64 camera and a state vector; gymnasium-style."""

    def __init__(self, goal: float) -> None:
        self.goal, self.action_space = goal, None

    def _obs(self):
        return {"pixels": np.zeros((64, 64, 3), np.uint8), "state": np.array([self.x, self.goal])}

    def reset(self, seed=None):
        self.x = float(np.random.default_rng(seed).uniform(-1.0, 0.0))
        return self._obs(), {}

    def step(self, action):
        self.x += float(np.clip(np.asarray(action).reshape(-1)[0], -0.1, 0.1))
        return self._obs(), -abs(self.x - self.goal), False, False, {}


@seq.benchmark(name="camera-line", conditions=seq.conditions(tasks=["near"]), max_steps=40)
class CameraLineBench(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return CameraLine(0.5)

    @seq.check
    def check(self, env):
        success = float(abs(env.x - env.goal) < 0.05)
        return seq.Step(done=bool(success), metrics={"success": success})


@seq.policy(name="image-policy")
class ImagePolicy(seq.Policy):
    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None):
        assert obs["image"].shape == (32, 32, 3)
        x, goal = obs["state"]
        return np.array([np.clip(goal - x, -0.1, 0.1) / 2])  # half a step: the adapter scales it


@seq.adapter(name="camera-to-image")
class CameraToImage(seq.Adapter):
    obs_transforms = [seq.tf.rename("pixels", "image"), seq.tf.resize("image", (64, 64), (32, 32))]
    action_transforms = [seq.tf.scale(2.0)]


ITEM = WorkItem("near|seed=1", 0, seq.Condition(task="near", seed=1), 0)


def _run(handle):
    return EpisodeRunner(CameraLineBench(), spec_of(CameraLineBench), handle).run(ITEM)


def test_with_the_adapter_the_episode_runs_and_succeeds():
    result = _run(AdaptedPolicy(InlinePolicy(ImagePolicy(), {}), CameraToImage()))
    assert result.status == "ok", result.error
    assert result.metrics["success"] == 1.0


def test_without_it_the_policy_cannot_read_the_observation():
    result = _run(InlinePolicy(ImagePolicy(), {}))
    assert result.status == "error" and "KeyError" in result.error


class Recorder:
    """A handle that records what it was given and returns a fixed chunk."""

    def __init__(self, chunk):
        self.chunk, self.seen, self.spaces = np.asarray(chunk), [], []

    def begin_episode(self, action_space, slot=0, episode=None):
        self.spaces.append(action_space)

    def act(self, obs, *, seed, instruction):
        self.seen.append((obs, seed, instruction))
        return self.chunk


def test_every_action_of_a_chunk_is_transformed_and_the_rest_passes_through():
    class Gripper(seq.Adapter):
        action_transforms = [seq.tf.gripper(index=-1), seq.tf.scale([0.5, 1.0])]

    seq.adapter(name="gripper")(Gripper)
    inner = Recorder([[0.2, -1.0], [0.4, 1.0], [0.6, -1.0]])
    adapted = AdaptedPolicy(inner, Gripper())
    adapted.begin_episode("space")
    chunk = adapted.act({"x": 1}, seed=7, instruction="go")
    assert np.allclose(chunk, [[0.1, 1.0], [0.2, -1.0], [0.3, 1.0]])
    assert inner.spaces == ["space"] and inner.seen == [({"x": 1}, 7, "go")]


def test_a_transform_that_raises_is_named_in_the_episodes_error():
    class Broken(seq.Adapter):
        obs_transforms = [seq.tf.rename("camera", "image")]

    seq.adapter(name="broken")(Broken)
    with pytest.raises(TransformError, match=r"obs_transforms\[0\] rename\('camera'→'image'\)"):
        AdaptedPolicy(Recorder([[0.0]]), Broken()).act({"pixels": 1}, seed=0, instruction=None)
    result = _run(AdaptedPolicy(InlinePolicy(ImagePolicy(), {}), Broken()))
    assert result.status == "error" and "obs_transforms[0] rename" in result.error


def test_an_episode_transform_that_rewrites_the_instruction_rewrites_every_act_of_its_slot():
    from seq.authoring.begin import EpisodeStart
    from seq.serving.inline import ActRequest

    class Sentences(seq.Adapter):
        episode_transforms = [
            seq.tf.custom(
                lambda fields: {**fields, "instruction": f"do {fields['task']}"},
                label=seq.tf.lossy("the policy reads sentences"),
                name="sentence",
            )
        ]

    seq.adapter(name="sentences")(Sentences)
    inner = Recorder([[0.0]])
    inner.act_many = lambda requests: [
        inner.act(r.obs, seed=r.seed, instruction=r.instruction) for r in requests
    ]
    adapted = AdaptedPolicy(inner, Sentences())
    adapted.begin_episode("space", 0, EpisodeStart("push", None, "push", 1, 0))
    adapted.begin_episode("space", 1, EpisodeStart("reach", None, "reach", 2, 1))
    adapted.act({}, seed=1, instruction="push")
    adapted.act_many([ActRequest({}, 1, "push", 0), ActRequest({}, 2, "reach", 1)])
    assert [instruction for _, _, instruction in inner.seen] == ["do push", "do push", "do reach"]
    adapted.begin_episode("space", 1)  # an episode the adapter is not told of keeps its own
    adapted.act_many([ActRequest({}, 3, "reach", 1)])
    assert inner.seen[-1][2] == "reach"
