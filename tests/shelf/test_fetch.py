"""The built-in Fetch benchmark and its scripted controller (short runs; skipped without the extra)."""

from __future__ import annotations

import pytest

import seq

pytest.importorskip("gymnasium_robotics")


def test_the_scripted_controller_succeeds_and_random_fails():
    report = seq.eval.run(
        "fetch-scripted", benchmark="fetch", tasks=["reach", "pick-and-place"], seeds=[0, 1], envs=2
    )
    assert report.metric("success").value == 1.0
    assert {e.ended_by for e in report.episodes} == {"check"}
    random = seq.eval.run("random", benchmark="fetch", tasks=["pick-and-place"], seeds=[0, 1], envs=1)
    assert random.metric("success").value == 0.0
    assert {e.steps for e in random.episodes} == {50}


def test_push_and_a_recording():
    pytest.importorskip("av")
    from seq.capture.mp4 import read_video

    report = seq.eval.run(
        "fetch-scripted", benchmark="fetch", tasks=["push"], seeds=[1], envs=1, record="first"
    )
    (episode,) = report.episodes
    assert episode.metrics["success"] == 1.0
    meta, frames = read_video(episode.artifacts["video"])
    assert meta["fps"] == 25.0 and len(frames) == episode.steps + 1  # 25 Hz: every step, and the reset
    assert frames[-1].std() > 10
