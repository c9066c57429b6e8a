"""robosuite 1.5.2 on MuJoCo 3.3.0 and numpy < 2: the `robosuite` benchmark and the
`robosuite-scripted` policy.

robosuite cannot share seq's own environment (numpy 2, other MuJoCo pins), so the benchmark
declares its own image: the first eval builds it (a virtual environment made with uv, cached
under `SEQ_HOME`) and every worker runs in it; nothing needs installing by hand.

Tasks `Lift`, `Stack` and `PickPlaceCan` with a Panda arm and robosuite's default controller
(operational-space deltas plus a gripper command, 7 numbers in [-1, 1]), state observations
only, 20 Hz. Each condition is a task and a seed (robosuite draws its placements from the env's
own generator, which `reset` reseeds). `success` is the env's own `_check_success()`; an episode
ends at the first success or at `max_steps` (200). Building an env takes seconds: a worker builds
each task once.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

import seq

TASKS = ("Lift", "Stack", "PickPlaceCan")
SEEDS = range(10)
MAX_STEPS = 200


class RobosuiteEnv:
    """A robosuite env seen through the gym-style contract: `reset(seed)` → `(obs, info)`."""

    def __init__(self, task: str) -> None:
        import robosuite

        self.env = robosuite.make(
            task,
            robots="Panda",
            has_renderer=False,
            has_offscreen_renderer=False,
            use_camera_obs=False,
            horizon=10_000,  # seq's max_steps ends episodes, never robosuite's horizon
            ignore_done=True,
            control_freq=20,
        )
        low, high = self.env.action_spec  # a Box-like space, for `random` and inline policies
        self.action_space = SimpleNamespace(
            low=low.astype(np.float32), high=high.astype(np.float32), shape=low.shape
        )
        self.metadata = {"render_fps": 20}
        self.sim = self.env.sim

    def reset(self, seed: int | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        if seed is not None:  # robosuite's placement samplers share the env's generator: reseed it in place
            self.env.rng.bit_generator.state = np.random.default_rng(seed).bit_generator.state
            np.random.seed(seed)
        return self.env.reset(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, _, info = self.env.step(np.asarray(action, dtype=np.float64))
        return obs, float(reward), False, False, info

    def success(self) -> bool:
        return bool(self.env._check_success())

    def close(self) -> None:
        self.env.close()


IMAGE = seq.Image.debian_slim().uv_pip_install(
    "robosuite==1.5.2", "mujoco==3.3.0", "numpy<2", "av>=17,<19", "fast-simplification>=0.1.9,<0.3"
)


@seq.benchmark(
    name="robosuite",
    conditions=seq.conditions(tasks=list(TASKS), seeds=SEEDS),
    max_steps=MAX_STEPS,
    image=IMAGE,
    env_memory="512MiB",  # a budget, not a measure: a MuJoCo model and its render context an env
)
class Robosuite(seq.Benchmark):
    @seq.setup
    def setup(self) -> None:
        self.envs: dict[str, RobosuiteEnv] = {}

    @seq.reset
    def reset(self, seed: int, variant: seq.Condition) -> Any:
        if variant.task not in TASKS:
            raise ValueError(f"{variant.task!r} is not a robosuite task here (known: {', '.join(TASKS)}).")
        if variant.task not in self.envs:
            self.envs[variant.task] = RobosuiteEnv(variant.task)
        return self.envs[variant.task]

    @seq.check
    def check(self, env: RobosuiteEnv) -> seq.Step:
        success = float(env.success())
        return seq.Step(done=success >= 1.0, metrics={"success": success})


def _move(eef: np.ndarray, target: np.ndarray, gripper: float) -> np.ndarray:
    return np.concatenate([np.clip((target - eef) * 10.0, -1.0, 1.0), np.zeros(3), [gripper]])


def pick_and_place(eef: np.ndarray, fingers: float, block: np.ndarray, goal: np.ndarray) -> np.ndarray:
    """Above the object, down, close, then carry it to `goal` (from the observation alone)."""
    closed = fingers < 0.07
    near = float(np.linalg.norm(block - eef))
    if closed and near < 0.03:  # holding it
        return _move(eef, goal, 1.0)
    if np.linalg.norm(eef[:2] - block[:2]) > 0.008:
        return _move(eef, np.append(block[:2], max(block[2] + 0.08, eef[2])), -1.0)
    if eef[2] - block[2] > 0.01:
        return _move(eef, block, -1.0)
    return np.concatenate([np.zeros(6), [1.0]])  # close on it


def scripted_action(task: str, obs: dict[str, Any]) -> np.ndarray:
    """One action of the scripted controller for `task`."""
    eef = np.asarray(obs["robot0_eef_pos"], dtype=np.float64)
    qpos = np.asarray(obs["robot0_gripper_qpos"], dtype=np.float64)
    fingers = float(qpos[0] - qpos[1])
    if task == "Lift":
        cube = np.asarray(obs["cube_pos"], dtype=np.float64)
        return pick_and_place(eef, fingers, cube, cube + np.array([0.0, 0.0, 0.15]))
    if task == "Stack":
        a, b = np.asarray(obs["cubeA_pos"], np.float64), np.asarray(obs["cubeB_pos"], np.float64)
        above = b + np.array([0.0, 0.0, 0.06])
        if np.linalg.norm(a[:2] - b[:2]) < 0.01 and a[2] > b[2] + 0.035:
            return np.concatenate([np.zeros(6), [-1.0]])  # set down: let go
        return pick_and_place(eef, fingers, a, above)
    if task == "PickPlaceCan":
        can = np.asarray(obs["Can_pos"], dtype=np.float64)
        return pick_and_place(eef, fingers, can, np.array([0.1, 0.4, 1.05]))
    raise ValueError(f"robosuite-scripted knows {', '.join(TASKS)}, not {task!r}.")


@seq.policy(name="robosuite-scripted")
class RobosuiteScripted(seq.Policy):
    """A scripted pick-and-place controller for `robosuite`'s Lift and Stack (the instruction names
    the task); on PickPlaceCan it tries the same motions towards the can's bin."""

    @seq.infer
    def infer(self, obs: Any, *, seed: int | None = None, instruction: str | None = None) -> np.ndarray:
        return scripted_action(str(instruction), obs).astype(np.float32)
