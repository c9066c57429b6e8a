"""ManiSkill 3: the `maniskill` benchmark and the `maniskill-motionplanner` policy.

ManiSkill needs numpy < 2 (mplib 0.1.1 crashes with numpy 2) and torch, so the benchmark declares an
image of its own (`IMAGE`), built on the first eval and reused after. torch is pinned to the CPU
build (`2.13.0+cpu`), which the image build finds among the machine's own wheels (`/opt/wheels`,
as pip does here); PyPI's plain `torch` is a multi-GB CUDA build, so where no such wheel lies the
build stops with uv's reason rather than download it. SAPIEN needs a Vulkan driver newer than Debian 12's:
`bash tools/install_vulkan.sh` (as root) installs Mesa 25's lavapipe from bookworm-backports.

Tasks `PushCube-v1`, `PickCube-v1` and `StackCube-v1` with a Panda arm on ManiSkill's CPU (PhysX)
backend, 20 Hz, controller `pd_joint_pos` (7 absolute joint targets and a gripper command in
[-1, 1]: the mode ManiSkill's motion planner drives). Each condition is a task and a seed, passed to
`env.reset(seed=...)`, which draws ManiSkill's own random start and goal. `success` is the env's
`info["success"]`; an episode ends at the first success or at `MAX_STEPS[task]`. Those are not
ManiSkill's registered limits (50 steps, tuned for RL with end-effector control): its
motion-planning solutions take 49-88 steps on PushCube/PickCube and 94-120 on StackCube here, so the
limits are 100 (the horizon ManiSkill's own imitation baselines use with these demos), 100 and 200.

Observations are a dict: `state`, ManiSkill's flat `obs_mode="state"` vector (robot joints, tcp
pose, object and goal poses), and `env_state`, ManiSkill's full simulator state
(`env.get_state()`: every actor's and articulation's pose and velocities, what its demo files store
as `env_states`). Both are privileged ground truth; a policy is free to ignore `env_state`.

`maniskill-motionplanner` is ManiSkill's own expert, the motion-planning solutions in
`mani_skill.examples.motionplanning.panda.solutions`. A solution drives an env itself (it calls
`env.reset` and then `env.step` inside the planner), while seq asks a policy for actions. So the
policy keeps a twin env per task (built on first use, inside the policy: it never touches the
benchmark's env), sets the twin to the observed `env_state`, runs the solution on the twin while
recording every action it sends to `env.step`, and returns the recorded trajectory as one action
chunk, which seq then plays on the real env. If the chunk runs out without success (a failed plan),
the next query plans again from the state then observed (PushCube seed 9: the solution's second
screw plan fails, the replan succeeds; ManiSkill's own one-shot runner counts that seed a failure).
It is open-loop within a chunk: with `steps_per_query` set it would replan every few steps,
restarting the solution each time. Planning takes 0.1-1.3 s an episode, building a twin ~1 s.

Replaying is not bit-exact: the state set on the twin differs from the real one by float rounding
(~1e-8), which contacts amplify (PushCube's final states differ by up to 0.5, one 3.3; PickCube and
StackCube by 1e-3). Success on the real env matched the planner's own on the twin in all 30 seeds
tried (seeds 0-9 of each task). Resetting the twin with the episode's seed instead replays
bit-exactly, but would need the seed in the observation; the state is the honest input.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import numpy as np

import seq

TASKS = ("PushCube-v1", "PickCube-v1", "StackCube-v1")
MAX_STEPS = {"PushCube-v1": 100, "PickCube-v1": 100, "StackCube-v1": 200}
SEEDS = range(10)
CONTROL_MODE = "pd_joint_pos"
CONTROL_HZ = 20.0
_NO_LIMIT = 100_000  # ManiSkill's own time limit never ends an episode here: seq's max_steps does


def _make(task: str, **kwargs: Any) -> Any:
    """A ManiSkill env of `task` on the CPU backends, driven by joint positions."""
    import gymnasium
    import mani_skill.envs  # noqa: F401  (registers the envs)

    if task not in TASKS:
        raise ValueError(f"{task!r} is not a ManiSkill task here (known: {', '.join(TASKS)}).")
    return gymnasium.make(
        task,
        control_mode=CONTROL_MODE,
        sim_backend="cpu",
        render_backend="cpu",
        max_episode_steps=_NO_LIMIT,
        **kwargs,
    )


def _numpy(value: Any) -> np.ndarray:
    """A ManiSkill tensor of one env (`[1, ...]`) as a numpy array without the batch axis."""
    array = value.cpu().numpy() if hasattr(value, "cpu") else np.asarray(value)
    return array[0] if array.ndim and array.shape[0] == 1 else array


def _scalar(value: Any) -> float:
    return float(_numpy(value).reshape(-1)[0])


class ManiSkillEnv:
    """A ManiSkill env of one task seen through seq's gym-style contract, with numpy observations
    (`state`, `env_state`) and plain-number infos; `render()` is the human camera's RGB image."""

    def __init__(self, task: str, render_size: int = 256) -> None:
        self.task = task
        self.env = _make(
            task,
            obs_mode="state",
            render_mode="rgb_array",
            human_render_camera_configs={"width": render_size, "height": render_size},
        )
        self.action_space = self.env.action_space  # one env's Box: 7 joint targets and the gripper
        self.metadata = {"render_fps": CONTROL_HZ}
        self.info: dict[str, float] = {}

    def _obs(self, obs: Any) -> dict[str, np.ndarray]:
        return {
            "state": _numpy(obs).astype(np.float32),
            "env_state": _numpy(self.env.unwrapped.get_state()).astype(np.float32),
        }

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        obs, _ = self.env.reset(seed=seed, options=options)
        self.info = {}
        return self._obs(obs), {}

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict[str, float]]:
        obs, reward, terminated, truncated, info = self.env.step(np.asarray(action, dtype=np.float32))
        self.info = {key: _scalar(value) for key, value in info.items()}
        return self._obs(obs), _scalar(reward), bool(_scalar(terminated)), bool(_scalar(truncated)), self.info

    def render(self) -> np.ndarray:
        return _numpy(self.env.render())

    def close(self) -> None:
        self.env.close()


IMAGE = (
    seq.Image.debian_slim()
    .uv_pip_install("mani-skill==3.0.1", "mplib==0.1.1", "torch==2.13.0+cpu", "numpy<2", "av>=17,<19")
    .apt_install("mesa-vulkan-drivers")
)


@seq.benchmark(
    name="maniskill",
    conditions=[
        condition
        for task in TASKS
        for condition in seq.conditions(tasks=[task], seeds=SEEDS, max_steps=MAX_STEPS[task])
    ],
    max_steps=max(MAX_STEPS.values()),
    # env.render(): ManiSkill's human camera at render_size², every step (20 Hz); only when asked.
    render=seq.Record(fps=20, options={"record": "none"}),
    image=IMAGE,
    env_memory="1GiB",  # a budget, not a measure: a SAPIEN scene and its renderer an env
)
class ManiSkill(seq.Benchmark):
    @seq.setup
    def setup(self, render_size: int = 256) -> None:
        self.render_size = render_size
        self.envs: dict[str, ManiSkillEnv] = {}

    @seq.reset
    def reset(self, seed: int, variant: seq.Condition) -> Any:
        if variant.task not in self.envs:  # an unknown task is refused by name
            self.envs[variant.task] = ManiSkillEnv(variant.task, self.render_size)
        return self.envs[variant.task]

    @seq.check
    def check(self, env: ManiSkillEnv) -> seq.Step:
        success = float(env.info.get("success", 0.0))
        return seq.Step(done=success >= 1.0, metrics={"success": success})


def _solutions() -> dict[str, Any]:
    from mani_skill.examples.motionplanning.panda.solutions import (
        solvePickCube,
        solvePushCube,
        solveStackCube,
    )

    return {"PushCube-v1": solvePushCube, "PickCube-v1": solvePickCube, "StackCube-v1": solveStackCube}


class _Twin:
    """The planner's own env of one task: set to an observed state, it records what a motion-planning
    solution sends to `env.step` (the solution's `env.reset` keeps the observed state)."""

    def __init__(self, task: str) -> None:
        import gymnasium

        twin = self

        class Recording(gymnasium.Wrapper):
            def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:
                self.env.reset(seed=0)
                simulation: Any = self.env.unwrapped
                simulation.set_state(twin.state)
                return simulation.get_obs(), {}

            def step(self, action: Any) -> Any:
                twin.actions.append(np.asarray(action, dtype=np.float32))
                return self.env.step(action)

        self.task = task
        self.env = Recording(_make(task, obs_mode="none"))
        self.solve = _solutions()[task]
        self.state: Any = None
        self.actions: list[np.ndarray] = []
        self.log = ""

    def plan(self, env_state: np.ndarray) -> np.ndarray:
        """The solution's actions from `env_state` on (`[H, 8]`); a plan that fails part-way gives
        the actions up to there, and one that gives none holds the arm still with the gripper open."""
        import torch

        simulation: Any = self.env.unwrapped
        expected = int(simulation.get_state().shape[-1])
        if np.shape(env_state) != (expected,):
            raise ValueError(
                f"maniskill-motionplanner needs the maniskill benchmark's env_state ({expected} numbers "
                f"for {self.task}), got shape {np.shape(env_state)}."
            )
        self.state, self.actions = torch.as_tensor(np.asarray(env_state, dtype=np.float32))[None], []
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):  # the planner prints its failures
            try:
                self.solve(self.env, seed=0, debug=False, vis=False)
            except Exception as error:  # a solution that raises has failed to plan, like one that returns -1
                print(f"{type(error).__name__}: {error}")
        self.log = printed.getvalue()
        if not self.actions:
            self.env.reset()
            joints = _numpy(simulation.agent.robot.get_qpos())[:7]
            self.actions = [np.append(joints, 1.0).astype(np.float32)]
        return np.stack(self.actions)


@seq.policy(name="maniskill-motionplanner")
class ManiSkillMotionPlanner(seq.Policy):
    """ManiSkill's motion-planning solution for the task named by the instruction, planned on a twin
    env set to the observed `env_state` and returned as one action chunk (see the module's doc)."""

    @seq.load
    def load(self, weights_dir: Any) -> None:
        self.twins: dict[str, _Twin] = {}

    @seq.infer
    def infer(self, obs: Any, *, seed: int | None = None, instruction: str | None = None) -> np.ndarray:
        if instruction not in TASKS:
            raise ValueError(
                f"maniskill-motionplanner knows the tasks {', '.join(TASKS)}, not {instruction!r}."
            )
        if not isinstance(obs, dict) or "env_state" not in obs:
            raise ValueError("maniskill-motionplanner needs the maniskill benchmark's obs['env_state'].")
        if instruction not in self.twins:
            self.twins[instruction] = _Twin(instruction)
        return self.twins[instruction].plan(np.asarray(obs["env_state"]))
