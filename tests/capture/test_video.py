"""Recordings: valid mp4s with the right frame count, from observation images and from MuJoCo."""

from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

import seq

pytest.importorskip("av")

from seq.capture.mp4 import read_video  # noqa: E402
from seq.capture.render import frame_stride  # noqa: E402

PIXELS = textwrap.dedent('''
    """A dot that walks right on a 32×48 picture; `shrink` breaks the picture's size mid-episode."""
    import numpy as np

    import seq


    class DotEnv:
        action_space = None

        def __init__(self, shrink):
            self.shrink = shrink

        def _obs(self):
            h, w = (16, 16) if self.shrink and self.x >= 3 else (32, 48)
            image = np.zeros((h, w, 3), dtype=np.uint8)
            image[:, min(self.x * 4, w - 1)] = 255
            return {"top_image": image, "x": np.array([self.x])}

        def reset(self, seed=None):
            self.x = 0
            return self._obs(), {}

        def step(self, action):
            self.x += 1
            return self._obs(), 0.0, False, False, {}


    @seq.benchmark(
        name="dots",
        conditions=seq.conditions(tasks=["walk", "shrink"], seeds=[0, 1]),
        max_steps=9,
        render=seq.Record(camera="top", fps=5),
    )
    class Dots(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return DotEnv(variant.task == "shrink")

        @seq.check
        def check(self, env):
            return seq.Step(done=False, metrics={"success": float(env.x >= 9)})


    @seq.policy(name="still")
    class Still(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.zeros(1)


    @seq.policy(name="all-still")
    class AllStill(seq.Policy):
        @seq.infer(batched=True)
        def infer(self, obs, *, seed=None, instruction=None):
            return [np.zeros(1) for _ in obs]
''')


@pytest.fixture
def dots(tmp_path: Path) -> str:
    path = tmp_path / "dots_bench.py"
    path.write_text(PIXELS)
    seq.deploy(path)
    return "dots"


def test_a_declared_render_records_each_tasks_first_seed_from_the_observation(dots):
    report = seq.eval.run("still", benchmark=dots, envs=1)
    by_item = {e.item_id: e for e in report.episodes}
    assert [i for i, e in by_item.items() if "video" in e.artifacts] == ["walk|seed=0"]
    meta, frames = read_video(by_item["walk|seed=0"].artifacts["video"])
    assert (meta["size"], meta["fps"], len(frames)) == ((48, 32), 5.0, 10)  # the reset's + 9 steps
    columns = [int(np.argmax(f.mean(axis=(0, 2)))) for f in frames]
    assert columns == sorted(columns) and columns[0] <= 1 and columns[-1] >= 34
    # the shrinking picture cannot be encoded: the recording fails, the episode does not
    shrink = by_item["shrink|seed=0"]
    assert shrink.status == "ok" and "video" not in shrink.artifacts
    assert "recording failed" in shrink.artifacts["observer_errors"]
    assert not any(Path(report.episodes[0].artifacts["video"]).parent.glob("shrink*"))


def test_a_worker_runs_the_next_episode_while_a_video_is_written(dots, monkeypatch):
    import seq.engine.dispatch as local

    announced = []
    ended = local._Worker.ended
    monkeypatch.setattr(
        local._Worker, "ended", lambda worker, item_id: [announced.append(item_id), ended(worker, item_id)]
    )
    for policy, envs_per_worker in (("still", 1), ("all-still", 2)):
        announced.clear()
        report = seq.eval.run(
            policy,
            benchmark=dots,
            envs=1,
            envs_per_worker=envs_per_worker,
            record="all",
            tasks=["walk"],
            seeds=[0, 1, 2],
        )
        # each episode freed its slot when it ended, and was recorded once its video was complete
        assert sorted(announced) == sorted(e.item_id for e in report.episodes)
        for episode in report.episodes:
            meta, frames = read_video(episode.artifacts["video"])
            assert len(frames) == 10 and episode.status == "ok"


def test_record_none_and_all_override_the_declaration(dots):
    none = seq.eval.run("still", benchmark=dots, envs=1, record="none")
    assert not any("video" in e.artifacts for e in none.episodes)
    every = seq.eval.run("still", benchmark=dots, envs=1, record="all", tasks=["walk"])
    assert all("video" in e.artifacts for e in every.episodes) and len(every.episodes) == 2


def test_frame_stride_keeps_videos_at_about_real_time():
    assert frame_stride(80.0, 20) == 4 and frame_stride(None, 20) == 1 and frame_stride(10.0, 30) == 1


metaworld = pytest.mark.skipif(not importlib.util.find_spec("metaworld"), reason="needs the metaworld extra")


@metaworld
def test_record_first_on_metaworld_renders_its_mujoco_scene(tmp_path: Path):
    report = seq.eval.run(
        "metaworld-expert", benchmark="metaworld", tasks=["reach-v3"], seeds=[0, 1], envs=1, record="first"
    )
    recorded = [e for e in report.episodes if "video" in e.artifacts]
    assert [e.seed for e in recorded] == [0] and report.metric("success").value == 1.0
    (episode,) = recorded
    meta, frames = read_video(episode.artifacts["video"])
    assert meta["size"] == (224, 224) and meta["fps"] == 20.0
    assert len(frames) == 1 + episode.steps // 4  # MetaWorld steps at 80 Hz: one frame in 4
    assert frames[0].std() > 10  # a picture, not a blank
    from seq.record.artifacts import export_videos

    (path,) = export_videos(report, tmp_path / "videos")
    assert path.name == "reach-v3_seed0_success.mp4"


CORNER = textwrap.dedent("""
    import seq
    from seq.shelf.metaworld import MetaWorld


    @seq.benchmark(
        name="metaworld-corner",
        conditions=seq.conditions(tasks=["push-v3"], seeds=[2]),
        max_steps=40,
        render=seq.Record(camera="corner2", fps=80, options={"width": 128, "height": 96}),
    )
    class MetaWorldCorner(MetaWorld):
        pass
""")


@metaworld
def test_a_named_camera_every_step_and_the_cli_saves_videos(tmp_path: Path):
    path = tmp_path / "corner_bench.py"
    path.write_text(CORNER)
    seq.deploy(path)
    ran = run_cli(
        "eval",
        "run",
        "noisy-expert",
        "--benchmark",
        "metaworld-corner",
        "--envs",
        "1",
        "--record",
        "all",
        "--json",
    )
    assert ran.returncode == 0, ran.stderr
    eval_id = json.loads(ran.stdout)["eval_id"]
    saved = run_cli("eval", "report", eval_id, "--videos", str(tmp_path / "out"))
    assert saved.returncode == 0, saved.stderr
    (video,) = (tmp_path / "out").glob("*.mp4")
    assert video.name.startswith("push-v3_seed2_")
    meta, frames = read_video(video)
    assert meta["size"] == (128, 96) and len(frames) == 41  # 80 fps at 80 Hz: every step, and the reset


@metaworld
def test_corner_cameras_are_turned_upright():
    from seq.capture.render import MujocoView, mujoco_handles
    from seq.shelf.metaworld import make_env

    env = make_env("reach-v3", 0)
    env.reset(seed=0)
    model, data = mujoco_handles(env)
    assert MujocoView(model, data, "corner2", pool=1).upside_down
    assert not MujocoView(model, data, "behindGripper", pool=1).upside_down
    assert not MujocoView(model, data, None, pool=1).upside_down
    with pytest.raises(ValueError, match="no camera 'nope'"):
        MujocoView(model, data, "nope", pool=1)


def test_a_scene_that_fills_up_is_replaced_by_a_larger_one(tmp_path: Path, monkeypatch):
    mujoco = pytest.importorskip("mujoco")
    monkeypatch.chdir(tmp_path)  # MuJoCo logs the full scene to MUJOCO_LOG.TXT there
    from seq.capture.render import MujocoView

    bodies = "".join(
        f'<body pos="{i % 10 * 0.3} {i // 10 * 0.3} 0.5"><freejoint/><geom size="0.1"/></body>'
        for i in range(60)
    )
    model = mujoco.MjModel.from_xml_string(
        f"<mujoco><worldbody><geom type='plane' size='5 5 .1'/>{bodies}</worldbody></mujoco>"
    )
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    view = MujocoView(model, data, None, pool=2)
    first = view.maxgeom
    view.option.frame = mujoco.mjtFrame.mjFRAME_GEOM  # three arrows a geom: more than the first size
    scene = view.snapshot()
    assert view.maxgeom > first and scene.ngeom >= 4 * 61 and scene.ngeom < scene.maxgeom
    assert view.made == 1  # the scene that was too small is not kept
