"""libero-warp: LIBERO's standard suites on MuJoCo Warp, ported with seq's own port tools.

The shelf's `libero` exported through its own reset (`seq benchmark export libero`: each start
is the state a `libero` episode hands its policy, after LIBERO's reset, init state and 10 wait
steps, with what LIBERO's env says of it, `LiberoEnv.port_facts`), then run as a batched
benchmark: the worlds of one exported scene step together on MuJoCo Warp, each episode holding
one world. What LIBERO adds to the physics is written here against MuJoCo's state:

- the arm: robosuite 1.4.0's `OSC_POSE` as LIBERO configures it (`seq.port.osc`: kp 150,
  critically damped; an action of 1 moves the goal 5 cm / 0.5 rad in the world's frame from the
  pose reached; the goal orientation kept while the action's rotation is exactly zero), its
  goal, posture and gripper carried over from the start; recomputed before each of the 25
  physics steps of a 20 Hz control step, on classic MuJoCo (the world's state, contacts off);
- the gripper: robosuite 1.4.0's, moving 0.01 towards open or closed at every physics step;
- the observation: `libero`'s (`state`, `eef_quat`, `controller_pose`; with `obs_mode=state` or
  `all`, `objects`, `object_boxes` and `goal`; with `pixels` or `all`, `agentview_image` and
  `wrist_image`, drawn by classic MuJoCo from the world's state: not LIBERO's renderer);
- success: LIBERO's goal predicates, compiled at export (`seq.shelf.libero_scene`).

The scenes come from a volume (`libero-warp-scene`): one or more export folders, at its root
or one level down. docs/libero_warp.md says how to make it and what still differs from LIBERO.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any

import numpy as np

import seq
from seq.errors import SeqInputError
from seq.port import scene as layout
from seq.port.environment import PORT_IMAGE
from seq.shelf.libero_env import CAMERAS, OBS_MODES, ObsMode
from seq.shelf.libero_tasks import SUITES

with PORT_IMAGE.imports():
    from seq.capture.render import headless

    headless()  # before MuJoCo is imported: LIBERO's cameras are drawn offscreen
    import mujoco

    from seq.port.osc import axis_angle_matrix, osc_torques
    from seq.port.worlds import WarpWorlds
    from seq.shelf.libero_scene import GoalChecks, object_boxes

VOLUME = "libero-warp-scene"
WORLDS = 10
MAX_WORLDS = 4096  # a scene's worlds in one process
MAX_RESOLUTION = 1024  # LIBERO's scenes draw offscreen at most this wide
SUBSTEPS = 25  # physics steps of 2 ms per 20 Hz control step
MAX_STEPS = {"libero_spatial": 220, "libero_object": 280, "libero_goal": 300, "libero_10": 520}
SPACE = SimpleNamespace(low=-np.ones(7, np.float32), high=np.ones(7, np.float32), shape=(7,),
                        dtype=np.float32)


def export_command(suite: str, task: str, seed: int) -> str:
    """The commands that add one start to the volume: an export folder of its own under the
    local `volume/` folder (an export into a folder replaces what it held), then the volume put."""
    return (f"seq benchmark export libero --suite {suite} --tasks {task} --seeds {seed} "
            f"-o volume/{suite}-{task}-{seed} && seq volume put {VOLUME} volume")


def exported_starts(root: Path) -> dict[tuple[str, int], tuple[Path, dict[str, Any]]]:
    """Every start exported under `root` (an export folder, or folders of them one level down),
    by task and seed: its folder and its manifest entry."""
    folders = [root] if (root / layout.MANIFEST).is_file() else sorted(
        path for path in root.iterdir() if (path / layout.MANIFEST).is_file()
    ) if root.is_dir() else []
    found: dict[tuple[str, int], tuple[Path, dict[str, Any]]] = {}
    for folder in folders:
        manifest = layout.read_manifest(folder)
        if manifest.get("benchmark") != "libero":
            raise SeqInputError(f"{folder / layout.MANIFEST}: benchmark: expected an export of libero, "
                                f"got {manifest.get('benchmark')!r}.")
        for entry in manifest[layout.STARTS]:
            found.setdefault((entry["task"], int(entry["seed"])), (folder, entry))
    return found


@dataclass
class Arm:
    """One world's controller: LIBERO's OSC goal, its posture, its gripper command, the start."""

    start: layout.Start
    goal_pos: np.ndarray
    goal_ori: np.ndarray
    posture: np.ndarray
    gripper: np.ndarray
    checks: Any
    pose: np.ndarray = field(default_factory=lambda: np.zeros(12))  # as the controller last read it


class SceneWorlds:
    """The worlds of one exported scene, and LIBERO's controller that turns actions into inputs."""

    def __init__(self, folder: Path, scene_id: str, entries: list[dict[str, Any]], nworld: int,
                 cameras: bool, resolution: int) -> None:
        starts = [layout.read_start(folder, entry) for entry in entries]
        self.worlds = WarpWorlds(folder, nworld=nworld, scene_id=scene_id, starts=starts)
        self.model = self.worlds.host_model
        self.control_model = copy.copy(self.model)  # the arm's dynamics: no contacts to find
        self.control_model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
        self.host = mujoco.MjData(self.control_model)
        robot = starts[0].facts["robot"]
        joints = [self._id("JOINT", name) for name in robot["arm_joints"]]
        self.dofs = np.array([self.model.jnt_dofadr[j] for j in joints])
        self.addresses = np.array([self.model.jnt_qposadr[j] for j in joints])
        self.arm = np.array([self._id("ACTUATOR", name) for name in robot["arm_actuators"]])
        self.fingers = np.array([self._id("ACTUATOR", name) for name in robot["gripper_actuators"]])
        self.finger_joints = np.array([self.model.jnt_qposadr[self._id("JOINT", name)]
                                       for name in robot["gripper_joints"]])
        self.site = self._id("SITE", robot["eef_site"])
        self.hand = self._id("BODY", robot["eef_body"])
        self.kp = np.asarray(robot["kp"], dtype=np.float64)
        self.output_max = np.asarray(robot["output_max"], dtype=np.float64)
        self.speed = float(robot["gripper_speed"])
        self.low, self.high = self.model.actuator_ctrlrange.T
        self.arms: dict[int, Arm] = {}
        self.actions: dict[int, np.ndarray] = {}
        self._checks: dict[str, Any] = {}
        self._snapshot: dict[str, np.ndarray] | None = None
        self._boxes: dict[str, Any] = {}
        self.renderer = _Renderer(self.model, resolution) if cameras else None

    def _id(self, kind: str, name: str) -> int:
        index = int(mujoco.mj_name2id(self.model, getattr(mujoco.mjtObj, f"mjOBJ_{kind}"), name))
        if index < 0:
            raise SeqInputError(f"libero-warp: the exported scene has no {kind.lower()} {name!r}.")
        return index

    def claim(self, start: layout.Start) -> int:
        world = self.worlds.claim()
        self.worlds.set_start(world, start)
        held = start.facts["controller"]
        if start.task not in self._checks:
            self._checks[start.task] = GoalChecks(mujoco, self.model, start.facts["checks"])
        self.arms[world] = Arm(
            start=start,
            goal_pos=np.asarray(held["goal_pos"], dtype=np.float64),
            goal_ori=np.asarray(held["goal_ori"], dtype=np.float64).reshape(3, 3),
            posture=np.asarray(held["initial_joint"], dtype=np.float64),
            gripper=np.asarray(held["gripper_action"], dtype=np.float64),
            checks=self._checks[start.task],
        )
        self._snapshot = None
        if "pose" in held:
            self.arms[world].pose = np.asarray(held["pose"], dtype=np.float64)
        else:  # exported before the pose was: the hand's pose now, one physics step later
            view = self.view(world)
            pose = [view.site_xpos[self.site], np.ravel(view.site_xmat[self.site])]
            self.arms[world].pose = np.concatenate(pose)
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
                mujoco.mj_fwdPosition(self.control_model, self.host)
                mujoco.mj_fwdVelocity(self.control_model, self.host)
                action = self.actions.get(world)
                if substep == 0 and action is not None:
                    self._set_goal(arm, action)
                self.worlds.ctrl[world] = self._control(arm, action)
            self.worlds.step()
        self.actions.clear()
        self._snapshot = None

    def _set_goal(self, arm: Arm, action: np.ndarray) -> None:
        delta = np.clip(action[:6], -1.0, 1.0) * self.output_max
        if np.any(delta[3:] != 0.0):  # robosuite keeps the goal orientation otherwise
            arm.goal_ori = axis_angle_matrix(mujoco, delta[3:]) @ self.host.site_xmat[self.site].reshape(3, 3)
        arm.goal_pos = self.host.site_xpos[self.site] + delta[:3]

    def _control(self, arm: Arm, action: np.ndarray | None) -> np.ndarray:
        ctrl = np.zeros(self.model.nu)
        torques = osc_torques(mujoco, self.control_model, self.host, self.site, self.dofs, self.addresses,
                              arm.goal_pos, arm.goal_ori, arm.posture, self.kp)
        ctrl[self.arm] = torques
        if action is not None:  # robosuite moves the fingers' command at every physics step
            move = np.array([-1.0, 1.0]) * self.speed * np.sign(action[6])
            arm.gripper = np.clip(arm.gripper + move, -1.0, 1.0)
        low, high = self.low[self.fingers], self.high[self.fingers]
        ctrl[self.fingers] = (high + low) / 2 + (high - low) / 2 * arm.gripper
        arm.pose = np.concatenate([self.host.site_xpos[self.site], self.host.site_xmat[self.site]])
        return np.clip(ctrl, self.low, self.high)

    def view(self, world: int) -> SimpleNamespace:
        """World `world`'s positions and contacts, as a MuJoCo data's fields (after the last step)."""
        if self._snapshot is None:
            data = self.worlds.data
            count = int(data.nacon.numpy()[0])
            self._snapshot = {
                name: getattr(data, name).numpy()
                for name in ("qpos", "xpos", "xquat", "site_xpos", "site_xmat", "geom_xpos", "geom_xmat")
            }
            self._snapshot["contact_geom"] = data.contact.geom.numpy()[:count]
            self._snapshot["contact_world"] = data.contact.worldid.numpy()[:count]
        snap = self._snapshot
        pairs = snap["contact_geom"][snap["contact_world"] == world]
        return SimpleNamespace(
            **{name: snap[name][world] for name in ("qpos", "xpos", "xquat", "site_xpos", "site_xmat",
                                                     "geom_xpos", "geom_xmat")},
            ncon=len(pairs), contact=SimpleNamespace(geom=pairs),
        )

    def observation(self, world: int, obs_mode: str) -> dict[str, Any]:
        """`libero`'s observation of `world` (`seq.shelf.libero_env`)."""
        arm, data = self.arms[world], self.view(world)
        quat = np.asarray(data.xquat[self.hand], dtype=np.float64)[[1, 2, 3, 0]]  # xyzw, as robosuite
        fingers = np.asarray(data.qpos[self.finger_joints], dtype=np.float64)
        site = np.asarray(data.site_xpos[self.site], dtype=np.float64)
        obs: dict[str, Any] = {
            "state": np.concatenate([site, quat_to_axis_angle(quat), fingers]),
            "eef_quat": quat,
            "controller_pose": arm.pose.astype(np.float64),
        }
        if obs_mode != "state" and self.renderer is not None:
            obs.update(self.renderer.images(data.qpos, arm.start))
        if obs_mode != "pixels":
            facts = arm.start.facts
            bodies = {name: self._body(body) for name, body in facts["objects"].items()}
            obs["objects"] = {  # position, then the quaternion as robosuite gives it: [x, y, z, w]
                name: np.concatenate([data.xpos[body], data.xquat[body][[1, 2, 3, 0]]]).astype(np.float64)
                for name, body in bodies.items()
            }
            names = list(facts["objects"]) + sorted(facts["fixtures"])
            obs["object_boxes"] = object_boxes(mujoco, self.model, data, names, self._boxes)
            obs["goal"] = [list(predicate) for predicate in facts["goal"]]
        return obs

    def _body(self, name: str) -> int:
        return self._id("BODY", name)

    def succeeded(self, world: int) -> bool:
        return bool(self.arms[world].checks.met(self.view(world)))


FACTS: dict[str, type] = {
    "objects": dict, "fixtures": dict, "goal": list, "checks": list, "robot": dict, "controller": dict,
}
ROBOT_FACTS: dict[str, type] = {
    "arm_joints": list, "arm_actuators": list, "gripper_joints": list, "gripper_actuators": list,
    "eef_site": str, "eef_body": str, "gripper_speed": float, "kp": list, "output_max": list,
}
CONTROLLER_FACTS = {"goal_pos": 3, "goal_ori": 9, "initial_joint": None, "gripper_action": 2}


def _check_facts(folder: Path, entry: dict[str, Any]) -> None:
    """A start's `facts` (what LIBERO said of it at export) hold what the port reads, typed."""
    where = f"libero-warp: {folder / layout.MANIFEST}: {entry['task']} seed {entry['seed']}: facts"
    facts = entry["facts"]
    robot = facts.get("robot") if isinstance(facts.get("robot"), dict) else {}
    expected: list[tuple[dict[str, Any], str, type]] = [(facts, key, kind) for key, kind in FACTS.items()]
    expected += [(robot, f"robot.{key}", kind) for key, kind in ROBOT_FACTS.items()]
    for table, key, kind in expected:
        value = table.get(key.rpartition(".")[2])
        if not isinstance(value, (int, float) if kind is float else kind):
            raise SeqInputError(f"{where}.{key}: expected {kind.__name__}; export it again.")
    for key, size in CONTROLLER_FACTS.items():
        value = facts["controller"].get(key)
        numbers = isinstance(value, list) and all(
            isinstance(v, int | float) and np.isfinite(v) for v in value)
        if not numbers or (size is not None and len(value) != size):
            raise SeqInputError(f"{where}.controller.{key}: expected {size or 'a list of'} numbers; "
                                "export it again.")


def quat_to_axis_angle(quat: np.ndarray) -> np.ndarray:
    """robosuite's `quat2axisangle` of an `[x, y, z, w]` quaternion."""
    w = float(np.clip(quat[3], -1.0, 1.0))
    den = np.sqrt(1.0 - w * w)
    if np.isclose(den, 0.0):
        return np.zeros(3)
    return np.asarray(quat[:3]) * 2.0 * np.arccos(w) / den


class _Renderer:
    """LIBERO's two cameras drawn by classic MuJoCo from a world's positions and its start's model."""

    def __init__(self, model: Any, resolution: int) -> None:
        self.model = copy.copy(model)
        self.data = mujoco.MjData(self.model)
        self.renderer = mujoco.Renderer(self.model, resolution, resolution)
        self.option = mujoco.MjvOption()
        self.option.geomgroup[0] = 0  # robosuite draws visual geoms only, never collision ones
        self.scene_values: dict[str, np.ndarray] = {}

    def images(self, qpos: np.ndarray, start: layout.Start) -> dict[str, np.ndarray]:
        for name, scene_value in self.scene_values.items():  # undo the last start's changes
            getattr(self.model, name)[:] = scene_value
        for name, (rows, values) in start.model_changes.items():
            target = getattr(self.model, name)
            self.scene_values.setdefault(name, np.array(target))
            target[rows] = np.asarray(values).reshape(target[rows].shape)
        self.data.qpos[:] = qpos
        mujoco.mj_forward(self.model, self.data)
        images = {}
        for key, camera in CAMERAS.items():
            self.renderer.update_scene(self.data, camera=camera, scene_option=self.option)
            images[f"{key}_image"] = np.ascontiguousarray(self.renderer.render()[:, ::-1])
        return images


class LiberoWarpEnv:
    """One world of a scene's worlds, through seq's gym-style env contract (a batched env)."""

    action_space = SPACE
    metadata = {"render_fps": 20}

    def __init__(self, worlds: SceneWorlds, start: layout.Start, obs_mode: str) -> None:
        self.batch, self.start, self.obs_mode = worlds, start, obs_mode
        self.world: int | None = None
        self.succeeded = False

    def reset(self, seed: int | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        self.release()
        self.world = self.batch.claim(self.start)
        self.succeeded = False
        return self.batch.observation(self.world, self.obs_mode), {}

    def stage(self, action: Any) -> None:
        assert self.world is not None, "stage() before reset()"
        self.batch.actions[self.world] = np.asarray(action, dtype=np.float64).reshape(-1)

    def outcome(self) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        assert self.world is not None
        self.succeeded = self.batch.succeeded(self.world)
        obs = self.batch.observation(self.world, self.obs_mode)
        return obs, float(self.succeeded), self.succeeded, False, {}

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        self.stage(action)
        self.batch.step()
        return self.outcome()

    def release(self) -> None:
        if self.world is not None:
            self.batch.release(self.world)
            self.world = None


def _conditions() -> dict[str, list[seq.Condition]]:
    return {
        suite: [seq.Condition(task=name, seed=seed, max_steps=steps, suite=suite)
                for name, _, states in SUITES[suite] for seed in range(states)]
        for suite, steps in MAX_STEPS.items()
    }


INSTRUCTIONS = {(suite, name): language for suite in MAX_STEPS for name, language, _ in SUITES[suite]}


@seq.benchmark(
    name="libero-warp",
    conditions=_conditions(),
    max_steps=max(MAX_STEPS.values()),
    image=PORT_IMAGE,
    assets=seq.Volume.from_name(VOLUME),
    batched=True,
)
class LiberoWarp(seq.Benchmark):
    """LIBERO's standard suites on MuJoCo Warp (module doc)."""

    @seq.setup
    def setup(
        self,
        envs: Annotated[int, seq.Range(1, MAX_WORLDS)] = WORLDS,
        obs_mode: ObsMode = "pixels",
        resolution: Annotated[int, seq.Range(8, MAX_RESOLUTION)] = 256,
    ) -> None:
        if obs_mode not in OBS_MODES:
            raise ValueError(f"libero-warp: obs_mode must be one of {', '.join(OBS_MODES)}, "
                             f"got {obs_mode!r}.")
        if not 1 <= envs <= MAX_WORLDS or not 8 <= resolution <= MAX_RESOLUTION:
            raise ValueError(f"libero-warp: envs must be 1 to {MAX_WORLDS} and resolution 8 to "
                             f"{MAX_RESOLUTION}, got {envs} and {resolution}.")
        self.envs, self.obs_mode, self.resolution = envs, obs_mode, resolution
        self.starts = exported_starts(seq.assets_path())
        self.scenes: dict[tuple[Path, str], SceneWorlds] = {}

    @seq.reset
    def reset(self, seed: int, variant: seq.Condition) -> LiberoWarpEnv:
        found = self.starts.get((variant.task, seed))
        if not self.starts:
            raise SeqInputError(
                f"libero-warp: volume {VOLUME} holds no export of libero (at its root or one folder "
                f"down); make one: `{export_command(str(variant.suite), variant.task, seed)}`"
            )
        if found is None:
            raise SeqInputError(
                f"libero-warp: volume {VOLUME} has no exported start of {variant.task} seed {seed}; "
                f"export it beside the volume's other exports (in the folder the volume was put "
                f"from) and put it again: `{export_command(str(variant.suite), variant.task, seed)}`"
            )
        folder, entry = found
        if "facts" not in entry:
            raise SeqInputError(f"libero-warp: {folder / layout.MANIFEST} was exported before LIBERO's "
                                "facts were written (its starts have no `facts`): export it again.")
        _check_facts(folder, entry)
        key = (folder, entry["scene"])
        if key not in self.scenes:
            entries = [e for _, (f, e) in self.starts.items() if f == folder and e["scene"] == entry["scene"]]
            self.scenes[key] = SceneWorlds(folder, entry["scene"], entries, self.envs,
                                           cameras=self.obs_mode != "state", resolution=self.resolution)
        worlds = self.scenes[key]
        start = next(s for s in worlds.worlds.starts if s.task == variant.task and s.seed == seed)
        return LiberoWarpEnv(worlds, start, self.obs_mode)

    @seq.check
    def check(self, env: LiberoWarpEnv) -> seq.Step:
        return seq.Step(done=env.succeeded, metrics={"success": float(env.succeeded)})

    def instruction(self, variant: seq.Condition) -> str:
        return INSTRUCTIONS[str(variant.suite), variant.task]


