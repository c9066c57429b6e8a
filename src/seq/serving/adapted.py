"""A policy seen through an adapter: the episode loop drives it like any other `PolicyHandle`.

Each observation goes through the adapter's obs transforms before the policy sees it, and each
action of the chunk the policy returns goes through its action transforms before the env does:
reset → (adapter → policy → adapter) → step → check. An episode transform that changes the
instruction changes what every act of that episode carries too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from seq.authoring.adapter import Adapter
from seq.authoring.begin import EpisodeStart
from seq.serving.inline import ActRequest, PolicyHandle, act_all, as_chunk


class AdaptedPolicy:
    """Wraps a `PolicyHandle` (inline or served) with an adapter instance."""

    def __init__(self, handle: PolicyHandle, adapter: Adapter) -> None:
        self.handle = handle
        self.adapter = adapter
        self.instructions: dict[int, str | None] = {}  # by slot, where the episode transforms changed it

    def begin_episode(self, action_space: Any, slot: int = 0, episode: EpisodeStart | None = None) -> None:
        self.instructions.pop(slot, None)
        if episode is not None:
            told = self.adapter.transform_episode(episode)
            if told.instruction != episode.instruction:
                self.instructions[slot] = told.instruction
            episode = told
        self.handle.begin_episode(action_space, slot, episode)

    def end_episode(self, result: Any, slot: int = 0) -> None:
        end = getattr(self.handle, "end_episode", None)
        if end is not None:
            end(result, slot)

    def take_plans(self, slot: int = 0) -> list[dict[str, Any]]:
        take = getattr(self.handle, "take_plans", None)
        return take(slot) if take is not None else []

    @property
    def plans(self) -> bool:
        return bool(getattr(self.handle, "plans", False))

    def act(self, obs: Any, *, seed: int, instruction: str | None) -> np.ndarray:
        instruction = self.instructions.get(0, instruction)
        chunk = self.handle.act(self.adapter.transform_obs(obs), seed=seed, instruction=instruction)
        return as_chunk(self.adapter.transform_chunk(chunk))

    def act_many(self, requests: Sequence[ActRequest]) -> list[np.ndarray | Exception]:
        outcomes: list[np.ndarray | Exception | None] = [None] * len(requests)
        adapted, positions = [], []
        for index, request in enumerate(requests):
            try:
                instruction = self.instructions.get(request.slot, request.instruction)
                obs = self.adapter.transform_obs(request.obs)
                adapted.append(replace(request, obs=obs, instruction=instruction))
                positions.append(index)
            except Exception as error:
                outcomes[index] = error
        answers = act_all(self.handle, adapted) if adapted else []
        for index, answer in zip(positions, answers, strict=True):
            if isinstance(answer, Exception):
                outcomes[index] = answer
                continue
            try:
                outcomes[index] = as_chunk(self.adapter.transform_chunk(answer))
            except Exception as error:
                outcomes[index] = error
        return outcomes  # type: ignore[return-value]
