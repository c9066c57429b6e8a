"""MetaWorld's own scripted experts (`metaworld.policies`), and a noisy version of them."""

from __future__ import annotations

from typing import Any

import numpy as np

import seq


class _Experts:
    """One scripted expert per task name, built on first use."""

    def __init__(self) -> None:
        self._by_task: dict[str, Any] = {}

    def action(self, obs: Any, task: str | None) -> np.ndarray:
        if task not in self._by_task:
            from metaworld.policies import ENV_POLICY_MAP

            if task not in ENV_POLICY_MAP:
                raise ValueError(f"MetaWorld has no scripted expert for task {task!r}.")
            self._by_task[task] = ENV_POLICY_MAP[task]()
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
    def infer(self, obs: Any, *, seed: int | None = None, instruction: str | None = None,
              noise: float = 0.5) -> np.ndarray:
        action = self.experts.action(obs, instruction)
        jitter = np.random.default_rng(seed).normal(0.0, noise, size=action.shape)
        return np.clip(action + jitter, -1.0, 1.0).astype(np.float32)
