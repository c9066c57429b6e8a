"""A policy called in the worker's own process: the cheapest path, for CPU policies.

The episode loop talks to any policy through `act(obs, seed=, instruction=)`, which returns a 2-D
action chunk; a served policy (`seq.serving.client.RemotePolicy`, behind a websocket) implements
the same methods, so the loop never knows which one it drives. A worker that runs several episodes
side by side (`envs_per_worker`) asks for all their chunks at once with `act_many`: one batched
call of a batched policy, one message to a served one.

Inline as served, a policy may write into the arrays of its observation: an array the env handed
out read-only is copied first (`inputs.writable`), so inline and served inputs never differ.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from seq.authoring.begin import EpisodeStart
from seq.authoring.policy import Policy, policy_spec_of
from seq.serving.inputs import writable
from seq.serving.planning import planning_for


@dataclass(slots=True)  # one per act: a frozen dataclass costs three times as much to make
class ActRequest:
    """One episode asking for its next chunk: the observation, the seed the act carries, the
    instruction, and which of its worker's side-by-side episodes (`slot`) asks."""

    obs: Any
    seed: int
    instruction: str | None
    slot: int = 0


class PolicyHandle(Protocol):
    def begin_episode(self, action_space: Any, slot: int = 0, episode: EpisodeStart | None = None) -> None:
        """An episode starts in `slot` (0 unless the worker runs several side by side); the
        policy's `@seq.begin` is told which (`episode`). A handle may also have
        `end_episode(result, slot)`, called once the episode ended (a vla-eval server is told)."""

    def act(self, obs: Any, *, seed: int, instruction: str | None) -> np.ndarray:
        """The chunk for one observation (an episode in slot 0)."""


def act_all(handle: PolicyHandle, requests: Sequence[ActRequest]) -> list[np.ndarray | Exception]:
    """The chunks of several requests, in order: the handle's `act_many(requests)` where it has
    one (a batch; it raises only when no request could be answered, as when a server is
    unreachable), else its `act` in turn (an openpi or vla-eval server, one episode at a time); an
    act that raised is its request's outcome."""
    act_many = getattr(handle, "act_many", None)
    return act_many(requests) if act_many is not None else act_in_turn(handle.act, requests)


def act_in_turn(
    act: Callable[..., np.ndarray], requests: Sequence[ActRequest]
) -> list[np.ndarray | Exception]:
    """Each request's chunk from `act`, one after another; an act that raised is its outcome."""
    outcomes: list[np.ndarray | Exception] = []
    for request in requests:
        try:
            outcomes.append(act(request.obs, seed=request.seed, instruction=request.instruction))
        except Exception as error:
            outcomes.append(error)
    return outcomes


def as_chunk(output: Any) -> np.ndarray:
    """Normalise what `infer` returned to a chunk of shape `[H, ...]`.

    A scalar or a 1-D array is one action; a 2-D array (`[H, D]`) is a chunk of H actions; a dict
    is read through its `actions` key.
    """
    if type(output) is np.ndarray:
        chunk = output
    else:
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
        self.spec = spec
        self.instance = instance
        self._infer = getattr(instance, spec.hooks["infer"])
        self._batched = spec.batched
        self._parameters = parameters
        self._spaces: dict[int, Any] = {}  # each slot's action space
        self.planning = planning_for(instance, spec)  # a composite's planner, one robot per slot
        self._plans: dict[int, list[dict[str, Any]]] = {}  # the plans each slot's last act first used

    def begin_episode(self, action_space: Any, slot: int = 0, episode: EpisodeStart | None = None) -> None:
        self._spaces[slot] = action_space
        self.instance.action_space = action_space
        self.spec.begin(self.instance, episode)
        if self.planning is not None:
            self.planning.begin(slot)

    def end_episode(self, result: Any, slot: int = 0) -> None:
        if self.planning is not None:
            self.planning.end(slot)

    def take_plans(self, slot: int = 0) -> list[dict[str, Any]]:
        """The plans `slot`'s last act was the first to use (see `seq.serving.planning`)."""
        return self._plans.pop(slot, [])

    @property
    def plans(self) -> bool:
        """A composite policy: its episodes count the plans that reached infer."""
        return self.planning is not None

    def _instruction(self, obs: Any, instruction: str | None, slot: int) -> str | None:
        """The instruction infer gets: the slot's latest plan, for a composite policy."""
        if self.planning is None:
            return instruction
        instruction, self._plans[slot] = self.planning.use(slot, obs, instruction)
        return instruction

    def act_many(self, requests: Sequence[ActRequest]) -> list[np.ndarray | Exception]:
        """A batched policy gets the requests that share an action space as one call; any other
        is called once per request."""
        outcomes: list[np.ndarray | Exception | None] = [None] * len(requests)
        groups: dict[int, list[int]] = {}
        for index, request in enumerate(requests):
            groups.setdefault(id(self._spaces.get(request.slot)), []).append(index)
        for indices in groups.values():
            self.instance.action_space = self._spaces.get(requests[indices[0]].slot)
            group = [requests[index] for index in indices]
            if not self._batched:
                for index, request in zip(indices, group, strict=True):
                    try:
                        outcomes[index] = self.act(
                            request.obs, seed=request.seed, instruction=request.instruction, slot=request.slot
                        )
                    except Exception as error:
                        outcomes[index] = error
                continue
            try:
                observations = [writable(r.obs) for r in group]
                outputs = self._infer(
                    observations,
                    seed=[r.seed for r in group],
                    instruction=[
                        self._instruction(obs, r.instruction, r.slot)
                        for obs, r in zip(observations, group, strict=True)
                    ],
                    **self._parameters,
                )
                for index, output in zip(indices, split_batch(outputs, len(group)), strict=True):
                    outcomes[index] = as_chunk(output)
            except Exception as error:
                for index in indices:
                    outcomes[index] = error
        return outcomes  # type: ignore[return-value]

    def act(self, obs: Any, *, seed: int, instruction: str | None, slot: int = 0) -> np.ndarray:
        obs = writable(obs)
        if self.planning is not None:
            instruction = self._instruction(obs, instruction, slot)
        if self._batched:
            outputs = self._infer([obs], seed=[seed], instruction=[instruction], **self._parameters)
            return as_chunk(split_batch(outputs, 1)[0])
        if not self._parameters:
            return as_chunk(self._infer(obs, seed=seed, instruction=instruction))
        return as_chunk(self._infer(obs, seed=seed, instruction=instruction, **self._parameters))
