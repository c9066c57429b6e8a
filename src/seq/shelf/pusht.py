"""Push-T (`pip install 'seq[pusht]'`, gym-pusht 0.1.8: pymunk physics, pygame drawing, no GL):
the `pusht` benchmark and the `pusht-pusher` policy.

A round agent pushes a T-shaped block onto a fixed goal pose. Each condition is a seed of the
env's own random start; `success` is the env's `is_success` (the block covers more than 95% of
the goal), `coverage` the covered fraction at the last step, a continuous metric. An episode ends
at the first success (the env terminates) or at 300 steps. Suites: `default` (50 seeds) and
`at-goal` (the block starts on its goal, the agent away from it: a policy that leaves it alone
succeeds at once, which checks the success signal end to end). Setup parameter `obs_type`:
`state` (agent x, y, block x, y, angle), `pixels` or `pixels_agent_pos` (96×96 images).
"""

from __future__ import annotations

import os
from typing import Any, Literal

import numpy as np

import seq

GOAL = np.array([256.0, 256.0])
GOAL_ANGLE = np.pi / 4
SEEDS = range(50)
MAX_STEPS = 300


def make_env(obs_type: str = "state", at_goal: bool = False) -> Any:
    """A Push-T env that keeps its last step's info (and, `at_goal`, starts with the block on its goal)."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import gym_pusht  # noqa: F401  (registers the env)
    import gymnasium

    class PushT(gymnasium.Wrapper):
        """Keeps the last step's info for `check`; `at_goal` resets the block onto its goal pose."""

        info: dict[str, Any] = {}

        def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:
            self.info = {}
            if not at_goal:
                return self.env.reset(seed=seed, options=options)
            agent = np.random.default_rng(seed).uniform([380.0, 40.0], [480.0, 120.0])
            state = [*agent, *GOAL, GOAL_ANGLE]
            obs, _ = self.env.reset(seed=seed, options={"reset_to_state": state})
            # gym-pusht sets the block's angle after its position, turning it about its centre of
            # mass: shift the position by what that turn moved it.
            simulation: Any = self.env.unwrapped
            moved = np.asarray(simulation.block.position) - GOAL
            state = [*agent, *(GOAL - moved), GOAL_ANGLE]
            return self.env.reset(seed=seed, options={"reset_to_state": state})

        def step(self, action: Any) -> Any:
            output = self.env.step(action)
            self.info = output[-1]
            return output

    env = gymnasium.make(
        "gym_pusht/PushT-v0",
        obs_type=obs_type,
        render_mode="rgb_array",
        visualization_width=256,
        visualization_height=256,
    )
    return PushT(env)


@seq.benchmark(
    name="pusht",
    conditions={
        "default": seq.conditions(tasks=["push-t"], seeds=SEEDS),
        "at-goal": seq.conditions(tasks=["push-t-at-goal"], seeds=range(5)),
    },
    max_steps=MAX_STEPS,
)
class PushT(seq.Benchmark):
    @seq.setup
    def setup(self, obs_type: Literal["state", "pixels", "pixels_agent_pos"] = "state") -> None:
        self.obs_type = obs_type
        self.envs: dict[bool, Any] = {}

    @seq.reset
    def reset(self, seed: int, variant: seq.Condition) -> Any:
        at_goal = variant.task == "push-t-at-goal"
        if at_goal not in self.envs:
            self.envs[at_goal] = make_env(self.obs_type, at_goal)
        return self.envs[at_goal]

    @seq.check
    def check(self, env: Any) -> seq.Step:
        success = float(bool(env.info.get("is_success", False)))
        coverage = float(env.info.get("coverage", 0.0))
        return seq.Step(done=success >= 1.0, metrics={"success": success, "coverage": coverage})


def push_action(obs: Any, radius: float = 130.0) -> np.ndarray:
    """Where to send the agent next: around the block to the side away from the goal, then through
    it towards the goal. It moves the block onto the goal's position but does not turn it."""
    agent, block = np.asarray(obs[:2], float), np.asarray(obs[2:4], float)
    offset = GOAL - block
    distance = float(np.linalg.norm(offset))
    relative = agent - block
    reach = max(float(np.linalg.norm(relative)), 1e-6)
    if distance < 4:  # there: step back and leave it alone
        return np.clip(block + relative / reach * (radius + 40), 10, 502)
    toward = offset / distance
    along = float(relative @ toward)
    lateral = float(np.linalg.norm(relative - along * toward))
    if along < 0 and lateral < 25:  # behind it, in line with the goal: push through
        return np.clip(agent + toward * min(12.0, distance + 5), 10, 502)
    if reach < radius - 10 and float(relative / reach @ -toward) < 0.95:
        return np.clip(block + relative / reach * radius, 10, 502)  # back off from the block first
    angle, target = np.arctan2(relative[1], relative[0]), np.arctan2(-toward[1], -toward[0])
    turn = (target - angle + np.pi) % (2 * np.pi) - np.pi
    if abs(turn) > 0.15:  # circle round it at a safe distance
        step = angle + float(np.clip(turn, -0.35, 0.35))
        return np.clip(block + radius * np.array([np.cos(step), np.sin(step)]), 10, 502)
    return np.clip(block - toward * 75, 10, 502)


@seq.policy(name="pusht-pusher")
class PushTPusher(seq.Policy):
    """A scripted pusher for `pusht` with `obs_type="state"`: it brings the block to the goal's
    position (coverage rises) but does not turn it, so it rarely passes the 95% bar on its own."""

    @seq.infer
    def infer(self, obs: Any, *, seed: int | None = None, instruction: str | None = None) -> np.ndarray:
        state = np.asarray(obs, dtype=np.float64)
        if state.shape != (5,):
            raise ValueError("pusht-pusher needs pusht's state observations (--param obs_type=state).")
        return push_action(state).astype(np.float32)
