"""The built-in policy `lerobot`, where torch is not needed: the `pretrained_model` folder it reads
(refused in one sentence when it cannot be loaded offline), the hash that pins it, and the check
that an eval's observation fills the policy's input features before any episode."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import refused_in_one_line, run_cli

from seq.authoring.conditions import Condition
from seq.engine.observation_fit import check_compatibility
from seq.errors import SeqInputError
from seq.shelf.lerobot_checkpoint import input_problems, nest, read_checkpoint
from seq.shelf.lerobot_policy import LeRobotPolicy

PUSHT_FEATURES = {
    "observation.image": {"type": "VISUAL", "shape": [3, 96, 96]},
    "observation.state": {"type": "STATE", "shape": [2]},
}
LIBERO_FEATURES = {
    "observation.images.image": {"type": "VISUAL", "shape": [3, 256, 256]},
    "observation.images.image2": {"type": "VISUAL", "shape": [3, 256, 256]},
    "observation.state": {"type": "STATE", "shape": [8]},
}


def folder(root: Path, features: dict = PUSHT_FEATURES, **config: object) -> Path:
    """A pretrained_model folder as save_pretrained writes it (the weights' bytes are never read here)."""
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({"type": "act", "input_features": features, **config}))
    (root / "model.safetensors").write_bytes(b"weights")
    return root


def pusht_observation() -> dict[str, np.ndarray]:
    return {"pixels": np.zeros((96, 96, 3), np.uint8), "agent_pos": np.zeros(2)}


def test_a_folder_is_read_and_pinned_by_its_content(tmp_path):
    first = read_checkpoint(folder(tmp_path / "a"))
    assert first.policy_type == "act" and not first.has_processors
    assert first.input_features["observation.image"] == ("VISUAL", (3, 96, 96))
    copy = shutil.copytree(tmp_path / "a", tmp_path / "b")
    assert read_checkpoint(copy).sha256 == first.sha256  # the content, wherever it lies
    (copy / "model.safetensors").write_bytes(b"weightz")
    assert read_checkpoint(copy).sha256 != first.sha256
    (copy / "policy_preprocessor.json").write_text("{}")
    (copy / "policy_postprocessor.json").write_text("{}")
    assert read_checkpoint(copy).has_processors


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda root: root / "missing", "no such local folder"),
        (lambda root: root.mkdir() or root, "has no config.json"),
        (lambda root: folder(root, type=None), "names no policy 'type'"),
        (lambda root: folder(root, features={"observation.image": {"type": "VISUAL"}}), "and a shape"),
    ],
)
def test_a_folder_that_cannot_be_loaded_is_refused_in_one_sentence(tmp_path, make, fragment):
    root = make(tmp_path / "checkpoint")
    with pytest.raises(SeqInputError, match=fragment):
        read_checkpoint(root)


def test_hub_weights_the_folder_lacks_are_refused_not_downloaded(tmp_path):
    root = folder(tmp_path / "checkpoint", pretrained_path="lerobot/act_aloha_sim_transfer_cube_human")
    (root / "model.safetensors").unlink()
    with pytest.raises(SeqInputError) as refused:
        read_checkpoint(root)
    message = str(refused.value)
    assert "no model.safetensors" in message and "lerobot/act_aloha_sim_transfer_cube_human" in message
    assert "downloads nothing" in message and "\n" not in message


def test_the_observation_must_fill_every_input_feature(tmp_path):
    pusht = read_checkpoint(folder(tmp_path / "pusht"))
    assert input_problems(pusht, pusht_observation()) == []
    state_only = input_problems(pusht, {"agent_pos": np.zeros(2)})
    assert state_only == ["observation.image needs 'pixels', which is missing"]
    floats = {**pusht_observation(), "pixels": np.zeros((96, 96, 3), np.float32)}
    assert "(H, W, 3) uint8 image" in input_problems(pusht, floats)[0]
    libero = read_checkpoint(folder(tmp_path / "libero", LIBERO_FEATURES))
    image = np.zeros((256, 256, 3), np.uint8)
    given = {"pixels/image": image, "pixels/image2": image, "agent_pos": np.zeros(8)}
    assert input_problems(libero, given) == []
    missing = input_problems(libero, {"pixels/image": image})
    assert missing == [
        "observation.images.image2 needs 'pixels/image2', which is missing",
        "observation.state needs 'agent_pos', which is missing",
    ]


def test_nested_keys_as_lerobots_environments_return_them():
    nested = nest({"pixels/image": 1, "pixels/image2": 2, "agent_pos": 3, "a/b/c": 4})
    assert nested == {"pixels": {"image": 1, "image2": 2}, "agent_pos": 3, "a": {"b": {"c": 4}}}


def test_an_eval_whose_observation_cannot_fill_the_features_is_refused_before_any_episode(tmp_path):
    """Push-T's state observation (5 numbers) cannot fill an image policy: refused, naming the
    features and the keys; its pixels_agent_pos observation can."""
    pytest.importorskip("gym_pusht")
    from seq.shelf.pusht import PushT

    parameters = {"pretrained": str(folder(tmp_path / "pusht")), "device": "cpu"}
    conditions = [Condition(task="push-t", seed=0)]
    with pytest.raises(SeqInputError) as refused:
        check_compatibility(
            PushT,
            "pusht@v1",
            {"obs_type": "state"},
            conditions,
            LeRobotPolicy,
            "lerobot@v1",
            policy_parameters=parameters,
        )
    message = str(refused.value)
    assert message.startswith("policy lerobot@v1 does not take benchmark pusht@v1's observation")
    assert "not a dict of LeRobot's environment keys (for observation.image, observation.state)" in message
    seen = check_compatibility(
        PushT,
        "pusht@v1",
        {"obs_type": "pixels_agent_pos"},
        conditions,
        LeRobotPolicy,
        "lerobot@v1",
        policy_parameters=parameters,
    )
    assert seen is not None and set(seen.policy_input) == {"pixels", "agent_pos"}


def test_aloha_gives_lerobot_s_aloha_observation_where_the_policy_asks_for_it(tmp_path):
    """gym-aloha's `pixels_agent_pos` observation (what LeRobot evaluates its ALOHA policies on)
    fills an ALOHA checkpoint's features; the benchmark's image-only default does not."""
    pytest.importorskip("gym_aloha")
    from seq.shelf.aloha import Aloha

    features = {
        "observation.images.top": {"type": "VISUAL", "shape": [3, 480, 640]},
        "observation.state": {"type": "STATE", "shape": [14]},
    }
    parameters = {"pretrained": str(folder(tmp_path / "aloha", features)), "device": "cpu"}
    conditions = [Condition(task="transfer-cube", seed=0)]
    assert LeRobotPolicy.benchmark_parameters["obs_type"] == "pixels_agent_pos"
    seen = check_compatibility(
        Aloha,
        "aloha@v1",
        {"obs_type": "pixels_agent_pos", "fast_render": False},
        conditions,
        LeRobotPolicy,
        "lerobot@v1",
        policy_parameters=parameters,
    )
    assert seen is not None and seen.policy_input["pixels"]["top"].shape == (480, 640, 3)
    with pytest.raises(SeqInputError, match="observation.images.top needs 'pixels/top', which is missing"):
        check_compatibility(
            Aloha,
            "aloha@v1",
            {"obs_type": "pixels"},
            conditions,
            LeRobotPolicy,
            "lerobot@v1",
            policy_parameters=parameters,
        )


def test_without_lerobot_the_eval_is_refused_naming_the_extra(tmp_path):
    """In a Python without LeRobot and torch (seq's own test environment), one sentence says what
    to install, before any episode."""
    pytest.importorskip("gym_pusht")
    if importlib.util.find_spec("lerobot") is not None:
        pytest.fail("this check needs a Python without LeRobot; seq's test environment has none")
    result = run_cli("eval", "run", "lerobot", "--benchmark", "pusht", "--param", f"pretrained={tmp_path}")
    refused_in_one_line(result, "the built-in policy lerobot needs lerobot, torch", "seq[lerobot]")


def test_for_a_benchmark_in_its_own_image_the_eval_s_python_still_needs_lerobot(tmp_path):
    """LIBERO runs in its image; the checkpoint is still read where the eval runs, which needs
    LeRobot: refused in one sentence before the image is built, not a traceback."""
    if importlib.util.find_spec("lerobot") is not None:
        pytest.fail("this check needs a Python without LeRobot; seq's test environment has none")
    checkpoint = folder(tmp_path / "libero", LIBERO_FEATURES)
    result = run_cli("eval", "run", "lerobot", "--benchmark", "libero", "--param", f"pretrained={checkpoint}")
    refused_in_one_line(result, "needs LeRobot and torch in the Python that runs the eval", "lerobot_venv.sh")
