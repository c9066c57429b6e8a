"""`libero-noisy-scripted`: `libero-scripted` with Gaussian action noise drawn from the act's seed,
a target that fails some of LIBERO's episodes for `seq evolve` to mine (a rerun replays it
exactly). Deploy it with `seq deploy tests/evolve/libero_noisy_policy.py`."""

from __future__ import annotations

from typing import Any

import numpy as np

import seq
from seq.shelf.libero_scripted import scripted_action


@seq.policy(name="libero-noisy-scripted")
class LiberoNoisyScripted(seq.Policy):
    """The scripted policy's action plus noise of standard deviation `noise` on every component."""

    benchmark_parameters = {"obs_mode": "state"}
    inputs = {"state": (8,), "objects": None, "object_boxes": None, "goal": None}

    @seq.infer
    def infer(
        self, obs: Any, *, seed: int | None = None, instruction: str | None = None, noise: float = 0.5
    ) -> np.ndarray:
        action = scripted_action(obs)
        jitter = np.random.default_rng(seed).normal(0.0, noise, size=action.shape)
        return np.clip(action + jitter, -1.0, 1.0).astype(np.float32)
