"""A benchmark on a raw MjModel of its own, and edited copies of exported scenes, as a user
porting by hand would make them."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path


def heavier(scene: Path, destination: Path, body: str, factor: float) -> Path:
    """A copy of `scene` whose `body` is `factor` times as heavy (mass and inertia)."""
    shutil.copytree(scene, destination)
    path = destination / "scenes" / "s0" / "scene.xml"
    root = ElementTree.parse(path).getroot()
    inertial = next(e for e in root.iter("body") if e.get("name") == body).find("inertial")
    inertial.set("mass", repr(float(inertial.get("mass")) * factor))
    inertia = [float(v) * factor for v in inertial.get("diaginertia").split()]
    inertial.set("diaginertia", " ".join(map(repr, inertia)))
    path.write_text(ElementTree.tostring(root, encoding="unicode"))
    return destination


# a benchmark on a raw MjModel (no gymnasium, no robosuite): it exports in seq's own Python
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
