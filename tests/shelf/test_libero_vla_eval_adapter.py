"""`libero-to-vla-eval`, usable by name: what it sends from seq's LIBERO observation is what
vla-eval's LIBERO benchmark (`LIBEROBenchmark.make_obs`, vla-eval 0.8.0, run here on the robosuite
observation seq's is made from) sends, array for array and byte for byte, in each of its state
options; its episode start and action are vla-eval's. The simulator itself is in
`test_libero_vla_eval.py`."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from vla_eval.benchmarks.libero.benchmark import LIBEROBenchmark

from seq.authoring.begin import EpisodeStart
from seq.errors import SeqInputError
from seq.record.store import Store
from seq.registry.adapters import load_adapter, resolve_adapter
from seq.registry.deploy import deploy


def _quaternion(rng: np.random.Generator) -> np.ndarray:
    quat = rng.normal(size=4)
    return quat / np.linalg.norm(quat)


def _rotation(quat: np.ndarray) -> np.ndarray:
    x, y, z, w = quat
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def _robosuite_and_seq(rng: np.random.Generator, quat: np.ndarray) -> tuple[dict, dict, SimpleNamespace]:
    """A robosuite observation and its controller, and seq's `libero` observation of them."""
    raw = {
        "agentview_image": rng.integers(0, 256, (256, 256, 3), dtype=np.uint8),
        "robot0_eye_in_hand_image": rng.integers(0, 256, (256, 256, 3), dtype=np.uint8),
        "robot0_eef_pos": rng.normal(size=3),
        "robot0_eef_quat": quat,
        "robot0_gripper_qpos": rng.normal(size=2) * 0.04,
    }
    controller = SimpleNamespace(ee_pos=rng.normal(size=3), ee_ori_mat=_rotation(_quaternion(rng)))
    ours = {
        "agentview_image": np.ascontiguousarray(raw["agentview_image"][::-1, ::-1]),
        "wrist_image": np.ascontiguousarray(raw["robot0_eye_in_hand_image"][::-1, ::-1]),
        "state": np.concatenate([raw["robot0_eef_pos"], rng.normal(size=3), raw["robot0_gripper_qpos"]]),
        "eef_quat": quat,
        "controller_pose": np.concatenate([controller.ee_pos, controller.ee_ori_mat.ravel()]),
    }
    return raw, ours, controller


def _same(ours: object, theirs: object, where: str = "") -> None:
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and sorted(ours) == sorted(theirs), where
        for key in theirs:
            _same(ours[key], theirs[key], f"{where}/{key}")
    elif isinstance(theirs, np.ndarray):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, where
        assert ours.tobytes() == theirs.tobytes(), where
    else:
        assert ours == theirs, where


@pytest.mark.parametrize("quat_no_antipodal", [False, True])
def test_each_observation_is_vla_eval_s_byte_for_byte(tmp_path, quat_no_antipodal):
    row = resolve_adapter("libero-to-vla-eval", Store(tmp_path / "seq.db"))  # no deploy step
    adapter = load_adapter(row.ref, {"quat_no_antipodal": quat_no_antipodal})
    theirs_benchmark = LIBEROBenchmark(
        send_wrist_image=True, send_state=True, quat_no_antipodal=quat_no_antipodal
    )
    rng = np.random.default_rng(0)
    quaternions = [_quaternion(rng) for _ in range(200)]
    quaternions += [np.array([0.0, 0.0, 0.0, 1.0]), np.array([0.0, 0.0, 0.0, -1.0]), np.array([1.0, 0, 0, 0])]
    for quat in quaternions:
        raw, ours, controller = _robosuite_and_seq(rng, quat)
        theirs_benchmark._env = SimpleNamespace(robots=[SimpleNamespace(controller=controller)])
        theirs = theirs_benchmark.make_obs(raw, {"name": "pick up the bowl"})
        sent = adapter.transform_obs({**ours, "task_description": "pick up the bowl"})
        _same(sent, theirs)
        assert sent["states"].dtype == np.float64 and sent["controller_states"].dtype == np.float32


def test_its_options_episode_and_action_are_vla_eval_s(tmp_path):
    store = Store(tmp_path / "seq.db")
    row = resolve_adapter("libero-to-vla-eval", store)
    assert row.declared["is_lossy"] and resolve_adapter("libero-to-vla-eval", store).label == row.label
    lossy = {entry["where"] for entry in row.declared["lossy"]}
    assert lossy == {"obs_transforms[0]", "action_transforms[0]", "episode_transforms[0]"}
    rng = np.random.default_rng(1)
    raw, ours, _ = _robosuite_and_seq(rng, _quaternion(rng))
    bare = load_adapter(row.ref, {"send_wrist_image": False, "send_state": False}).transform_obs(ours)
    assert sorted(bare) == ["images"] and sorted(bare["images"]) == ["agentview"]
    adapter = load_adapter(row.ref, {})
    episode = adapter.transform_episode(
        EpisodeStart("KITCHEN_bowl", "libero_spatial", "pick up the bowl", 4, 7)
    )
    assert (episode.task, episode.task_index, episode.seed) == ("pick up the bowl", 7, 4)
    chunk = np.array([[0.1, 0, 0, 0, 0, 0, -0.2], [0.1, 0, 0, 0, 0, 0, 0.0], [0, 0, 0, 0, 0, 0, 0.7]])
    assert adapter.transform_chunk(chunk)[:, -1].tolist() == [-1.0, 1.0, 1.0]
    kept = load_adapter(row.ref, {"discretize_gripper": False}).transform_chunk(chunk)
    assert np.array_equal(kept, chunk)


def test_built_in_adapters_resolve_by_name_and_keep_their_names(tmp_path):
    store = Store(tmp_path / "seq.db")
    for name in ("libero-to-openpi", "libero-to-lerobot"):
        assert resolve_adapter(name, store).name == name
    (tmp_path / "mine.py").write_text(
        "import seq\n\n\n@seq.adapter(name='libero-to-vla-eval')\nclass Mine(seq.Adapter):\n    pass\n"
    )
    with pytest.raises(SeqInputError, match="built-in adapter"):
        deploy(tmp_path / "mine.py", store)
