"""Gym spaces as plain data, so an env's `action_space` can reach a served policy.

Inline, a policy reads the env's own `action_space`; served, the client sends a description at
each episode start and the server rebuilds an equivalent space (a gymnasium one when gymnasium is
installed, else a small stand-in with the same attributes). Box bounds travel as exact floats.

A description comes from the network, so it is checked before anything is built: its kind, its
nesting, and its size (every element of every Box, MultiDiscrete and MultiBinary together) against
`MAX_SPACE_ELEMENTS`; a shape of 2**40 is refused as a ValueError without allocating a byte. The
server's cache of built spaces is bounded too, by entries and by elements.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
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


MAX_SPACE_ELEMENTS = 2**20  # a space's numbers, all parts together: a camera's Box fits, 2**40 does not
MAX_SPACE_DEPTH = 8  # Dict and Tuple spaces inside one another


def _shape(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or len(value) > 32:
        raise ValueError(f"a space's shape must be a list of at most 32 sizes, got {str(value)[:80]}.")
    if not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n for n in value):
        raise ValueError(f"a space's shape must hold non-negative integers, got {str(value)[:80]}.")
    return tuple(value)


def space_elements(description: Any, depth: int = 0) -> int:
    """How many numbers the space a description stands for holds (a Box's elements, a
    MultiDiscrete's entries …), checked against `MAX_SPACE_ELEMENTS` before anything is built; a
    description that is not a space, or too large, raises ValueError."""
    if description is None:
        return 0
    if not isinstance(description, dict) or not isinstance(description.get("type"), str):
        raise ValueError(f"not a space description: {str(description)[:80]}")
    if depth > MAX_SPACE_DEPTH:
        raise ValueError(f"spaces nest deeper than the limit of {MAX_SPACE_DEPTH} levels.")
    kind = description["type"]
    if kind == "Box":
        count = math.prod(_shape(description.get("shape")))
    elif kind == "MultiDiscrete":
        nvec = description.get("nvec")
        if not isinstance(nvec, list | tuple | int):
            raise ValueError("a MultiDiscrete space needs its 'nvec': a list of whole numbers.")
        try:
            count = np.asarray(nvec, dtype=np.int64).size
        except (TypeError, ValueError, OverflowError):
            raise ValueError("a MultiDiscrete space's 'nvec' holds whole numbers only.") from None
    elif kind == "MultiBinary":
        n = description.get("n")
        count = math.prod(_shape(n if isinstance(n, list | tuple) else [n]))
    elif kind in ("Dict", "Tuple"):
        parts = description.get("spaces")
        parts = list(parts.values()) if isinstance(parts, dict) else parts
        if not isinstance(parts, list | tuple):
            raise ValueError(f"a {kind} space needs its 'spaces'.")
        count = len(parts) + sum(space_elements(part, depth + 1) for part in parts)
    else:
        count = 1
    if count > MAX_SPACE_ELEMENTS:
        raise ValueError(
            f"a {kind} space of {count:,} elements is over the limit of {MAX_SPACE_ELEMENTS:,} "
            "elements for a space."
        )
    return count


def build_space(description: dict[str, Any] | None) -> Any:
    """The space a description stands for (see `describe_space`), after `space_elements` checked
    its size."""
    space_elements(description)
    try:
        return _build(description)
    except MemoryError:
        raise ValueError("the space could not be built: out of memory.") from None
    except Exception as error:  # gymnasium checks with asserts, too
        raise ValueError(f"the space could not be built ({type(error).__name__}: {error}).") from None


def _build(description: dict[str, Any] | None) -> Any:
    if description is None:
        return None
    kind, spaces = description["type"], _gymnasium()
    if kind == "Box":
        dtype = np.dtype(description["dtype"])
        if dtype.kind not in "biuf":
            raise ValueError(f"a Box's dtype must be a number type, got {dtype}.")
        shape = _shape(description["shape"])
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
        return spaces.Dict({k: _build(v) for k, v in description["spaces"].items()})
    if kind == "Tuple":
        return spaces.Tuple([_build(v) for v in description["spaces"]])
    return PlainSpace(kind, description)


class SpaceCache:
    """Rebuilds each distinct description once; equal descriptions give the same object, so the
    server can batch requests whose episodes share an action space.

    Bounded: at most `max_entries` spaces of `max_elements` numbers in all; the least recently
    used go first (an episode that still holds one keeps it alive)."""

    def __init__(self, max_entries: int = 64, max_elements: int = MAX_SPACE_ELEMENTS) -> None:
        self.max_entries, self.max_elements = max_entries, max_elements
        self._built: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._elements = 0
        self._lock = threading.Lock()

    def get(self, description: dict[str, Any] | None) -> Any:
        if description is None:
            return None
        try:
            key = json.dumps(description, sort_keys=True, default=str)
        except (TypeError, ValueError):  # keys of mixed types cannot be ordered
            raise ValueError("a space description's keys must all be text.") from None
        with self._lock:  # the replicas' threads share the cache
            entry = self._built.get(key)
            if entry is not None:
                self._built.move_to_end(key)
                return entry[0]
            try:
                space = build_space(description)
                elements = space_elements(description)
            except (TypeError, KeyError, IndexError, AttributeError, OverflowError) as error:
                # hostile or malformed input: refused in words, never an exception escaping the frame
                raise ValueError(
                    f"not a space this server can build ({type(error).__name__}: {error})"
                ) from None
            self._built[key] = (space, elements)
            self._elements += elements
            while len(self._built) > self.max_entries or self._elements > self.max_elements:
                _, (_, dropped) = self._built.popitem(last=False)
                self._elements -= dropped
            return space

    def __len__(self) -> int:
        return len(self._built)
