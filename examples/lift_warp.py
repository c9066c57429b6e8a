"""lift-warp: robosuite's Lift (Panda, its default OSC_POSE controller, 20 Hz) on MuJoCo Warp.

The scaffold of `seq benchmark convert robosuite --tasks Lift --seeds 0-9 --name lift-warp`, completed:
the controller is robosuite 1.5.2's, recomputed at each of the 25 physics steps of a control
step (`robosuite/controllers/parts/arm/osc.py`: position and orientation goals from the pose the
arm has reached plus the action's deltas, uncoupled through the operational-space inertias,
nullspace torques towards the start's joints, gravity and Coriolis compensated), the gripper is
robosuite's GRIP controller, the observation holds what `robosuite-scripted` reads
(`robot0_eef_pos`, `robot0_gripper_qpos`, `cube_pos`), and success is robosuite's: the cube more
than 4 cm above the table. The Jacobians and mass matrix are taken on the host (classic MuJoCo, on
each world's state) while MuJoCo Warp steps every world at once.

    seq benchmark export robosuite --tasks Lift --seeds 0-9 -o lift/
    mkdir volume && cp -r lift volume/scene && seq volume put lift-warp-scene volume --kind dataset
    seq deploy examples/lift_warp.py
    seq benchmark compare robosuite lift-warp --policy robosuite-scripted --tasks Lift \\
        --seeds 0-9 --envs 1 --envs-per-worker 10 --serve

A batched benchmark (`seq.engine.batch`): a worker's episodes share the worlds, and one
`batch.step()` is one control step of every world (25 physics steps of all worlds together).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

import seq

image = seq.Image.debian_slim().uv_pip_install("mujoco-warp==4.0.0", "warp-lang==1.19.0")

with image.imports():
    import mujoco

    from seq.port.osc import axis_angle_matrix, osc_torques
    from seq.port.worlds import WarpWorlds

WORLDS = 10
SUBSTEPS = 25  # physics steps of 2 ms per 20 Hz control step
ARM = slice(0, 7)  # the Panda's joints (qpos, qvel and actuators alike), then the two fingers
JOINTS = np.arange(7)
FINGERS = slice(7, 9)
KP = 150.0  # robosuite's OSC_POSE gain (critically damped)
POSITION_STEP, ROTATION_STEP = 0.05, 0.5  # an action of 1 moves the goal this far (m, rad)
GRIPPER_SPEED = 0.2  # PandaGripper: how far one action moves the fingers' command
TABLE_HEIGHT = 0.8
SPACE = SimpleNamespace(low=-np.ones(7, np.float32), high=np.ones(7, np.float32), shape=(7,))


class Arm:
    """One world's controller state: its goal, its start's joints, its gripper command."""

    def __init__(self, start_joints: np.ndarray) -> None:
        self.start_joints = start_joints
        self.goal_pos: np.ndarray | None = None
        self.goal_ori: np.ndarray | None = None
        self.gripper = np.zeros(2)


class LiftWorlds:
    """The worlds, and the controller that turns each world's action into its torques."""

    def __init__(self, scene: Any, nworld: int) -> None:
        self.worlds = WarpWorlds(scene, nworld=nworld)
        self.model = self.worlds.host_model
        self.host = mujoco.MjData(self.model)
        self.site = self.model.site("gripper0_right_grip_site").id
        self.base = self.model.body("robot0_base").id
        self.cube = self.model.body("cube_main").id
        self.low, self.high = self.model.actuator_ctrlrange.T
        self.arms: dict[int, Arm] = {}
        self.actions: dict[int, np.ndarray] = {}

    def claim(self, start: Any) -> int:
        world = self.worlds.claim()
        self.worlds.set_start(world, start)
        self.arms[world] = Arm(np.asarray(self.worlds.qpos[world][ARM], dtype=float))
        return world

    def release(self, world: int) -> None:
        self.arms.pop(world, None)
        self.actions.pop(world, None)
        self.worlds.release(world)

    def step(self) -> None:
        """One control step of every world: its action sets its goal, then 25 physics steps."""
        for substep in range(SUBSTEPS):
            qpos, qvel = self.worlds.qpos, self.worlds.field("qvel")
            for world, arm in self.arms.items():
                self.host.qpos[:], self.host.qvel[:] = qpos[world], qvel[world]
                mujoco.mj_forward(self.model, self.host)
                if substep == 0 and world in self.actions:
                    self._set_goal(arm, self.actions[world])
                self.worlds.ctrl[world] = self._control(arm)
            self.worlds.step()
        self.actions.clear()

    def _set_goal(self, arm: Arm, action: np.ndarray) -> None:
        action = np.clip(action, -1.0, 1.0)
        base = self.host.xmat[self.base].reshape(3, 3)
        eef = self.host.site_xmat[self.site].reshape(3, 3)
        arm.goal_pos = self.host.site_xpos[self.site] + base @ (action[:3] * POSITION_STEP)
        arm.goal_ori = base @ axis_angle_matrix(mujoco, action[3:6] * ROTATION_STEP) @ base.T @ eef
        arm.gripper = np.clip(arm.gripper + np.array([-1.0, 1.0]) * GRIPPER_SPEED * np.sign(action[6]), -1, 1)

    def _control(self, arm: Arm) -> np.ndarray:
        ctrl = np.zeros(self.model.nu)
        if arm.goal_pos is not None:
            ctrl[ARM] = osc_torques(mujoco, self.model, self.host, self.site, JOINTS, JOINTS,
                                    arm.goal_pos, arm.goal_ori, arm.start_joints, KP)
        low, high = self.low[FINGERS], self.high[FINGERS]
        ctrl[FINGERS] = (high + low) / 2 + (high - low) / 2 * arm.gripper  # GRIP: -1 open, 1 closed
        return np.clip(ctrl, self.low, self.high)


class LiftEnv:
    """One world of the batch, seen through seq's gym-style env contract."""

    action_space = SPACE

    def __init__(self, worlds: LiftWorlds, task: str) -> None:
        self.worlds, self.task, self.batch = worlds, task, worlds
        self.world: int | None = None

    def reset(self, seed: int | None = None) -> tuple[dict[str, np.ndarray], dict]:
        starts = self.worlds.worlds.starts
        start = next(s for s in starts if s.task == self.task and s.seed == seed)
        self.world = self.worlds.claim(start)
        return self.observation(), {}

    def stage(self, action: Any) -> None:
        self.worlds.actions[self.world] = np.asarray(action, dtype=float)

    def outcome(self) -> tuple[dict[str, np.ndarray], float, bool, bool, dict]:
        """robosuite's Lift reward, unshaped: 1 while the cube is lifted."""
        return self.observation(), float(self.success()), False, False, {}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict]:
        self.stage(action)
        self.worlds.step()
        return self.outcome()

    def release(self) -> None:
        if self.world is not None:
            self.worlds.release(self.world)
            self.world = None

    def observation(self) -> dict[str, np.ndarray]:
        worlds = self.worlds.worlds
        return {
            "robot0_eef_pos": worlds.field("site_xpos")[self.world][self.worlds.site].astype(np.float64),
            "robot0_gripper_qpos": worlds.qpos[self.world][FINGERS].astype(np.float64),
            "cube_pos": worlds.xpos[self.world][self.worlds.cube].astype(np.float64),
        }

    def success(self) -> bool:
        return bool(self.worlds.worlds.xpos[self.world][self.worlds.cube][2] > TABLE_HEIGHT + 0.04)


@seq.benchmark(
    name="lift-warp",
    conditions=seq.conditions(tasks=["Lift"], seeds=range(10)),
    max_steps=200,
    image=image,
    assets=seq.Volume.from_name("lift-warp-scene"),
    batched=True,
)
class LiftWarp(seq.Benchmark):
    @seq.setup
    def setup(self, envs: int = WORLDS) -> None:
        self.worlds = LiftWorlds(seq.assets_path() / "scene", envs)

    @seq.reset
    def reset(self, seed: int, variant: seq.Condition) -> LiftEnv:
        return LiftEnv(self.worlds, variant.task)

    @seq.check
    def check(self, env: LiftEnv) -> seq.Step:
        success = env.success()
        return seq.Step(done=success, metrics={"success": float(success)})
