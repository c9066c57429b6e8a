"""MetaWorld v3 (`pip install 'seq[metaworld]'`): the `metaworld` benchmark, suites `mt10` (default)
and `mt50`, and the policies `metaworld-expert` and `noisy-expert`.

Each condition is a task and a seed. The seed picks one of the task's 50 MetaWorld goal
configurations (`metaworld.MT1(task, seed=0).train_tasks[seed % 50]`, the set MT10/MT50 train on)
and seeds `env.reset`; a condition's `extra` may move the object and goal or change the physics
(`seq.shelf.metaworld_variants`); success is the env's own `info["success"]`, and an episode is
done at the first success or at `max_steps` (500, MetaWorld's own horizon).

Observations (`obs_mode`, a setup parameter): `state` (default), MetaWorld's own 39-D array;
`pixels`, a dict of that array as `state` and `corner2_image`, the `corner2` camera drawn by
MetaWorld's renderer at its own 480×480 and turned upright. That camera stands where LeRobot's
MetaWorld environment puts it (`LEROBOT_CORNER2`, nearer the table than MetaWorld's own corner2):
the view LeRobot's MetaWorld datasets and policies were made with.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal, get_args

import numpy as np

import seq
from seq.shelf.metaworld_distractor import env_class, shape_of
from seq.shelf.metaworld_variants import EVOLVE_OPERATORS, apply_variant

MT10 = [
    "reach-v3",
    "push-v3",
    "pick-place-v3",
    "door-open-v3",
    "drawer-open-v3",
    "drawer-close-v3",
    "button-press-topdown-v3",
    "peg-insert-side-v3",
    "window-open-v3",
    "window-close-v3",
]
MT50 = [
    "assembly-v3",
    "basketball-v3",
    "bin-picking-v3",
    "box-close-v3",
    "button-press-topdown-v3",
    "button-press-topdown-wall-v3",
    "button-press-v3",
    "button-press-wall-v3",
    "coffee-button-v3",
    "coffee-pull-v3",
    "coffee-push-v3",
    "dial-turn-v3",
    "disassemble-v3",
    "door-close-v3",
    "door-lock-v3",
    "door-open-v3",
    "door-unlock-v3",
    "hand-insert-v3",
    "drawer-close-v3",
    "drawer-open-v3",
    "faucet-open-v3",
    "faucet-close-v3",
    "hammer-v3",
    "handle-press-side-v3",
    "handle-press-v3",
    "handle-pull-side-v3",
    "handle-pull-v3",
    "lever-pull-v3",
    "pick-place-wall-v3",
    "pick-out-of-hole-v3",
    "pick-place-v3",
    "plate-slide-v3",
    "plate-slide-side-v3",
    "plate-slide-back-v3",
    "plate-slide-back-side-v3",
    "peg-insert-side-v3",
    "peg-unplug-side-v3",
    "soccer-v3",
    "stick-push-v3",
    "stick-pull-v3",
    "push-v3",
    "push-wall-v3",
    "push-back-v3",
    "reach-v3",
    "reach-wall-v3",
    "shelf-place-v3",
    "sweep-into-v3",
    "sweep-v3",
    "window-open-v3",
    "window-close-v3",
]
SEEDS = range(5)
GOALS_SEED = 0
ObsMode = Literal["state", "pixels"]
OBS_MODES = get_args(ObsMode)
CAMERA = "corner2"
# Where LeRobot's MetaWorld environment moves corner2 (MetaWorld's own is at (1.3, -0.2, 1.1)).
LEROBOT_CORNER2 = (0.75, 0.075, 0.7)


def make_env(
    task: str,
    seed: int,
    cache: dict[str, Any] | None = None,
    max_steps: int = 500,
    distractor: str | None = None,
    obs_mode: str = "state",
) -> Any:
    """A MetaWorld env for `task` set to goal configuration `seed % 50`, with its last step's info.

    MetaWorld truncates (and refuses further steps) at `max_path_length`, set to `max_steps` here.
    `distractor` (a shape of `seq.shelf.metaworld_distractor`) adds a free body to the scene.
    `obs_mode`: `state` observes MetaWorld's array, `pixels` `{"state", "corner2_image"}` (module doc).

    `cache` keeps one env and goal set per task (and distractor), so a worker builds each once.
    """
    import gymnasium
    import metaworld
    import mujoco

    class LastInfo(gymnasium.Wrapper):
        """Keeps the last step's info, so `check` can read `info["success"]` from the env."""

        info: dict[str, Any] = {}

        def step(self, action: Any) -> Any:
            output = self.env.step(action)
            self.info = output[-1]
            return output

    class WithCamera(LastInfo):
        """Observes the state and the corner2 camera's image, upright (the camera looks at the
        table upside down and mirrored)."""

        def reset(self, **kwargs: Any) -> Any:
            state, info = self.env.reset(**kwargs)
            # MetaWorld's reset leaves the scene's derived positions (the goal's marker among them)
            # where the previous episode left them; drawn now, the first image would depend on it.
            # The solver's warm start is kept, so the episode steps on as without the camera.
            simulation: Any = self.env.unwrapped
            warmstart = simulation.data.qacc_warmstart.copy()
            mujoco.mj_forward(simulation.model, simulation.data)
            simulation.data.qacc_warmstart[:] = warmstart
            return self.observe(state), info

        def step(self, action: Any) -> Any:
            state, *rest = super().step(action)
            return (self.observe(state), *rest)

        def observe(self, state: Any) -> dict[str, Any]:
            image = np.ascontiguousarray(np.flip(np.asarray(self.env.render()), (0, 1)))
            return {"state": state, f"{CAMERA}_image": image}

    cache = {} if cache is None else cache
    key = task if distractor is None else f"{task}+{distractor}"
    if key not in cache:
        if task not in metaworld.MT1.ENV_NAMES:
            raise ValueError(f"{task!r} is not a MetaWorld v3 task.")
        goals = metaworld.MT1(task, seed=GOALS_SEED)
        task_class = goals.train_classes[task]
        if distractor is not None:
            task_class = env_class(task_class, distractor)
        if obs_mode == "state":
            cache[key] = (LastInfo(task_class()), goals.train_tasks)
        else:
            simulation = task_class(render_mode="rgb_array", camera_name=CAMERA)
            camera = mujoco.mj_name2id(simulation.model, mujoco.mjtObj.mjOBJ_CAMERA, CAMERA)
            simulation.model.cam_pos[camera] = LEROBOT_CORNER2
            cache[key] = (WithCamera(simulation), goals.train_tasks)
    env, goals = cache[key]
    env.unwrapped.set_task(goals[seed % len(goals)])
    env.unwrapped.max_path_length = max_steps
    env.info = {}
    return env


@seq.benchmark(
    name="metaworld",
    conditions={
        "mt10": seq.conditions(tasks=MT10, seeds=SEEDS),
        "mt50": seq.conditions(tasks=MT50, seeds=SEEDS),
    },
    max_steps=500,
    # The corner camera, flipped upright; nothing is recorded unless an eval asks (--record first).
    render=seq.Record(camera="corner2", fps=20, options={"record": "none"}),
)
class MetaWorld(seq.Benchmark):
    # The mutations `seq evolve` may apply to a condition (`seq.shelf.metaworld_variants`).
    evolve_operators = EVOLVE_OPERATORS

    @seq.setup
    def setup(self, obs_mode: ObsMode = "state") -> None:
        if obs_mode == "pixels":
            from seq.capture.render import headless

            headless()  # before MuJoCo is imported
        self.obs_mode = obs_mode
        self.envs: dict[str, Any] = {}

    @seq.reset
    def reset(self, seed: int, variant: seq.Condition) -> Any:
        distractor = shape_of(variant.extra)
        max_steps = variant.max_steps or 500
        env = make_env(variant.task, seed, self.envs, max_steps, distractor, self.obs_mode)
        apply_variant(env, variant.extra)
        return env

    @seq.check
    def check(self, env: Any) -> seq.Step:
        success = float(env.info.get("success", 0.0))
        return seq.Step(done=success >= 1.0, metrics={"success": success})


class _Experts:
    """One scripted expert per task name, built on first use."""

    def __init__(self) -> None:
        self._by_task: dict[str, Any] = {}

    def action(self, obs: Any, task: str | None) -> np.ndarray:
        if task not in self._by_task:
            from metaworld.policies import ENV_POLICY_MAP

            # Every expert warns that its gains exceed the action bounds; the env clips, as intended.
            warnings.filterwarnings("ignore", message=r"Constant\(s\) may be too high", category=UserWarning)

            if task not in ENV_POLICY_MAP:
                raise ValueError(f"MetaWorld has no scripted expert for task {task!r}.")
            expert: Any = ENV_POLICY_MAP[task]  # a concrete expert class; the map is typed by their base
            self._by_task[task] = expert()
        return np.asarray(self._by_task[task].get_action(obs), dtype=np.float32)


@seq.policy(name="metaworld-expert")
class MetaWorldExpert(seq.Policy):
    """MetaWorld's scripted expert for the task named by the instruction."""

    @seq.load
    def load(self, weights_dir: Any) -> None:
        self.experts = _Experts()

    @seq.infer
    def infer(self, obs: Any, *, seed: int | None = None, instruction: str | None = None) -> np.ndarray:
        return self.experts.action(obs, instruction)


@seq.policy(name="noisy-expert")
class NoisyExpert(seq.Policy):
    """The scripted expert plus Gaussian action noise of standard deviation `noise`, drawn from the
    act's seed (so a rerun replays exactly); raise `noise` to lower the success rate on purpose."""

    @seq.load
    def load(self, weights_dir: Any) -> None:
        self.experts = _Experts()

    @seq.infer
    def infer(
        self, obs: Any, *, seed: int | None = None, instruction: str | None = None, noise: float = 0.5
    ) -> np.ndarray:
        action = self.experts.action(obs, instruction)
        jitter = np.random.default_rng(seed).normal(0.0, noise, size=action.shape)
        return np.clip(action + jitter, -1.0, 1.0).astype(np.float32)
