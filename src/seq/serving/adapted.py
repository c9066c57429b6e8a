"""A policy seen through an adapter: the episode loop drives it like any other `PolicyHandle`.

Each observation goes through the adapter's obs transforms before the policy sees it, and each
action of the chunk the policy returns goes through its action transforms before the env does:
reset → (adapter → policy → adapter) → step → check.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from seq.authoring.adapter import Adapter
from seq.serving.inline import PolicyHandle, as_chunk


class AdaptedPolicy:
    """Wraps a `PolicyHandle` (inline or served) with an adapter instance."""

    def __init__(self, handle: PolicyHandle, adapter: Adapter) -> None:
        self.handle = handle
        self.adapter = adapter

    def begin_episode(self, action_space: Any) -> None:
        self.handle.begin_episode(action_space)

    def act(self, obs: Any, *, seed: int, instruction: str | None) -> np.ndarray:
        chunk = self.handle.act(self.adapter.transform_obs(obs), seed=seed, instruction=instruction)
        return as_chunk(self.adapter.transform_chunk(chunk))
