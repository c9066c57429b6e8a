"""The built-in ManiSkill benchmark and its motion-planning expert (short runs), in ManiSkill's own
image (numpy < 2, torch on the CPU), built once for the test run (`SEQ_IMAGES`). Skipped where the
machine lacks a Vulkan driver new enough for SAPIEN (`bash tools/install_vulkan.sh`; CI runs it)."""

from __future__ import annotations

import shutil
import subprocess
import textwrap

import pytest

import seq


def _vulkan_driver_major() -> int:
    if shutil.which("dpkg-query") is None:
        return 0
    query = ["dpkg-query", "-W", "-f=${Version}", "mesa-vulkan-drivers"]
    version = subprocess.run(query, capture_output=True, text=True).stdout
    return int(version.split(":")[-1].split(".")[0]) if version[:1].isdigit() else 0


pytestmark = pytest.mark.skipif(
    _vulkan_driver_major() < 25,
    reason="SAPIEN needs Mesa 25's Vulkan driver: run `bash tools/install_vulkan.sh` (as root)",
)


def test_the_motion_planner_succeeds_and_random_fails():
    report = seq.eval.run(
        "maniskill-motionplanner",
        vs="random",
        benchmark="maniskill",
        tasks=["PushCube-v1", "PickCube-v1"],
        seeds=[0, 9],
        envs=1,
    )
    episodes = {(e.arm, e.task, e.seed): e for e in report.episodes}
    assert len(episodes) == 8 and {e.status for e in report.episodes} == {"ok"}
    for task, limit in (("PushCube-v1", 100), ("PickCube-v1", 100)):
        for seed in (0, 9):
            expert, random = episodes["maniskill-motionplanner", task, seed], episodes["random", task, seed]
            assert expert.metrics["success"] == 1.0 and expert.ended_by == "check"
            assert 40 < expert.steps < limit
            assert random.metrics["success"] == 0.0 and random.steps == limit
    # PushCube seed 9: ManiSkill's solution fails its second screw plan; the policy plans again from
    # the state it then observes, and that second plan succeeds.
    assert episodes["maniskill-motionplanner", "PushCube-v1", 9].queries == 2
    assert episodes["maniskill-motionplanner", "PushCube-v1", 0].queries == 1


def test_observations_and_a_planned_chunk_replayed_on_a_fresh_env():
    """The policy called directly, in the image's own Python (where ManiSkill is)."""
    from seq.isolation.images import ensure_image
    from seq.shelf.maniskill import IMAGE

    script = textwrap.dedent("""
        import numpy as np
        from seq.shelf.maniskill import ManiSkillEnv, ManiSkillMotionPlanner

        env = ManiSkillEnv("PickCube-v1")
        obs, _ = env.reset(seed=1)
        assert set(obs) == {"state", "env_state"} and obs["state"].dtype == np.float32
        assert obs["state"].ndim == 1 and obs["env_state"].ndim == 1
        policy = ManiSkillMotionPlanner()
        policy.load(None)
        chunk = policy.infer(obs, instruction="PickCube-v1")
        assert chunk.ndim == 2 and chunk.shape[1] == env.action_space.shape[0] == 8
        for action in chunk:
            _, _, terminated, _, info = env.step(action)
            if info["success"]:
                break
        assert info["success"] == 1.0 and terminated
        cases = (
            ({"state": obs["state"]}, "PickCube-v1", "env_state"),
            (obs, "PegInsertionSide-v1", "knows the tasks"),
        )
        for bad, task, expected in cases:
            try:
                policy.infer(bad, instruction=task)
            except ValueError as error:
                assert expected in str(error), error
            else:
                raise AssertionError(f"no ValueError about {expected}")
        env.close()
        print("checked")
    """)
    python = ensure_image(IMAGE).python
    result = subprocess.run([str(python), "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and "checked" in result.stdout, result.stderr[-3000:]


def test_a_recording_of_the_human_camera():
    pytest.importorskip("av")
    from seq.capture.mp4 import read_video

    report = seq.eval.run(
        "maniskill-motionplanner",
        benchmark="maniskill",
        tasks=["PickCube-v1"],
        seeds=[2],
        envs=1,
        record="first",
        params={"render_size": 128},
    )
    (episode,) = report.episodes
    assert episode.metrics["success"] == 1.0, episode.artifacts.get("observer_errors")
    meta, frames = read_video(episode.artifacts["video"])
    assert meta["fps"] == 20.0 and meta["size"] == (128, 128)
    assert len(frames) == episode.steps + 1  # 20 Hz: every step, and the reset
    assert frames[-1].std() > 10
