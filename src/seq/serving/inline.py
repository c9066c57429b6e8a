"""A policy called in the worker's own process: the cheapest path, for CPU policies.

The episode loop talks to any policy through `act(obs, seed=, instruction=)`, which returns a 2-D
action chunk; a served policy (`seq.serving.client.RemotePolicy`, behind a websocket) implements
the same two methods, so the loop never knows which one it drives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from seq.authoring.policy import Policy, policy_spec_of


class PolicyHandle(Protocol):
    def act(self, obs: Any, *, seed: int, instruction: str | None) -> np.ndarray: ...

    def begin_episode(self, action_space: Any) -> None: ...


def as_chunk(output: Any) -> np.ndarray:
    """Normalise what `infer` returned to a chunk of shape `[H, ...]`.

    A scalar or a 1-D array is one action; a 2-D array (`[H, D]`) is a chunk of H actions; a dict
    is read through its `actions` key.
    """
    if isinstance(output, dict):
        if "actions" not in output:
            raise ValueError(f"infer returned a dict without an 'actions' key (keys: {sorted(output)}).")
        output = output["actions"]
    chunk = np.asarray(output)
    if chunk.ndim <= 1:
        return chunk[None]
    if chunk.ndim == 2:
        if chunk.shape[0] == 0:
            raise ValueError("infer returned an empty action chunk.")
        return chunk
    raise ValueError(f"infer returned an array of shape {chunk.shape}; expected [D] or a chunk [H, D].")


def split_batch(outputs: Any, size: int) -> list[Any]:
    """The per-request outputs of a batched infer: a list (or tuple) with one entry per request,
    an array whose first axis is the batch, or a dict whose `actions` is such an array."""
    if isinstance(outputs, dict) and "actions" in outputs:
        actions = np.asarray(outputs["actions"])
        if actions.ndim >= 1 and len(actions) == size:
            return list(actions)
    elif isinstance(outputs, Sequence | np.ndarray) and not isinstance(outputs, str | bytes):
        if len(outputs) == size:
            return list(outputs)
    got = f"{len(outputs)} outputs" if hasattr(outputs, "__len__") else type(outputs).__name__
    raise ValueError(f"a batched infer must return one output per observation: expected {size}, got {got}.")


class InlinePolicy:
    """Calls a policy instance's `@seq.infer` directly, with the eval's parameters.

    A batched infer (`@seq.infer(batched=True)`) is called with batches of one, so an inline eval
    and a served one give the same rows.
    """

    def __init__(self, instance: Policy, parameters: dict[str, Any]) -> None:
        spec = policy_spec_of(type(instance))
        self.instance = instance
        self._infer = getattr(instance, spec.hooks["infer"])
        self._batched = spec.batched
        self._parameters = parameters

    def begin_episode(self, action_space: Any) -> None:
        self.instance.action_space = action_space

    def act(self, obs: Any, *, seed: int, instruction: str | None) -> np.ndarray:
        if self._batched:
            outputs = self._infer([obs], seed=[seed], instruction=[instruction], **self._parameters)
            return as_chunk(split_batch(outputs, 1)[0])
        return as_chunk(self._infer(obs, seed=seed, instruction=instruction, **self._parameters))
