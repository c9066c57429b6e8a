"""What the episode loop checks of the policy's output: it must be an action (the env's side is
`seq.authoring.env_contract`). A breach is a `ContractError` whose message names whose it is (the
policy, or the env and its benchmark) and what was wrong; it is recorded as that one's error,
without a traceback (seq's own frames would say nothing more)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from seq.authoring.env_contract import ContractError

_SUMMED_IN_PYTHON = 64  # values; numpy's reduction costs more below about this


def policy_name(handle: Any) -> str:
    """`the policy NAME` (or `the policy at URL` for a server that names none), through an adapter."""
    inner = getattr(handle, "handle", None)  # an AdaptedPolicy
    if inner is not None:
        return policy_name(inner)
    spec = getattr(handle, "spec", None)
    name = getattr(spec, "name", None)
    if name:
        return f"the policy {name}"
    described = (getattr(handle, "metadata", None) or {}).get("policy")
    if isinstance(described, dict) and described.get("label"):
        return f"the policy {described['label']}"
    url = getattr(handle, "url", None)
    return f"the policy at {url}" if url else f"the policy {type(handle).__name__}"


def _not_an_action(chunk: np.ndarray) -> str | None:
    """What is wrong with a chunk whose values are not numbers, or None when they are."""
    if chunk.dtype.kind in "biuf":
        return None
    if chunk.dtype.kind in "US":
        return f"returned a string ({str(chunk.reshape(-1)[0])!r}), not an action"
    if chunk.dtype == object:
        values = chunk.reshape(-1)
        if values.size and all(value is None for value in values):
            return "returned None, not an action"
        kinds = sorted({type(value).__name__ for value in values})
        return f"returned {', '.join(kinds)} values, not an action (numbers)"
    return f"returned values of dtype {chunk.dtype}, not an action (real numbers)"


def _numbers(count: int) -> str:
    return f"{count} number" if count == 1 else f"{count} numbers"


def action_size(action_space: Any) -> int | None:
    """The numbers in one action of `action_space`, where it declares a shape (None: it does not).
    An episode reads it once, so each chunk's check is one comparison."""
    shape = getattr(action_space, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, (int, np.integer)) for n in shape):
        return math.prod(int(n) for n in shape)
    return None


def checked_chunk(
    chunk: Any, action_space: Any, size: int | None, policy: Any
) -> tuple[np.ndarray, np.ndarray | None]:
    """The chunk `[H, ...]` the `policy` handle returned, as an array of numbers, each action of
    `size` numbers (`action_size(action_space)`; None: any), and which of its actions hold a NaN
    (None: none); else a `ContractError` naming the policy."""
    if (  # the common case, every step: a chunk of H actions of numbers, each of the right size
        type(chunk) is np.ndarray
        and chunk.ndim == 2
        and len(chunk)
        and (size is None or chunk.shape[1] == size)
    ):
        kind = chunk.dtype.kind
        if kind == "f":
            return chunk, nan_rows(chunk)
        if kind in "iub":
            return chunk, None
    array = np.asarray(chunk)
    if array.ndim == 0:
        array = array[None]
    wrong = _not_an_action(array)
    if wrong is not None:
        raise ContractError(f"{policy_name(policy)} {wrong}.")
    if len(array) == 0:
        raise ContractError(f"{policy_name(policy)} returned an empty action chunk.")
    if size is not None and math.prod(array.shape[1:]) != size:
        got = math.prod(array.shape[1:])
        shape = tuple(int(n) for n in action_space.shape)
        raise ContractError(
            f"{policy_name(policy)} returned actions of shape {tuple(array.shape[1:])} "
            f"({_numbers(got)} each) for an action space of shape {shape} ({_numbers(size)})."
        )
    return array, (nan_rows(array) if array.dtype.kind == "f" else None)


def nan_rows(chunk: np.ndarray) -> np.ndarray | None:
    """Which actions of a float chunk hold a NaN or an infinity (None: none does)."""
    if chunk.size <= _SUMMED_IN_PYTHON:  # a sum is not finite where any value is not; Python's is
        total = sum(chunk.ravel().tolist())  # cheaper here
    else:
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is looked at below
            total = np.add.reduce(chunk, axis=None)
    if math.isfinite(total):  # a NaN or an infinity makes the sum NaN or infinite
        return None
    rows = ~np.isfinite(chunk.reshape(len(chunk), -1)).all(axis=1)  # or finite values overflowed: look
    return rows if rows.any() else None
