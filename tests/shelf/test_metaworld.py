"""The built-in MetaWorld benchmark and policies, and a user benchmark over MetaWorld (short runs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

import seq

pytest.importorskip("metaworld")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "metaworld_custom.py"


def test_expert_solves_mt10_tasks_and_noise_lowers_success():
    expert = seq.eval.run(
        "metaworld-expert", benchmark="metaworld", tasks=["reach-v3", "push-v3"], seeds=[0, 1], envs=2
    )
    assert expert.metric("success").value == 1.0
    assert {e.ended_by for e in expert.episodes} == {"check"}
    noisy = seq.eval.run(
        "noisy-expert",
        benchmark="metaworld",
        tasks=["push-v3"],
        seeds=[0, 1],
        envs=2,
        max_steps=60,
        params={"noise": "1.0"},
    )
    assert noisy.metric("success").value < 1.0
    assert noisy.manifest.parameters["policy"] == {"noise": 1.0}
    assert noisy.manifest.environment.packages["metaworld"] == "3.1.1"


def test_random_policy_uses_the_action_space_and_replays_exactly():
    first = seq.eval.run("random", benchmark="metaworld", tasks=["reach-v3"], seeds=[3], max_steps=20, envs=1)
    second = seq.eval.run(
        "random", benchmark="metaworld", tasks=["reach-v3"], seeds=[3], max_steps=20, envs=1
    )
    (a,), (b,) = first.episodes, second.episodes
    assert a.status == "ok" and a.steps == 20 and a.ended_by in {"max_steps", "env"}
    assert a.metrics["return"] == b.metrics["return"]


def test_mt50_suite_is_selectable():
    from seq.authoring.benchmark import spec_of
    from seq.shelf.metaworld import MetaWorld

    spec = spec_of(MetaWorld)
    assert list(spec.suites) == ["mt10", "mt50"]
    assert len({c.task for c in spec.suites["mt50"]}) == 50
    assert all(c.suite == "mt10" for c in spec.suites["mt10"])


def test_a_user_benchmark_in_the_documented_style_deploys_and_runs():
    deployed = run_cli("deploy", str(EXAMPLE))
    assert deployed.returncode == 0, deployed.stderr
    assert "metaworld-custom@v1" in deployed.stdout
    result = run_cli(
        "eval", "run", "metaworld-expert", "--benchmark", "metaworld-custom", "--envs", "2", "--json"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    groups = {(g["kind"], g["name"]): {m["name"]: m for m in g["metrics"]} for g in report["groups"]}
    assert {name for kind, name in groups if kind == "suite"} == {"reaching", "pushing", "articulated"}
    assert {name for kind, name in groups if kind == "task"} == {
        "reach-v3",
        "push-v3",
        "drawer-close-v3",
        "window-open-v3",
    }
    for metrics in groups.values():
        assert metrics["fast_success"]["source"] == "score"
        assert metrics["success"]["method"] == "wilson"
    assert groups[("overall", "all")]["success"]["value"] >= 0.75


def test_a_noisier_expert_loses_and_the_sequential_test_stops_early():
    report = seq.eval.run(
        "noisy-expert",
        benchmark="metaworld",
        params={"noise": "0.0"},
        vs="noisy-expert",
        vs_params={"noise": "1.5"},
        tasks=["push-v3", "pick-place-v3"],
        max_steps=150,
        trials=6,
        sequential=True,
        envs=2,
    )
    assert report.sequential.decision == "A better"
    assert report.sequential.pairs_used < report.sequential.pairs_planned


def test_the_expert_against_itself_is_within_threshold_once_enough_pairs_agree():
    report = seq.eval.run(
        "metaworld-expert",
        benchmark="metaworld",
        vs="metaworld-expert",
        tasks=["reach-v3", "push-v3"],
        seeds=list(range(40)),
        envs=2,
    )
    comparison = report.comparison("success")
    # 73 agreeing conditions or more: repeated trials of one condition would not count as new pairs
    assert comparison.n == 80 and comparison.verdict == "within threshold"


def test_ray_gives_the_same_rows_as_local_processes():
    pytest.importorskip("ray")
    import ray

    kwargs = dict(benchmark="metaworld", tasks=["reach-v3", "drawer-close-v3"], seeds=[0, 1], envs=2)
    local = seq.eval.run("noisy-expert", **kwargs)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = seq.eval.run("noisy-expert", engine="ray", **kwargs)
    finally:
        ray.shutdown()

    def rows(report):
        return [(e.item_id, e.steps, e.metrics["success"], e.metrics["return"]) for e in report.episodes]

    assert rows(on_ray) == rows(local)


def test_a_noise_sweep_lowers_success_arm_by_arm_on_the_same_episodes():
    report = seq.eval.run(
        "noisy-expert",
        benchmark="metaworld",
        tasks=["push-v3", "pick-place-v3"],
        seeds=[0, 1, 2],
        max_steps=150,
        sweep={"policy.noise": ["0.0", "1.0", "3.0"]},
        envs=2,
    )
    assert report.arms == ["noise=0.0", "noise=1.0", "noise=3.0"]
    rates = [report.metric("success", arm=arm).value for arm in report.arms]
    assert rates[0] > rates[2] and rates[0] >= rates[1] >= rates[2]
    assert report.comparison("success", arm="noise=3.0").difference.difference < 0


@pytest.mark.parametrize("task", ["door-open-v3", "drawer-close-v3"])
@pytest.mark.parametrize("extra", [{"distractor_along": 0.5}, {"distractor_dx": 0.04, "distractor_dy": 0.06}])
def test_a_distractor_starts_on_the_table_not_inside_a_fixture(task, extra):
    """These tasks' random vectors hold the door's or drawer's place, not a goal: the distractor
    asked for there would start inside it and be thrown out; it goes to the nearest free spot."""
    import numpy as np

    from seq.shelf.metaworld import make_env
    from seq.shelf.metaworld_variants import apply_variant

    extra = {"distractor": "box", **extra}
    env = make_env(task, 0, {}, 50, "box")
    apply_variant(env, extra)
    env.reset(seed=0)
    model, data = env.unwrapped.model, env.unwrapped.data
    body = model.body("seq_distractor").id
    depths = [
        c.dist
        for c in data.contact[: data.ncon]
        if body in (model.geom_bodyid[c.geom1], model.geom_bodyid[c.geom2])
    ]
    assert min(depths, default=0.0) > -0.002, f"starts {-min(depths) * 1000:.0f} mm inside another body"
    start = data.xpos[body].copy()
    for _ in range(10):
        env.step(np.zeros(4))
    assert np.linalg.norm(data.xpos[body] - start) < 0.01, "it was thrown or fell"


def test_obs_mode_pixels_adds_the_corner2_camera_and_leaves_the_episode_alone():
    """`obs_mode=pixels`: the same state, steps and return as the default observation, beside an
    upright 480² image of the corner2 camera that follows the arm."""
    import numpy as np

    from seq.shelf.metaworld import _Experts

    experts = _Experts()
    seen: list = []

    def expert(obs, instruction=None):
        seen.append(obs)
        return experts.action(obs["state"] if isinstance(obs, dict) else obs, instruction)

    options = {"tasks": ["reach-v3", "push-v3"], "seeds": [1], "max_steps": 20, "envs": 1}
    state = seq.evaluate(expert, "metaworld", **options)
    states = [np.asarray(obs) for obs in seen]
    seen.clear()
    pixels = seq.evaluate(expert, "metaworld", params={"obs_mode": "pixels"}, **options)
    assert pixels.manifest.parameters["benchmark"] == {"obs_mode": "pixels"}
    for ours, theirs in zip(pixels.episodes, state.episodes, strict=True):
        assert ours.status == theirs.status == "ok"
        assert (ours.task, ours.steps) == (theirs.task, theirs.steps)
        assert ours.metrics["return"] == theirs.metrics["return"]
    assert len(seen) == len(states) == 40
    assert all(np.array_equal(obs["state"], array) for obs, array in zip(seen, states, strict=True))
    images = [obs["corner2_image"] for obs in seen]
    assert all(image.shape == (480, 480, 3) and image.dtype == np.uint8 for image in images)
    assert not np.array_equal(images[0], images[19])  # the arm moved in view


def test_the_pixels_camera_is_upright_as_seq_draws_corner2():
    """The image turned as seq's own recorder turns a camera that looks upside down; and the camera
    stands where LeRobot's MetaWorld environment puts it, not at MetaWorld's own corner2."""
    import mujoco
    import numpy as np

    from seq.capture.render import frame
    from seq.shelf.metaworld import LEROBOT_CORNER2, make_env

    env = make_env("push-v3", 0, {}, 50, obs_mode="pixels")
    obs, _ = env.reset(seed=0)
    drawn = frame(env, "corner2", 480, 480, fast=False).astype(float)
    image = obs["corner2_image"].astype(float)
    assert np.abs(image - drawn).mean() < 0.25 * np.abs(image - drawn[::-1, ::-1]).mean()
    model = env.unwrapped.model
    camera = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, "corner2")
    assert model.cam_pos[camera].tolist() == list(LEROBOT_CORNER2)
    assert make_env("push-v3", 0, {}, 50).unwrapped.model.cam_pos[camera].tolist() == [1.3, -0.2, 1.1]


def test_an_episodes_first_image_does_not_depend_on_the_episode_before_it():
    """MetaWorld's reset leaves the goal's marker where the last episode put it; the first image
    is drawn from the reset state all the same, whatever ran before on that env."""
    import numpy as np

    from seq.shelf.metaworld import make_env

    envs: dict = {}
    first = make_env("push-v3", 3, envs, 50, obs_mode="pixels").reset(seed=3)[0]["corner2_image"]
    env = make_env("push-v3", 7, envs, 50, obs_mode="pixels")
    env.reset(seed=7)
    for _ in range(5):
        env.step(np.ones(4, dtype=np.float32))
    again = make_env("push-v3", 3, envs, 50, obs_mode="pixels").reset(seed=3)[0]["corner2_image"]
    assert np.array_equal(first, again)
