"""One LIBERO task as a seq env: the published evaluation protocol around LIBERO's own env.

Runs where `libero` is installed (the `libero` benchmark's image). What an episode does, as
openpi's and vla-eval's LIBERO evaluations do it:

1. `np.random` is put in the state the published loop has before that episode's reset: seeded
   with `env_seed` (7, openpi's and vla-eval's) when the task's env is made, then advanced by one
   reset per earlier episode. LIBERO's reset draws the fixtures' places (cabinet, stove, rack:
   up to 1.5 cm apart) from `np.random`, and an init state does not set them, so an episode's
   scene depends on how many resets came before it; seq replays that count, whatever order its
   workers run episodes in.
2. `env.reset()` (a hard reset: LIBERO's default), then `env.set_init_state(init_states[seed])`.
3. 10 steps of the dummy action (`[0, 0, 0, 0, 0, 0, -1]`: still, gripper open), not counted.

Observations (`obs_mode`, a setup parameter of the benchmark):
- `pixels` (default, the published one): `agentview_image` and `wrist_image`, 256×256×3 uint8,
  turned upright (`[::-1, ::-1]`, as every published eval does), and `state`, 8 numbers:
  end-effector position, its orientation as an axis-angle (robosuite's `quat2axisangle`), the
  two gripper finger positions. With them, what other harnesses build their states from:
  `eef_quat`, the end-effector orientation as robosuite gives it (`[x, y, z, w]`), and
  `controller_pose`, the pose its controller last read (position, then the rotation matrix row
  by row: 12 numbers; vla-eval's `controller_states` come from it).
- `state`: no cameras at all (physics only, ~10× faster): `state`, and privileged ground truth
  for scripted policies: `objects`, the pose of every object LIBERO tracks
  (`{name: [x, y, z, qx, qy, qz, qw]}`), and `object_boxes`, the axis-aligned bounding box in the
  world of each of them and of each fixture (cabinet, stove...) (`{name: [x0, y0, z0, x1, y1,
  z1]}`, from its collision geoms), and `goal`, the task's goal as LIBERO parsed it from the BDDL
  file (`[["on", "akita_black_bowl_1", "plate_1"]]`).
- `all`: both.

Success is LIBERO's own `_check_success()` (the `done` its `step` returns). Each step's `info`
adds what the failure detectors of `seq evolve` read, from the sim, where the task's goal names
an object to move (`On`/`In` goals; not a knob to turn or a drawer to open): `grasp_success` (1.0
while both of the gripper's finger pads touch that object: robosuite's own `_check_grasp`) and
`obj_to_target` (metres, on the table's plane, from that object to what it must end on or in: its
receptacle's body, or the goal region's site). Actions are LIBERO's:
7 numbers in [-1, 1], OSC_POSE deltas and a gripper command (-1 open, +1 closed), passed as
given (vla-eval turns the gripper into ±1 first; openpi's client does not).

`distractor` (an object of `seq.shelf.libero_variants.DISTRACTORS`) builds the scene from the task's
BDDL file with that object added (`libero_variants.distractor_scene`); the task's init states,
which do not hold it, set every other body, and the distractor is put where the variant says
before the wait steps.

`fast=True` (the benchmark's `fast_render`, off by default) draws the cameras without
multisampling, shadows or reflections: other pixels (edges, shading), faster on a CPU; measured
in `bench/libero.py` against the faithful images.

Speed without changing a pixel (`seq.shelf.libero_gl`): the render context, and with it 189 MB
of textures, made once per env instead of at every hard reset, and the cameras drawn only for the
images the policy sees (checked against LIBERO's own env by `tests/shelf/test_libero.py`).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from seq.shelf.libero_gl import CameraGate, KeptRenderContext

WAIT_STEPS = 10
DUMMY_ACTION = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0)
RESOLUTION = 256
ENV_SEED = 7
CAMERAS = {"agentview": "agentview", "wrist": "robot0_eye_in_hand"}  # seq's name: LIBERO's camera
ObsMode = Literal["pixels", "state", "all"]
OBS_MODES = get_args(ObsMode)
CONTROL_HZ = 20


def configure_libero() -> None:
    """Point LIBERO at a config file of its package's own paths before it is imported.

    Upstream LIBERO asks on stdin (`input()`) where its files are unless
    `$LIBERO_CONFIG_PATH/config.yaml` exists, and a config file left in the user's home would
    move them; a worker has neither a terminal nor a reason to read one. The file is written
    once per environment (its paths hold that environment's location), atomically."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    folder = Path(sys.prefix) / "libero-config"
    os.environ["LIBERO_CONFIG_PATH"] = str(folder)
    config = folder / "config.yaml"
    if config.exists():
        return
    import yaml
    from libero.libero import get_default_path_dict

    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".config-{os.getpid()}.yaml"
    partial.write_text(yaml.safe_dump(get_default_path_dict()))
    os.replace(partial, config)


def task_suite(suite: str) -> Any:
    """LIBERO's benchmark object of `suite` (task order 0), its chatter kept off stdout."""
    configure_libero()
    from libero.libero import benchmark

    with contextlib.redirect_stdout(io.StringIO()):
        return benchmark.get_benchmark_dict()[suite]()


class _RandomReplay:
    """`np.random`'s state before each of one task's resets in the published loop: `states[k]`
    is the state before episode k's reset (seeded, then k resets later)."""

    def __init__(self, env_seed: int) -> None:
        np.random.seed(env_seed)  # what `env.seed(env_seed)` does in LIBERO
        self.states: list[Any] = [np.random.get_state()]

    def before(self, episode: int, reset: Any) -> Any:
        """The state before episode `episode`'s reset, resetting (`reset()`) to learn it."""
        while len(self.states) <= episode:
            self.after_reset_from(len(self.states) - 1, reset)
        return self.states[episode]

    def after_reset_from(self, episode: int, reset: Any) -> None:
        np.random.set_state(self.states[episode])
        reset()
        self.remember(episode + 1)

    def remember(self, episode: int) -> None:
        if len(self.states) == episode:
            self.states.append(np.random.get_state())


class LiberoEnv:
    """One LIBERO task under the published protocol (module doc), gym-style:
    `reset(seed)` → `(obs, info)` with `seed` the init state's index; `step(action)`."""

    def __init__(
        self,
        suite: str,
        task: str,
        obs: str = "pixels",
        env_seed: int = ENV_SEED,
        resolution: int = RESOLUTION,
        fast: bool = False,
        distractor: str | None = None,
    ) -> None:
        if obs not in OBS_MODES:
            raise ValueError(f"libero: obs must be one of {', '.join(OBS_MODES)}, got {obs!r}.")
        from robosuite.utils.transform_utils import quat2axisangle

        self.suite, self.task, self.obs_mode = suite, task, obs
        self.cameras = obs != "state"
        self._quat2axisangle = quat2axisangle
        self.distractor = distractor
        self._folder: str | None = None  # a distractor's scene file is written here
        self.env, self.init_states, self.instruction = self._open(suite, task, resolution)
        self._context = KeptRenderContext(self.env.env, fast=fast and self.cameras)
        self._gate = CameraGate(self.env.env, list(CAMERAS.values()) if self.cameras else [], resolution)
        low, high = self.env.env.action_spec
        from types import SimpleNamespace

        self.action_space = SimpleNamespace(
            low=low.astype(np.float32), high=high.astype(np.float32), shape=low.shape, dtype=np.float32
        )
        self.metadata = {"render_fps": CONTROL_HZ}
        self.replay = _RandomReplay(env_seed)
        self.succeeded = False
        self.info: dict[str, Any] = {}
        self._geoms: dict[str, Any] = {}  # each object's collision geoms, found once
        # the next episode's condition variant (`seq.shelf.libero_variants`), set by the benchmark
        self.variant: dict[str, Any] = {}
        self._progress = self._goal_progress()

    def _goal_progress(self) -> tuple[Any, Any] | None:
        """The goal's object and where its target is read from (a site or a body), for `info`'s
        `grasp_success` and `obj_to_target`; None for a goal that moves no object."""
        from seq.shelf.libero_variants import goal_objects, goal_target

        env = self.env.env
        moved, _ = goal_objects(env)
        if moved is None:
            return None
        region = str(env.parsed_problem["goal_state"][0][2])
        sites = {env.sim.model.site_id2name(i) for i in range(env.sim.model.nsite)}
        target = goal_target(env)
        if region in sites:
            where: Any = ("site", region)
        elif target is not None and target in env.obj_body_id:
            where = ("body", env.obj_body_id[target])
        else:
            return None
        return moved, where

    def progress(self) -> dict[str, float]:
        """`grasp_success` and `obj_to_target` now (module doc); empty for a goal without an object."""
        if self._progress is None:
            return {}
        env, (moved, (kind, where)) = self.env.env, self._progress
        data = env.sim.data
        target = data.get_site_xpos(where) if kind == "site" else data.body_xpos[where]
        held = env._check_grasp(gripper=env.robots[0].gripper, object_geoms=env.objects_dict[moved])
        gap = np.asarray(data.body_xpos[env.obj_body_id[moved]][:2]) - np.asarray(target[:2])
        return {"grasp_success": float(held), "obj_to_target": float(np.linalg.norm(gap))}

    def _open(self, suite: str, task: str, resolution: int) -> tuple[Any, Any, str]:
        """LIBERO's control env of the task, its init states and its instruction."""
        benchmark = task_suite(suite)
        names = benchmark.get_task_names()
        if task not in names:
            raise ValueError(f"libero: suite {suite} has no task {task!r}.")
        from libero.libero.envs.env_wrapper import ControlEnv

        index = names.index(task)
        bddl = benchmark.get_task_bddl_file_path(index)
        if self.distractor is not None:  # the task's scene with one more object, in a file of its own
            from seq.shelf.libero_variants import distractor_scene

            folder = self._folder = tempfile.mkdtemp(prefix="seq-libero-")
            scene = Path(folder) / Path(bddl).name
            scene.write_text(distractor_scene(Path(bddl).read_text(), self.distractor))
            bddl = str(scene)
        env = ControlEnv(
            bddl_file_name=bddl,
            camera_heights=resolution,
            camera_widths=resolution,
            use_camera_obs=self.cameras,
            has_offscreen_renderer=self.cameras,
        )
        return env, benchmark.get_task_init_states(index), str(benchmark.get_task(index).language)

    @property
    def model(self) -> Any:
        """The MuJoCo model (traces read each step's contacts from it and `data`)."""
        return self.sim.model._model

    @property
    def data(self) -> Any:
        return self.sim.data._data

    @property
    def sim(self) -> Any:
        """robosuite's MjSim (recordings draw the scene from its model and data)."""
        return self.env.sim

    def reset(self, seed: int | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        episode = 0 if seed is None else int(seed)
        if not 0 <= episode < len(self.init_states):
            raise ValueError(
                f"libero: {self.task} has {len(self.init_states)} init states (seeds 0-"
                f"{len(self.init_states) - 1}), not seed {seed}."
            )
        self._gate.drawing = False
        try:
            np.random.set_state(self.replay.before(episode, self.env.reset))
            self.env.reset()
            self.replay.remember(episode + 1)
            raw = self.env.set_init_state(self._init_state(episode))
            if self.variant:
                from seq.shelf.libero_variants import apply_variant, place_distractor

                apply_variant(self.env.env, self.task, self.variant)
                if self.distractor is not None:
                    place_distractor(self.env.env, self._boxes, self.task, self.variant)
            for wait in range(WAIT_STEPS):
                self._gate.drawing = wait == WAIT_STEPS - 1  # the images the policy will see
                raw, _, _, _ = self.env.step(list(DUMMY_ACTION))
        finally:
            self._gate.drawing = True
        self.succeeded = False
        self.info = {}
        return self.observation(raw), {}

    def _init_state(self, episode: int) -> np.ndarray:
        """The task's init state `episode`; with a distractor, the same with the distractor's pose
        (where the reset just put it) and zero velocity spliced in at its joint's place."""
        state = np.asarray(self.init_states[episode], dtype=np.float64)
        if self.distractor is None:
            return state
        from seq.shelf.libero_variants import DISTRACTOR

        sim = self.env.env.sim
        joint = self.env.env.objects_dict[DISTRACTOR].joints[-1]
        (q0, q1), (v0, v1) = sim.model.get_joint_qpos_addr(joint), sim.model.get_joint_qvel_addr(joint)
        nq, nv = sim.model.nq, sim.model.nv
        if len(state) != 1 + nq - (q1 - q0) + nv - (v1 - v0):
            raise ValueError(f"libero: {self.task}'s init state does not fit its scene with a distractor.")
        qpos, qvel = state[1 : 1 + nq - (q1 - q0)], state[1 + nq - (q1 - q0) :]
        pose = np.array(sim.data.qpos[q0:q1], dtype=np.float64)
        qpos = np.concatenate([qpos[:q0], pose, qpos[q0:]])
        qvel = np.concatenate([qvel[:v0], np.zeros(v1 - v0), qvel[v0:]])
        return np.concatenate([state[:1], qpos, qvel])

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        raw, reward, done, info = self.env.step(np.asarray(action, dtype=np.float64))
        self.succeeded = bool(done)
        self.info = {**info, **self.progress()}  # kept: traces read an env's last `info` here
        return self.observation(raw), float(reward), bool(done), False, self.info

    def observation(self, raw: dict[str, Any]) -> dict[str, Any]:
        """seq's observation from robosuite's (module doc)."""
        state = np.concatenate(
            [raw["robot0_eef_pos"], self._quat2axisangle(raw["robot0_eef_quat"]), raw["robot0_gripper_qpos"]]
        )
        controller = self.env.env.robots[0].controller
        pose = np.concatenate([np.ravel(controller.ee_pos), np.ravel(controller.ee_ori_mat)])
        obs: dict[str, Any] = {
            "state": state,
            "eef_quat": np.array(raw["robot0_eef_quat"], dtype=np.float64),
            "controller_pose": pose.astype(np.float64),
        }
        if self.cameras:
            for name, camera in CAMERAS.items():
                obs[f"{name}_image"] = np.ascontiguousarray(raw[f"{camera}_image"][::-1, ::-1])
        if self.obs_mode != "pixels":
            names = [
                key[: -len("_pos")]
                for key in raw
                if key.endswith("_pos") and not key.startswith("robot0_") and "_to_" not in key
            ]
            obs["objects"] = {
                name: np.concatenate([raw[f"{name}_pos"], raw[f"{name}_quat"]]) for name in names
            }
            obs["object_boxes"] = self._boxes(names + sorted(self.env.env.fixtures_dict))
            obs["goal"] = self.goal()
        return obs

    def _boxes(self, names: list[str]) -> dict[str, np.ndarray]:
        """Each object's world bounding box, from its collision geoms' oriented boxes."""
        import mujoco

        from seq.shelf.libero_scene import object_boxes

        return object_boxes(mujoco, self.sim.model._model, self.sim.data._data, names, self._geoms)

    def port_facts(self) -> dict[str, Any]:
        """What a port needs of this start beside its physics (`seq.shelf.libero_scene`): read by
        `seq benchmark export` after each reset."""
        from seq.shelf.libero_scene import scene_facts

        return scene_facts(self.env.env)

    def goal(self) -> list[list[str]]:
        """The task's goal as LIBERO parsed it from the BDDL file (e.g. `[["on", "bowl_1", "plate_1"]]`)."""
        return [list(map(str, predicate)) for predicate in self.env.env.parsed_problem["goal_state"]]

    def close(self) -> None:
        if getattr(self.env, "env", None) is not None:
            self._context.release()
            self.env.close()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
