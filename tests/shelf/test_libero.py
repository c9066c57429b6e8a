"""The built-in LIBERO benchmark and its scripted policy, in LIBERO's own image (built once for the
test run: `SEQ_IMAGES`; the first build downloads ~400 MB). Episodes are few and short: LIBERO
draws its scenes in software here, ~0.2 s a camera image."""

from __future__ import annotations

import json
import subprocess
import textwrap

from conftest import refused_in_one_line, run_cli

import seq
from seq.shelf.libero_tasks import SUITES

SPATIAL_TASK = SUITES["libero_spatial"][2][0]  # the bowl from the table's centre onto the plate
OBJECT_TASK = SUITES["libero_object"][0][0]  # the alphabet soup into the basket


def test_scripted_places_a_bowl_and_a_can_random_does_not():
    report = seq.eval.run(
        "libero-scripted",
        vs="random",
        benchmark="libero",
        suites=["libero_spatial", "libero_object"],
        tasks=[SPATIAL_TASK, OBJECT_TASK],
        seeds=[3],
        max_steps=130,
        vs_params={"obs_mode": "state"},  # no cameras: physics only (libero-scripted asks for it)
        envs=2,
    )
    episodes = {(e.arm.split()[0], e.task): e for e in report.episodes}
    assert len(episodes) == 4 and {e.status for e in report.episodes} == {"ok"}
    for task in (SPATIAL_TASK, OBJECT_TASK):
        scripted, random = episodes["libero-scripted", task], episodes["random", task]
        assert scripted.metrics["success"] == 1.0 and scripted.ended_by == "check"
        assert 40 < scripted.steps < 130
        assert random.metrics["success"] == 0.0 and random.steps == 130


def test_scripted_reaches_a_bowl_far_back_and_slides_a_plate():
    """The bowl on the cabinet, at the far edge of the arm's reach (gripped by the rim facing the
    robot), and libero_goal's plate slid to the front of the stove (a table region, no object)."""
    far_bowl = SUITES["libero_spatial"][9][0]
    plate = SUITES["libero_goal"][5][0]
    report = seq.eval.run(
        "libero-scripted",
        benchmark="libero",
        suites=["libero_spatial", "libero_goal"],
        tasks=[far_bowl, plate],
        seeds=[0],
        envs=2,
    )
    episodes = {e.task: e for e in report.episodes}
    assert set(episodes) == {far_bowl, plate}
    for episode in episodes.values():
        assert episode.metrics["success"] == 1.0 and episode.ended_by == "check", episode


def _in_image(script: str, timeout: float = 900) -> str:
    """Run `script` in the libero image's Python (where LIBERO is); its stdout."""
    from seq.isolation.images import ensure_image
    from seq.shelf.libero import IMAGE

    python = ensure_image(IMAGE).python
    done = subprocess.run(
        [str(python), "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def test_the_published_observation_is_libero_s_own_pixels():
    """seq's faithful path (render context kept across resets, cameras drawn only for the
    observation, np.random replayed per episode) against LIBERO's own env driven as the published
    loop drives it: seeded once, episodes in order; and still so with another env in the process."""
    out = _in_image(
        f"""
        import numpy as np
        from seq.shelf.libero_env import LiberoEnv, configure_libero
        from seq.shelf.libero_scripted import scripted_action

        configure_libero()
        from libero.libero import benchmark
        from libero.libero.envs import OffScreenRenderEnv

        suite = benchmark.get_benchmark_dict()["libero_spatial"]()
        index = suite.get_task_names().index({SPATIAL_TASK!r})
        init = suite.get_task_init_states(index)
        reference = OffScreenRenderEnv(
            bddl_file_name=suite.get_task_bddl_file_path(index), camera_heights=256, camera_widths=256
        )
        reference.seed(7)
        action = [0.4, -0.2, 0.1, 0.0, 0.0, 0.0, 1.0]
        expected = []
        for episode in range(2):
            reference.reset()
            reference.set_init_state(init[episode])
            for _ in range(10):
                raw, _, _, _ = reference.step([0.0] * 6 + [-1.0])
            after, _, _, _ = reference.step(action)
            expected.append((raw, after))
        reference.close()

        env = LiberoEnv("libero_spatial", {SPATIAL_TASK!r})
        for episode in (1, 0):  # out of order: the fixtures' places are replayed all the same
            obs, _ = env.reset(episode)
            after, _, _, _, _ = env.step(np.array(action))
            raw, raw_after = expected[episode]
            expected_keys = ["agentview_image", "controller_pose", "eef_quat", "state", "wrist_image"]
            assert sorted(obs) == expected_keys, sorted(obs)
            for ours, theirs in ((obs, raw), (after, raw_after)):
                assert ours["agentview_image"].shape == (256, 256, 3)
                assert ours["agentview_image"].dtype == np.uint8
                assert np.array_equal(ours["agentview_image"], theirs["agentview_image"][::-1, ::-1])
                assert np.array_equal(ours["wrist_image"], theirs["robot0_eye_in_hand_image"][::-1, ::-1])
                assert ours["state"].shape == (8,)
                assert np.array_equal(ours["state"][:3], theirs["robot0_eef_pos"])
                assert np.array_equal(ours["state"][6:], theirs["robot0_gripper_qpos"])
                assert np.array_equal(ours["eef_quat"], theirs["robot0_eef_quat"])
                assert ours["controller_pose"].shape == (12,)
        # a second env in the process (as a worker's lockstep slots), with an OpenGL context of its
        # own made after the first's: the first still draws its own scene, also once it is closed
        other = LiberoEnv("libero_object", {OBJECT_TASK!r})
        other.reset(0)
        for _ in range(2):
            again, _ = env.reset(0)
            assert np.array_equal(again["agentview_image"], expected[0][0]["agentview_image"][::-1, ::-1])
            other.close()
        env.close()
        fast = LiberoEnv("libero_spatial", {SPATIAL_TASK!r}, fast=True)  # other pixels, same physics
        quick, _ = fast.reset(0)
        fast.close()
        faithful = expected[0][0]["agentview_image"][::-1, ::-1].astype(float)
        psnr = 10 * np.log10(255**2 / np.mean((quick["agentview_image"] - faithful) ** 2))
        assert 24 < psnr < 40, psnr
        assert np.array_equal(quick["state"][6:], expected[0][0]["robot0_gripper_qpos"])
        try:
            scripted_action(obs)
        except ValueError as error:
            assert "obs_mode=state" in str(error), error
        else:
            raise AssertionError("libero-scripted ran without privileged state")
        print("identical")
        """
    )
    assert "identical" in out


def test_scripted_asks_for_privileged_state_and_without_it_is_refused_before_any_episode():
    from seq.isolation.images import ensure_image
    from seq.shelf.libero import IMAGE

    ensure_image(IMAGE)  # built already: only the refusal is printed
    command = ("eval", "run", "libero-scripted", "--benchmark", "libero", "--tasks", SPATIAL_TASK)
    planned = json.loads(run_cli(*command, "--dry-run", "--json").stdout)
    (arm,) = planned["arms"]
    assert arm["parameters"]["benchmark.obs_mode"] == {
        "value": "state",
        "from": "asked by libero-scripted@v1",
    }
    refused_in_one_line(  # a value the eval gives wins over the policy's ask
        run_cli(*command, "--param", "obs_mode=pixels"),
        "libero-scripted",
        "'object_boxes' is missing",
        "'agentview_image' (256, 256, 3)",
    )
