"""Uniformly random actions within the env's action space, drawn from the act's seed."""

from __future__ import annotations

from typing import Any

import numpy as np

import seq


@seq.policy(name="random")
class RandomPolicy(seq.Policy):
    """A baseline for any benchmark whose env has a Box `action_space`; reproducible per act seed."""

    @seq.infer
    def infer(self, obs: Any, *, seed: int | None = None, instruction: str | None = None) -> np.ndarray:
        space = self.action_space
        if space is None or not hasattr(space, "low"):
            raise ValueError("the random policy needs an env whose action_space is a Box (low and high).")
        low, high = np.asarray(space.low, dtype=np.float64), np.asarray(space.high, dtype=np.float64)
        return np.random.default_rng(seed).uniform(low, high).astype(np.asarray(space.low).dtype)
