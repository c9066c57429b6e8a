"""Fetch (`pip install 'seq[fetch]'`, gymnasium-robotics 1.4.2 on MuJoCo 3.3.0): the `fetch`
benchmark and the `fetch-scripted` policy.

Tasks `reach`, `push` and `pick-and-place` (`FetchReach-v4`, `FetchPush-v4`,
`FetchPickAndPlace-v4`); each condition is a task and a seed of the env's own random start and
goal. `success` is the env's `info["is_success"]`; an episode ends at the first success or at 50
steps (the envs' own limit). Observations are gymnasium-robotics' dicts (`observation`,
`achieved_goal`, `desired_goal`); actions are a gripper displacement and a finger command in
[-1, 1]. No expert ships with the package: `fetch-scripted` is a small state-machine controller.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import seq

TASKS = {"reach": "FetchReach-v4", "push": "FetchPush-v4", "pick-and-place": "FetchPickAndPlace-v4"}
SEEDS = range(20)
MAX_STEPS = 50


def make_env(task: str) -> Any:
    """A Fetch env for `task` that keeps its last step's info."""
    import gymnasium
    import gymnasium_robotics

    gymnasium.register_envs(gymnasium_robotics)

    class LastInfo(gymnasium.Wrapper):
        info: dict[str, Any] = {}

        def reset(self, **kwargs: Any) -> Any:
            self.info = {}
            return self.env.reset(**kwargs)

        def step(self, action: Any) -> Any:
            output = self.env.step(action)
            self.info = output[-1]
            return output

    if task not in TASKS:
        raise ValueError(f"{task!r} is not a Fetch task (known: {', '.join(TASKS)}).")
    return LastInfo(gymnasium.make(TASKS[task]))


@seq.benchmark(
    name="fetch",
    conditions=seq.conditions(tasks=list(TASKS), seeds=SEEDS),
    max_steps=MAX_STEPS,
)
class Fetch(seq.Benchmark):
    @seq.setup
    def setup(self) -> None:
        self.envs: dict[str, Any] = {}

    @seq.reset
    def reset(self, seed: int, variant: seq.Condition) -> Any:
        if variant.task not in self.envs:
            self.envs[variant.task] = make_env(variant.task)
        return self.envs[variant.task]

    @seq.check
    def check(self, env: Any) -> seq.Step:
        success = float(env.info.get("is_success", 0.0))
        return seq.Step(done=success >= 1.0, metrics={"success": success})


def _toward(position: np.ndarray, target: np.ndarray, gain: float = 10.0) -> np.ndarray:
    return np.clip((target - position) * gain, -1.0, 1.0)


def scripted_action(task: str, obs: dict[str, Any]) -> np.ndarray:
    """One action of the scripted controller, from the observation alone (no memory)."""
    state = np.asarray(obs["observation"], dtype=np.float64)
    grip, goal = state[:3], np.asarray(obs["desired_goal"], dtype=np.float64)
    if task == "reach":
        return np.append(_toward(grip, goal), 0.0).astype(np.float32)
    block = state[3:6]
    if task == "push":
        heading = goal[:2] - block[:2]
        distance = float(np.linalg.norm(heading))
        if distance < 0.01:
            return np.zeros(4, dtype=np.float32)
        heading /= distance
        behind = np.append(block[:2] - heading * 0.06, block[2])
        offset = grip[:2] - block[:2]
        along, across = float(offset @ heading), float(abs(offset @ np.array([-heading[1], heading[0]])))
        if along < -0.03 and across < 0.015 and abs(grip[2] - block[2]) < 0.015:  # in place: push
            return np.append(_toward(grip, np.append(goal[:2], block[2]), 6.0), -1.0).astype(np.float32)
        if np.linalg.norm(grip[:2] - behind[:2]) > 0.012:  # go round, above the block
            return np.append(_toward(grip, np.append(behind[:2], block[2] + 0.06)), -1.0).astype(np.float32)
        return np.append(_toward(grip, behind), -1.0).astype(np.float32)
    # pick and place
    fingers = float(state[9] + state[10])
    near = float(np.linalg.norm(block - grip))
    if near < 0.02 and fingers < 0.07:  # holding it: carry it to the goal
        return np.append(_toward(grip, goal), -1.0).astype(np.float32)
    if np.linalg.norm(grip[:2] - block[:2]) > 0.01:  # above the block, fingers open
        return np.append(_toward(grip, np.append(block[:2], block[2] + 0.05)), 1.0).astype(np.float32)
    if grip[2] - block[2] > 0.01:  # down to it
        return np.append(_toward(grip, block), 1.0).astype(np.float32)
    return np.array([0.0, 0.0, 0.0, -1.0], dtype=np.float32)  # close on it


@seq.policy(name="fetch-scripted")
class FetchScripted(seq.Policy):
    """A scripted controller for the `fetch` tasks (the instruction names the task)."""

    @seq.infer
    def infer(self, obs: Any, *, seed: int | None = None, instruction: str | None = None) -> np.ndarray:
        if instruction not in TASKS:
            raise ValueError(f"fetch-scripted knows the tasks {', '.join(TASKS)}, not {instruction!r}.")
        return scripted_action(instruction, obs)
