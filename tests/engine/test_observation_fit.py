"""Before any episode: a policy whose inputs do not fit the benchmark's observation is refused,
with the mismatched keys named; through the right adapter it passes."""

from __future__ import annotations

import numpy as np
import pytest

import seq
from seq.engine.observation_fit import check_compatibility, policy_inputs

EVENTS: list[str] = []


class CameraLine:
    """A point on a line seen by a 64x64 camera and a state vector; gymnasium-style."""

    def __init__(self, goal: float) -> None:
        self.goal, self.action_space = goal, None

    def _obs(self):
        pixels = np.full((64, 64, 3), int(np.clip((self.x + 1) * 100, 0, 255)), dtype=np.uint8)
        return {"pixels": pixels, "state": np.array([self.x, self.goal])}

    def reset(self, seed=None):
        EVENTS.append("reset")
        self.x = float(np.random.default_rng(seed).uniform(-1.0, 0.0))
        return self._obs(), {}

    def step(self, action):
        EVENTS.append("step")
        self.x += float(np.clip(np.asarray(action).reshape(-1)[0], -0.1, 0.1))
        return self._obs(), -abs(self.x - self.goal), False, False, {}

    def close(self):
        EVENTS.append("close")


@seq.benchmark(name="camera-line", conditions=seq.conditions(tasks=["near"], seeds=range(2)), max_steps=40)
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
    inputs = {"image": ((32, 32, 3), "uint8"), "state": (2,)}

    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None):
        assert obs["image"].shape == (32, 32, 3)
        x, goal = obs["state"]
        return np.array([np.clip(goal - x, -0.1, 0.1) / 2])  # half a step: the adapter scales it


@seq.adapter(name="camera-to-image")
class CameraToImage(seq.Adapter):
    observation_spec = {"pixels": ((64, 64, 3), "uint8"), "state": (2,)}
    action_spec = (1,)

    def __init__(self, *, image_size: int = 32):
        self.obs_transforms = [
            seq.tf.rename("pixels", "image"),
            seq.tf.resize("image", (64, 64), (image_size, image_size), lossy="the policy takes 32x32"),
        ]
        self.action_transforms = [seq.tf.scale(2.0)]


CONDITIONS = list(seq.conditions(tasks=["near"], seeds=[3, 4]))


def _check(policy=ImagePolicy, adapter=None, benchmark=CameraLineBench):
    return check_compatibility(
        benchmark, "camera-line@v1", {}, CONDITIONS, policy, "image-policy@v1", adapter, "camera-to-image@v1"
    )


@pytest.fixture(autouse=True)
def _events():
    EVENTS.clear()


def test_without_an_adapter_the_mismatched_keys_are_named_before_any_step():
    with pytest.raises(seq.SeqInputError) as refused:
        _check()
    message = str(refused.value)
    assert "policy image-policy@v1 does not take benchmark camera-line@v1's observation" in message
    assert "'image' is missing" in message and "'pixels' (64, 64, 3) uint8" in message
    assert "--adapter" in message
    assert EVENTS == ["reset", "close"]  # one reset to read the observation, no step


def test_a_shape_mismatch_names_the_key_and_both_shapes():
    class WantsState3(ImagePolicy):
        inputs = {"pixels": None, "state": (3,)}

    seq.policy(name="wants-state-3")(WantsState3)
    with pytest.raises(seq.SeqInputError, match=r"'state' has shape \(2,\), expected \(3,\)"):
        _check(WantsState3)


def test_through_the_right_adapter_it_passes_and_says_what_it_saw():
    seen = _check(adapter=CameraToImage())
    assert seen is not None
    manifest = seen.to_manifest()
    assert manifest["observation"]["pixels"] == "(64, 64, 3) uint8"
    assert manifest["policy_input"] == {"image": "(32, 32, 3) uint8", "state": "(2,) float64"}
    assert [e["reason"] for e in manifest["adapter"]["lossy"]] == ["the policy takes 32x32"]


def test_through_the_wrong_adapter_the_key_is_named():
    with pytest.raises(
        seq.SeqInputError, match=r"through adapter camera-to-image@v1: 'image' has shape \(16, 16, 3\)"
    ):
        _check(adapter=CameraToImage(image_size=16))


def test_the_labels_are_checked_again_on_the_benchmarks_real_observation():
    class RoundsState(seq.Adapter):
        """Passes at registration on its own integer examples; the real state is not integer."""

        obs_transforms = [
            seq.tf.custom(
                lambda obs: {**obs, "state": np.round(obs["state"], 1)},
                lambda obs: obs,
                label=seq.tf.lossless,
                name="round-state",
                examples=lambda rng: [{"state": np.array([1.0, 2.0])}],
            )
        ]

    seq.adapter(name="rounds-state")(RoundsState)
    from seq.registry.adapter_checks import check_instance

    check_instance(RoundsState(), "adapter rounds-state")  # registration: examples only, passes
    with pytest.raises(seq.SeqInputError) as refused:
        _check(adapter=RoundsState())
    message = str(refused.value)
    assert (
        "obs_transforms[0] round-state fails its check on benchmark camera-line@v1's observation" in message
    )
    assert "labelled lossless" in message


def test_a_transform_that_cannot_run_on_the_observation_is_named():
    class WrongKey(seq.Adapter):
        obs_transforms = [seq.tf.rename("agentview_image", "image")]

    seq.adapter(name="wrong-key")(WrongKey)
    with pytest.raises(seq.SeqInputError, match="obs_transforms\\[0\\] rename.*needs key 'agentview_image'"):
        _check(adapter=WrongKey())


def test_nothing_declared_means_nothing_checked_and_no_env_built():
    @seq.policy(name="takes-anything")
    class TakesAnything(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.zeros(1)

    assert policy_inputs(TakesAnything) is None
    assert _check(TakesAnything) is None and EVENTS == []


def test_a_benchmark_may_give_its_own_sample_observations():
    class Sampled(CameraLineBench):
        def sample_observations(self):
            return [{"image": np.zeros((32, 32, 3), np.uint8), "state": np.zeros(2)}]

    seq.benchmark(name="sampled", conditions=seq.conditions(tasks=["near"]))(Sampled)
    assert _check(benchmark=Sampled) is not None and EVENTS == []


def test_an_array_observation_and_a_gym_observation_space():
    gym = pytest.importorskip("gymnasium")

    class SpacePolicy(ImagePolicy):
        inputs = None
        observation_space = gym.spaces.Dict(
            {"image": gym.spaces.Box(0, 255, (32, 32, 3), np.uint8), "state": gym.spaces.Box(-1, 1, (2,))}
        )

    seq.policy(name="space-policy")(SpacePolicy)
    with pytest.raises(seq.SeqInputError, match="'image' is missing"):
        _check(SpacePolicy)

    class ArrayBench(CameraLineBench):
        def sample_observations(self):
            return [np.zeros(39)]

    seq.benchmark(name="array-bench", conditions=seq.conditions(tasks=["near"]))(ArrayBench)

    class WantsArray(ImagePolicy):
        inputs = (4,)

    seq.policy(name="wants-array")(WantsArray)
    with pytest.raises(seq.SeqInputError, match=r"the observation has shape \(39,\), expected \(4,\)"):
        _check(WantsArray, benchmark=ArrayBench)
    with pytest.raises(seq.SeqInputError, match="not a dict with keys 'image', 'state'"):
        _check(benchmark=ArrayBench)


# -- the eval, end to end (active once `seq.eval.run(adapter=)` is wired) ------------------------
BENCH_AND_POLICY = """
import numpy as np

import seq


class CameraLine:
    def __init__(self, goal):
        self.goal, self.action_space = goal, None

    def _obs(self):
        return {"pixels": np.zeros((64, 64, 3), np.uint8), "state": np.array([self.x, self.goal])}

    def reset(self, seed=None):
        self.x = float(np.random.default_rng(seed).uniform(-1.0, 0.0))
        return self._obs(), {}

    def step(self, action):
        self.x += float(np.clip(np.asarray(action).reshape(-1)[0], -0.1, 0.1))
        return self._obs(), -abs(self.x - self.goal), False, False, {}


@seq.benchmark(name="camera-line", conditions=seq.conditions(tasks=["near"], seeds=range(2)), max_steps=40)
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
    inputs = {"image": ((32, 32, 3), "uint8"), "state": (2,)}

    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None):
        x, goal = obs["state"]
        return np.array([np.clip(goal - x, -0.1, 0.1) / 2])
"""

ADAPTER_FILE = """
import seq


@seq.adapter(name="camera-to-image")
class CameraToImage(seq.Adapter):
    observation_spec = {"pixels": ((64, 64, 3), "uint8"), "state": (2,)}
    action_spec = (1,)

    def __init__(self, *, image_size: int = 32, steps_per_query: int = 1):
        self.obs_transforms = [
            seq.tf.rename("pixels", "image"),
            seq.tf.resize("image", (64, 64), (image_size, image_size),
                          lossy=f"the policy takes {image_size}x{image_size}"),
        ]
        self.action_transforms = [seq.tf.scale(2.0)]
"""

def test_an_eval_is_refused_without_the_adapter_and_runs_with_it(tmp_path):
    from conftest import run_cli

    (tmp_path / "camera.py").write_text(BENCH_AND_POLICY)
    (tmp_path / "camera_to_image.py").write_text(ADAPTER_FILE)
    seq.deploy(tmp_path / "camera.py")
    seq.deploy(tmp_path / "camera_to_image.py")
    store = seq.Store()
    with pytest.raises(seq.SeqInputError, match="'image' is missing") as refused:
        seq.eval.run("image-policy", benchmark="camera-line", envs=1, store=store)
    assert "--adapter" in str(refused.value) and store.evals() == []
    with pytest.raises(seq.SeqInputError, match=r"'image' has shape \(16, 16, 3\)"):
        seq.eval.run(
            "image-policy",
            benchmark="camera-line",
            adapter="camera-to-image",
            params={"adapter.image_size": "16"},
            envs=1,
            store=store,
        )
    report = seq.eval.run("image-policy", benchmark="camera-line", adapter="camera-to-image@v1", envs=1)
    assert report.title == "camera-line@v1 + camera-to-image@v1 + image-policy@v1"
    assert report.metric("success").value == 1.0 and report.metric("success").n == 2
    assert report.manifest.parameters["eval"]["steps_per_query"] == 1  # shared with the adapter
    assert "lossy obs_transforms[1] resize('image', 64x64 → 32x32, bilinear): the policy takes 32x32" in (
        report.to_markdown()
    )
    result = run_cli(
        "eval", "run", "image-policy", "--benchmark", "camera-line", "--adapter", "camera-to-image",
        "--seeds", "0", "--envs", "1",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "camera-line@v1 + camera-to-image@v1 + image-policy@v1" in result.stdout
    refused_cli = run_cli("eval", "run", "image-policy", "--benchmark", "camera-line", "--seeds", "0")
    assert refused_cli.returncode == 2 and "'image' is missing" in refused_cli.stderr
