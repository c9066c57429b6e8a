"""A benchmark on a raw MjModel of its own (no gymnasium, no robosuite), named as FILE:Class:
export, check-model clean (exit 0), and a replay that agrees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

BALL = '''
import mujoco
import numpy as np

import seq

XML = """
<mujoco>
  <option ccd_iterations="50"/>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="ball" pos="0 0 0.2">
      <freejoint name="ball_free"/>
      <geom name="ball" type="sphere" size="0.05" mass="0.1"/>
    </body>
  </worldbody>
</mujoco>
"""


class BallEnv:
    def __init__(self):
        self.model = mujoco.MjModel.from_xml_string(XML)
        self.data = mujoco.MjData(self.model)

    def reset(self, seed=None):
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[:2] = np.random.default_rng(seed).uniform(-0.3, 0.3, 2)
        mujoco.mj_forward(self.model, self.data)
        return self.data.qpos.copy(), {}

    def step(self, action):
        mujoco.mj_step(self.model, self.data)
        return self.data.qpos.copy(), 0.0, False, False, {}


@seq.benchmark(name="ball", conditions=seq.conditions(tasks=["drop"], seeds=range(3)), max_steps=10)
class Ball(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return BallEnv()

    @seq.check
    def check(self, env):
        return seq.Step(done=False, metrics={})
'''


@pytest.fixture
def workspace(shared_images: Path, tmp_path: Path) -> dict[str, str]:
    return {"SEQ_HOME": str(tmp_path / "home"), "SEQ_IMAGES": str(shared_images)}


def test_a_raw_mujoco_benchmark_ports_clean(tmp_path: Path, workspace: dict[str, str]) -> None:
    source = tmp_path / "ball_bench.py"
    source.write_text(BALL)
    out = tmp_path / "scene"
    exported = run_cli("benchmark", "export", f"{source}:Ball", "--out", str(out), "--steps", "100",
                       env=workspace)
    assert exported.returncode == 0, exported.stderr
    assert "drop: seeds change ball_free" in exported.stdout
    assert json.loads((out / "export.json").read_text())["varies"]["drop"]["joints"] == ["ball_free"]
    checked = run_cli("benchmark", "check-model", str(out), env=workspace, timeout=900)
    assert checked.returncode == 0, checked.stdout + checked.stderr  # the scene pins ccd_iterations
    assert "clean" in checked.stdout
    replay = run_cli("benchmark", "compare", "--replay", str(out), "--json", env=workspace, timeout=900)
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert [start["port"] for start in json.loads(replay.stdout)["starts"]] == [None, None, None]
