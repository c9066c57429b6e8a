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


# a puck pushed by two motors across a floor (raw MjModel, exports in seq's own Python): a scene
# with actuators, small enough for Warp's CPU device to step a few worlds in a test
PUCK = '''
import mujoco
import numpy as np

import seq

XML = """
<mujoco>
  <option ccd_iterations="50" timestep="0.01"/>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="puck" pos="0 0 0.05">
      <joint name="x" type="slide" axis="1 0 0" damping="0.5"/>
      <joint name="y" type="slide" axis="0 1 0" damping="0.5"/>
      <geom name="puck" type="sphere" size="0.05" mass="0.1"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="push_x" joint="x" ctrlrange="-1 1"/>
    <motor name="push_y" joint="y" ctrlrange="-1 1"/>
  </actuator>
</mujoco>
"""


class PuckEnv:
    def __init__(self):
        self.model = mujoco.MjModel.from_xml_string(XML)
        self.data = mujoco.MjData(self.model)

    def reset(self, seed=None):
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[:] = np.random.default_rng(seed).uniform(-0.3, 0.3, 2)
        mujoco.mj_forward(self.model, self.data)
        return self.data.qpos.copy(), {}

    def step(self, action):
        self.data.ctrl[:] = action
        mujoco.mj_step(self.model, self.data)
        return self.data.qpos.copy(), 0.0, False, False, {}


@seq.benchmark(name="puck", conditions=seq.conditions(tasks=["centre"], seeds=range(3)), max_steps=10)
class Puck(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return PuckEnv()

    @seq.check
    def check(self, env):
        return seq.Step(done=False, metrics={})
'''

# a deterministic batched policy for a scaffolded puck: push towards the centre
CENTRING = '''
import numpy as np

import seq


@seq.policy(name="centring")
class Centring(seq.Policy):
    @seq.infer(batched=True)
    def infer(self, obs, *, seed=None, instruction=None):
        return [np.clip(-20.0 * o["qpos"][:2] - 2.0 * o["qvel"][:2], -1.0, 1.0) for o in obs]
'''


# sixteen boxes that the model's own pose piles up at the origin (hundreds of contacts, as
# LIBERO's objects are before its reset places them) and each start spreads apart in the air
PILE = '''
import mujoco
import numpy as np

import seq

BOXES = "".join(
    f'<body name="box{i}"><freejoint/><geom type="box" size="0.02 0.02 0.02" mass="0.05"/></body>'
    for i in range(16)
)
XML = f"""
<mujoco>
  <option ccd_iterations="50"/>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    {BOXES}
  </worldbody>
</mujoco>
"""


class PileEnv:
    def __init__(self):
        self.model = mujoco.MjModel.from_xml_string(XML)
        self.data = mujoco.MjData(self.model)

    def reset(self, seed=None):
        mujoco.mj_resetData(self.model, self.data)
        jitter = np.random.default_rng(seed).uniform(-0.01, 0.01, (16, 2))
        for i in range(16):
            x, y = 0.1 * (i % 4) + jitter[i, 0], 0.1 * (i // 4) + jitter[i, 1]
            self.data.qpos[7 * i: 7 * i + 3] = [x, y, 0.2]
        mujoco.mj_forward(self.model, self.data)
        return self.data.qpos.copy(), {}

    def step(self, action):
        mujoco.mj_step(self.model, self.data)
        return self.data.qpos.copy(), 0.0, False, False, {}


@seq.benchmark(name="pile", conditions=seq.conditions(tasks=["spread"], seeds=range(2)), max_steps=10)
class Pile(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return PileEnv()

    @seq.check
    def check(self, env):
        return seq.Step(done=False, metrics={})
'''


# a ball resting on a ledge welded to the world, which the reset moves per seed (as LIBERO places
# its cabinet): the ledge's geom must move with its body in every world, or the ball falls
LEDGE = '''
import mujoco
import numpy as np

import seq

XML = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="ledge" pos="0 0 0.5">
      <geom name="ledge" type="box" size="0.1 0.1 0.02"/>
    </body>
    <body name="ball" pos="0 0 0.57">
      <freejoint name="ball_free"/>
      <geom name="ball" type="sphere" size="0.05" mass="0.1"/>
    </body>
  </worldbody>
</mujoco>
"""


class LedgeEnv:
    def __init__(self):
        self.model = mujoco.MjModel.from_xml_string(XML)
        self.data = mujoco.MjData(self.model)

    def reset(self, seed=None):
        mujoco.mj_resetData(self.model, self.data)
        shift = 0.5 * (seed or 0)
        self.model.body_pos[self.model.body("ledge").id, 0] = shift
        self.data.qpos[0] = shift
        mujoco.mj_forward(self.model, self.data)
        return self.data.qpos.copy(), {}

    def step(self, action):
        mujoco.mj_step(self.model, self.data)
        return self.data.qpos.copy(), 0.0, False, False, {}


@seq.benchmark(name="ledge", conditions=seq.conditions(tasks=["rest"], seeds=range(3)), max_steps=10)
class Ledge(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return LedgeEnv()

    @seq.check
    def check(self, env):
        return seq.Step(done=False, metrics={})
'''
