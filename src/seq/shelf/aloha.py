"""ALOHA bimanual tasks (`pip install 'seq[aloha]'`, gym-aloha 0.1.5 on dm-control 1.0.28 and
MuJoCo 3.3.0, which MetaWorld shares): the `aloha` benchmark, for the `random` policy.

Tasks `insertion` and `transfer-cube`. Observations are images only (`{"top": 480×640×3 uint8}`,
rendered by MuJoCo offscreen: EGL, else OSMesa, chosen before dm-control is imported); setup
parameter `obs_type=pixels_agent_pos` gives gym-aloha's `{"pixels": {"top": ...}, "agent_pos":
14 joint positions}` instead, the observation LeRobot's ALOHA policies take. The reward
counts the stages a task reached; `success` is reward == 4, the env's own `is_success`, and
`max_reward` the highest stage an episode reached, a continuous metric. Episodes are 400 steps.
Rendering is the cost (~8 steps/s here with MuJoCo's default shadows and multisampling); setup
parameter `fast_render=True` (the default) turns both off for the observation camera.
"""

from __future__ import annotations

from typing import Any, Literal

import seq

TASKS = {"insertion": "gym_aloha/AlohaInsertion-v0", "transfer-cube": "gym_aloha/AlohaTransferCube-v0"}
MAX_STEPS = 400


def make_env(task: str, fast_render: bool = True, obs_type: str = "pixels") -> Any:
    """An ALOHA env that keeps its last reward and info for `check`."""
    from seq.capture.render import headless

    headless()  # before dm-control (and MuJoCo) are imported
    import gym_aloha  # noqa: F401  (registers the envs)
    import gymnasium

    class Aloha(gymnasium.Wrapper):
        reward: float = 0.0
        best: float = 0.0
        info: dict[str, Any] = {}

        def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:
            self.reward = self.best = 0.0
            self.info = {}
            return self.env.reset(seed=seed, options=options)

        def step(self, action: Any) -> Any:
            output = self.env.step(action)
            self.reward, self.info = float(output[1]), output[-1]
            self.best = max(self.best, self.reward)
            return output

    if task not in TASKS:
        raise ValueError(f"{task!r} is not an ALOHA task (known: {', '.join(TASKS)}).")
    env = Aloha(gymnasium.make(TASKS[task], obs_type=obs_type))
    if fast_render:
        simulation: Any = env.unwrapped
        model = simulation._env.physics.model
        model.light_castshadow[:] = 0
        model.vis.quality.offsamples = 0
    return env


@seq.benchmark(
    name="aloha",
    conditions=seq.conditions(tasks=list(TASKS), seeds=range(10)),
    max_steps=MAX_STEPS,
)
class Aloha(seq.Benchmark):
    @seq.setup
    def setup(
        self, fast_render: bool = True, obs_type: Literal["pixels", "pixels_agent_pos"] = "pixels"
    ) -> None:
        self.fast_render, self.obs_type = fast_render, obs_type
        self.envs: dict[str, Any] = {}

    @seq.reset
    def reset(self, seed: int, variant: seq.Condition) -> Any:
        if variant.task not in self.envs:
            self.envs[variant.task] = make_env(variant.task, self.fast_render, self.obs_type)
        return self.envs[variant.task]

    @seq.check
    def check(self, env: Any) -> seq.Step:
        success = float(env.reward >= 4.0)
        return seq.Step(done=success == 1.0, metrics={"success": success, "max_reward": env.best})
