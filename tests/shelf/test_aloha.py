"""The ALOHA benchmark: image observations, its stage reward as the success signal, a recording."""

from __future__ import annotations

import pytest

import seq

pytest.importorskip("gym_aloha")


def test_random_actions_never_succeed_and_the_episode_is_recorded_from_the_image():
    pytest.importorskip("av")
    from seq.capture.mp4 import read_video

    report = seq.eval.run(
        "random", benchmark="aloha", tasks=["transfer-cube"], seeds=[0], max_steps=10, record="first", envs=1
    )
    (episode,) = report.episodes
    assert episode.status == "ok" and episode.steps == 10 and episode.ended_by == "max_steps"
    assert episode.metrics["success"] == 0.0 and episode.metrics["max_reward"] < 4
    meta, frames = read_video(episode.artifacts["video"])
    assert len(frames) >= 2 and frames[0].ndim == 3
