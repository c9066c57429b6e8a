"""Trajectories: every step as gzip JSONL, exact enough to replay an episode (MetaWorld)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import seq
from seq.authoring.conditions import Condition
from seq.capture.trajectory import TrajectoryWriter, plain, read_trajectory
from seq.record.episode import EpisodeResult
from seq.record.store import WorkItem


def test_images_are_left_out_unless_asked_and_values_read_back_exactly(tmp_path: Path):
    obs = {
        "agentview_image": np.zeros((4, 4, 3), np.uint8),
        "state": np.array([0.1, 1 / 3], np.float32),
        "mask": np.ones((2, 2), np.uint8),
        "depth": np.zeros((4, 4), np.float32),
    }
    assert plain(obs) == {
        "agentview_image": {"skipped_image": [4, 4, 3]},
        "state": [np.float32(0.1).item(), np.float32(1 / 3).item()],
        "mask": {"skipped_image": [2, 2]},
        "depth": {"skipped_image": [4, 4]},
    }
    assert plain(obs, images=True)["agentview_image"] == np.zeros((4, 4, 3)).tolist()
    item = WorkItem("t|seed=5", 0, Condition("t", 5), 0)
    writer = TrajectoryWriter(tmp_path, images=False)
    writer.begin(item, None, obs)
    writer.step(None, obs, np.array([0.5, -1.0], np.float32), 1.5, 42)
    writer.step(None, obs, np.array([0.25, 0.0], np.float32), float("nan"), 43)
    artifacts = writer.end(item.result(steps=2, ended_by="max_steps"))
    trajectory = read_trajectory(artifacts["trajectory"])
    assert trajectory.header["item_id"] == "t|seed=5" and trajectory.header["seed"] == 5
    assert len(trajectory.observations) == 3 and trajectory.act_seeds == [42, 43]
    assert np.array_equal(np.asarray(trajectory.observations[2]["state"], np.float32), obs["state"])
    assert trajectory.actions[1] == [0.25, 0.0] and trajectory.rewards[0] == 1.5
    assert trajectory.end == {"status": "ok", "steps": 2, "ended_by": "max_steps"}
    assert writer.end(EpisodeResult("x", "t", 0)) == {}  # nothing begun, nothing written


@pytest.mark.skipif(not importlib.util.find_spec("metaworld"), reason="needs the metaworld extra")
def test_metaworld_trajectories_replay_from_their_seed(tmp_path: Path):
    from seq.record.artifacts import export_trajectories
    from seq.shelf.metaworld import make_env

    report = seq.eval.run(
        "noisy-expert",
        benchmark="metaworld",
        tasks=["push-v3"],
        seeds=[0, 7],
        max_steps=40,
        params={"noise": "0.3"},
        trajectories=True,
        envs=1,
    )
    written = export_trajectories(report, tmp_path / "out")
    assert len(written) == 2 and all(p.name.endswith(".jsonl.gz") for p in written)
    for episode in report.episodes:
        trajectory = read_trajectory(episode.artifacts["trajectory"])
        assert trajectory.header["seed"] == episode.seed and len(trajectory.actions) == episode.steps
        env = make_env(episode.task, episode.seed)  # a fresh env, as a user replaying would build
        obs, _ = env.reset(seed=episode.seed)
        assert np.array_equal(obs, np.asarray(trajectory.observations[0]))
        for action, recorded in zip(trajectory.actions, trajectory.observations[1:], strict=True):
            obs = env.step(np.asarray(action, dtype=np.float32))[0]
            assert np.array_equal(obs, np.asarray(recorded))
