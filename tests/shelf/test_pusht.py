"""The built-in Push-T benchmark and its scripted pusher (short runs; skipped without the extra)."""

from __future__ import annotations

import pytest

import seq

pytest.importorskip("gym_pusht")


def test_success_where_the_block_starts_on_its_goal_and_coverage_is_continuous():
    solved = seq.eval.run("pusht-pusher", benchmark="pusht", suites=["at-goal"], seeds=[0, 1], envs=1)
    assert solved.metric("success").value == 1.0 and solved.metric("coverage").value > 0.95
    assert {(e.steps, e.ended_by) for e in solved.episodes} == {(1, "check")}
    report = seq.eval.run("random", benchmark="pusht", seeds=[0, 1], max_steps=25, envs=1)
    assert report.metric("success").value == 0.0
    assert report.metric("coverage").n == 2
    assert all(0.0 <= e.metrics["coverage"] < 0.95 for e in report.episodes)


def test_success_and_coverage_are_the_envs_own_on_a_replay():
    """The recorded metrics are what gym-pusht itself says at the episode's last step: replaying the
    recorded actions in a fresh env gives the same coverage and success (not a constant)."""
    import numpy as np

    from seq.capture.trajectory import read_trajectory
    from seq.shelf.pusht import make_env

    report = seq.eval.run(
        "pusht-pusher", benchmark="pusht", seeds=[2, 3], max_steps=150, envs=1, trajectories=True
    )
    replayed = []
    for episode in report.episodes:
        env = make_env()
        env.reset(seed=episode.seed)
        for action in read_trajectory(episode.artifacts["trajectory"]).actions:
            env.step(np.asarray(action))
        assert episode.metrics["coverage"] == float(env.info["coverage"])
        assert episode.metrics["success"] == float(bool(env.info["is_success"]))
        replayed.append(episode.metrics["coverage"])
    assert len(set(replayed)) == 2 and min(replayed) > 0  # two starts, two coverages the pusher made


def test_the_pusher_moves_the_block_onto_the_goal():
    from seq.shelf.pusht import GOAL, make_env, push_action

    env = make_env()
    obs, _ = env.reset(seed=6)
    start = float(((obs[2:4] - GOAL) ** 2).sum() ** 0.5)
    for _ in range(200):
        obs = env.step(push_action(obs))[0]
    assert float(((obs[2:4] - GOAL) ** 2).sum() ** 0.5) < start / 4
    assert env.info["coverage"] > 0.05


def test_pixel_observations_and_a_recording():
    pytest.importorskip("av")
    from seq.capture.mp4 import read_video

    report = seq.eval.run(
        "random",
        benchmark="pusht",
        seeds=[3],
        max_steps=12,
        params={"obs_type": "pixels_agent_pos"},
        record="first",
        trajectories=True,
        envs=1,
    )
    (episode,) = report.episodes
    assert episode.status == "ok" and episode.steps == 12
    meta, frames = read_video(episode.artifacts["video"])
    assert meta["size"] == (96, 96) and meta["fps"] == 10.0 and len(frames) == 13  # 10 Hz: every step
    from seq.capture.trajectory import read_trajectory

    first = read_trajectory(episode.artifacts["trajectory"]).observations[0]
    assert first["pixels"] == {"skipped_image": [96, 96, 3]} and len(first["agent_pos"]) == 2
