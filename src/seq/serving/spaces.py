"""Gym spaces as plain data, so an env's `action_space` can reach a served policy.

Inline, a policy reads the env's own `action_space`; served, the client sends a description at
each episode start and the server rebuilds an equivalent space (a gymnasium one when gymnasium is
installed, else a small stand-in with the same attributes). Box bounds travel as exact floats.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np


def describe_space(space: Any) -> dict[str, Any] | None:
    """A plain-data description of a gym(nasium) space, or None for no space."""
    if space is None:
        return None
    kind = type(space).__name__
    if kind == "Box" and hasattr(space, "low"):
        low, high = np.asarray(space.low), np.asarray(space.high)
        return {
            "type": "Box",
            "low": _bounds(low),
            "high": _bounds(high),
            "shape": list(low.shape),
            "dtype": np.dtype(space.dtype or low.dtype).str,
        }
    if kind == "Discrete" and hasattr(space, "n"):
        return {"type": "Discrete", "n": int(space.n), "start": int(getattr(space, "start", 0))}
    if kind == "MultiDiscrete" and hasattr(space, "nvec"):
        return {"type": "MultiDiscrete", "nvec": np.asarray(space.nvec).tolist()}
    if kind == "MultiBinary" and hasattr(space, "n"):
        return {"type": "MultiBinary", "n": np.asarray(space.n).tolist()}
    if kind == "Dict" and hasattr(space, "spaces"):
        return {"type": "Dict", "spaces": {str(k): describe_space(v) for k, v in space.spaces.items()}}
    if kind == "Tuple" and hasattr(space, "spaces"):
        return {"type": "Tuple", "spaces": [describe_space(v) for v in space.spaces]}
    return {"type": kind, "repr": repr(space)}


def _bounds(values: np.ndarray) -> Any:
    """Exact bounds as plain numbers: one number when they are all equal (an image's 0-255)."""
    flat = values.reshape(-1)
    if flat.size > 1 and np.all(flat == flat[0]):
        return flat[0].item()
    return values.tolist()


@dataclass(frozen=True)
class PlainBox:
    """What a policy reads from a Box when gymnasium is not installed where it is served."""

    low: np.ndarray
    high: np.ndarray
    shape: tuple[int, ...]
    dtype: np.dtype


@dataclass(frozen=True)
class PlainSpace:
    """Any other space, when gymnasium is not installed: its description as attributes."""

    type: str
    description: dict[str, Any]


def _gymnasium() -> Any:
    try:
        import gymnasium.spaces as spaces
    except ImportError:
        return None
    return spaces


def build_space(description: dict[str, Any] | None) -> Any:
    """The space a description stands for (see `describe_space`)."""
    if description is None:
        return None
    if not isinstance(description, dict) or "type" not in description:
        raise ValueError(f"not a space description: {description!r}")
    kind, spaces = description["type"], _gymnasium()
    if kind == "Box":
        dtype = np.dtype(description["dtype"])
        shape = tuple(int(n) for n in description["shape"])
        low = np.broadcast_to(np.asarray(description["low"], dtype=dtype), shape).copy()
        high = np.broadcast_to(np.asarray(description["high"], dtype=dtype), shape).copy()
        if spaces is not None:
            return spaces.Box(low=low, high=high, shape=shape, dtype=dtype)
        return PlainBox(low, high, shape, dtype)
    if spaces is None:
        return PlainSpace(kind, description)
    if kind == "Discrete":
        return spaces.Discrete(description["n"], start=description.get("start", 0))
    if kind == "MultiDiscrete":
        return spaces.MultiDiscrete(description["nvec"])
    if kind == "MultiBinary":
        return spaces.MultiBinary(description["n"])
    if kind == "Dict":
        return spaces.Dict({k: build_space(v) for k, v in description["spaces"].items()})
    if kind == "Tuple":
        return spaces.Tuple([build_space(v) for v in description["spaces"]])
    return PlainSpace(kind, description)


class SpaceCache:
    """Rebuilds each distinct description once; equal descriptions give the same object, so the
    server can batch requests whose episodes share an action space."""

    def __init__(self) -> None:
        self._built: dict[str, Any] = {}

    def get(self, description: dict[str, Any] | None) -> Any:
        if description is None:
            return None
        key = json.dumps(description, sort_keys=True, default=str)
        if key not in self._built:
            if len(self._built) > 1024:
                self._built.clear()
            self._built[key] = build_space(description)
        return self._built[key]
