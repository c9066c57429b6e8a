"""The built-in robosuite benchmark and its scripted controller (one short episode per arm: robosuite
builds an env in seconds). robosuite runs in its own image, built on first use."""

from __future__ import annotations

import pytest

import seq

pytest.importorskip("av")


def test_scripted_lift_succeeds_random_fails_and_a_recording_decodes():
    from seq.capture.mp4 import read_video

    report = seq.eval.run(
        "robosuite-scripted",
        vs="random",
        benchmark="robosuite",
        tasks=["Lift"],
        seeds=[0],
        max_steps=60,
        envs=1,
        record="first",
    )
    by_arm = {e.arm: e for e in report.episodes}
    scripted, random = by_arm["robosuite-scripted"], by_arm["random"]
    assert scripted.metrics["success"] == 1.0 and scripted.ended_by == "check"
    assert random.metrics["success"] == 0.0 and random.steps == 60
    meta, frames = read_video(scripted.artifacts["video"])
    assert meta["fps"] == 20.0 and len(frames) == scripted.steps + 1  # 20 Hz: every step, and the reset
