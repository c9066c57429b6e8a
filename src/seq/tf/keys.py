"""Transforms of a dict observation's keys: rename, select, drop, and concatenate into one vector."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from seq.errors import SeqInputError
from seq.tf.base import Transform, value_at
from seq.tf.labels import claimed, lossless, lossy
from seq.tf.spec import random_array


def _keys(keys: Sequence[str] | str, where: str) -> tuple[str, ...]:
    keys = (keys,) if isinstance(keys, str) else tuple(keys)
    if not keys or not all(isinstance(k, str) for k in keys):
        raise SeqInputError(f"{where}: expected one or more key names, got {keys!r}.")
    if len(set(keys)) != len(keys):
        raise SeqInputError(f"{where}: a key is named twice in {keys!r}.")
    return keys


def _as_dict(x: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(x, Mapping):
        raise KeyError(f"{where} works on a dict observation, got a {type(x).__name__}.")
    return x


class Rename(Transform):
    """`{old: new}`: each old key's value under its new name, everything else unchanged. Lossless:
    the inverse renames back. Renaming onto a key that stays is refused rather than overwritten."""

    label = lossless

    def __init__(self, mapping: Mapping[str, str]) -> None:
        if not mapping or not all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
            raise SeqInputError(f"seq.tf.rename: expected {{old: new}} key names, got {mapping!r}.")
        if len(set(mapping.values())) != len(mapping):
            raise SeqInputError(f"seq.tf.rename: two keys would get the same name in {dict(mapping)!r}.")
        self.mapping = dict(mapping)

    @property
    def name(self) -> str:
        return "rename(" + ", ".join(f"{k!r}→{v!r}" for k, v in self.mapping.items()) + ")"

    @staticmethod
    def _move(x: Any, mapping: Mapping[str, str], where: str) -> dict[str, Any]:
        x = _as_dict(x, where)
        for old in mapping:
            value_at(x, old, where)
        clash = [new for new in mapping.values() if new in x and new not in mapping]
        if clash:
            raise KeyError(f"{where} would overwrite key {clash[0]!r}, which the value already has.")
        return {mapping.get(k, k): v for k, v in x.items()}

    def apply(self, x: Any) -> Any:
        return self._move(x, self.mapping, self.name)

    def inverse(self, y: Any) -> Any:
        return self._move(y, {v: k for k, v in self.mapping.items()}, self.name)

    def examples(self, rng: np.random.Generator) -> list[Any]:
        return [{old: random_array(rng, (3,), "float64") for old in self.mapping} | {"other": np.arange(2)}]


def rename(mapping: Mapping[str, str] | str, new: str | None = None) -> Transform:
    """Rename keys: `rename({"agentview_image": "image"})` or `rename("agentview_image", "image")`."""
    if isinstance(mapping, str):
        if new is None:
            raise SeqInputError("seq.tf.rename(old, new): the new name is missing.")
        mapping = {mapping: new}
    return Rename(mapping)


class Select(Transform):
    """Keep only the named keys (in that order); every other key is dropped, so it is lossy."""

    def __init__(self, keys: tuple[str, ...], reason: str | None) -> None:
        self.keys = keys
        self.label = claimed(
            lossy(f"keeps only {', '.join(map(repr, keys))}; every other key is dropped"), reason
        )

    @property
    def name(self) -> str:
        return f"select({', '.join(map(repr, self.keys))})"

    def apply(self, x: Any) -> Any:
        return {k: value_at(x, k, self.name) for k in self.keys}


def select(*keys: str, lossy: str | None = None) -> Transform:
    """Keep only these keys: `select("image", "state")`. Lossy: the other keys are dropped."""
    return Select(_keys(keys, "seq.tf.select"), lossy)


class Drop(Transform):
    """Remove the named keys; lossy, since their values are gone."""

    def __init__(self, keys: tuple[str, ...], reason: str | None) -> None:
        self.keys = keys
        self.label = claimed(lossy(f"drops {', '.join(map(repr, keys))}"), reason)

    @property
    def name(self) -> str:
        return f"drop({', '.join(map(repr, self.keys))})"

    def apply(self, x: Any) -> Any:
        x = _as_dict(x, self.name)
        for k in self.keys:
            value_at(x, k, self.name)
        return {k: v for k, v in x.items() if k not in self.keys}


def drop(*keys: str, lossy: str | None = None) -> Transform:
    """Remove these keys: `drop("depth")`. Lossy."""
    return Drop(_keys(keys, "seq.tf.drop"), lossy)


class Concat(Transform):
    """Concatenate keys' values, each flattened, into one 1-D vector under `into`; the parts are
    removed. With `sizes` (one shape per part: an int n is the shape (n,)) the inverse splits the
    vector back and reshapes each part, so it is lossless; without, the parts' boundaries are not
    kept and it is lossy."""

    def __init__(
        self,
        keys: tuple[str, ...],
        into: str,
        shapes: tuple[tuple[int, ...], ...] | None,
        reason: str | None,
    ) -> None:
        self.keys, self.into, self.shapes = keys, into, shapes
        default = (
            lossless
            if shapes is not None
            else lossy("the parts' sizes are not given, so they cannot be split back")
        )
        self.label = claimed(default, reason)

    @property
    def name(self) -> str:
        return f"concat({', '.join(map(repr, self.keys))} → {self.into!r})"

    def apply(self, x: Any) -> Any:
        x = _as_dict(x, self.name)
        parts = [np.ravel(np.asarray(value_at(x, k, self.name))) for k in self.keys]
        if self.shapes is not None:
            for key, shape in zip(self.keys, self.shapes, strict=True):
                got = np.shape(value_at(x, key, self.name))
                if got != shape:
                    raise ValueError(f"{self.name}: {key!r} has shape {got}, declared {shape}.")
        if self.into in x and self.into not in self.keys:
            raise KeyError(f"{self.name} would overwrite key {self.into!r}, which the value already has.")
        out = {k: v for k, v in x.items() if k not in self.keys}
        out[self.into] = np.concatenate(parts)
        return out

    def invertible(self) -> bool:
        return self.shapes is not None

    def inverse(self, y: Any) -> Any:
        if self.shapes is None:
            raise NotImplementedError(f"{self.name} has no inverse: give sizes= to split it back.")
        y = _as_dict(y, self.name)
        vector = np.asarray(value_at(y, self.into, self.name))
        bounds = np.cumsum([0] + [int(np.prod(shape)) for shape in self.shapes])
        if vector.shape != (bounds[-1],):
            raise ValueError(
                f"{self.name}: {self.into!r} has shape {vector.shape}, expected ({bounds[-1]},)."
            )
        out = {k: v for k, v in y.items() if k != self.into}
        for key, shape, start, stop in zip(self.keys, self.shapes, bounds[:-1], bounds[1:], strict=True):
            out[key] = vector[start:stop].reshape(shape)
        return out

    def examples(self, rng: np.random.Generator) -> list[Any]:
        if self.shapes is None:
            return []
        return [{k: random_array(rng, s, "float64") for k, s in zip(self.keys, self.shapes, strict=True)}]


def _shape(size: Any, where: str) -> tuple[int, ...]:
    shape = (size,) if isinstance(size, int | np.integer) else size
    if not isinstance(shape, tuple | list) or not all(
        isinstance(d, int | np.integer) and d >= 0 for d in shape
    ):
        raise SeqInputError(f"{where}: a size is an int or a shape tuple, got {size!r}.")
    return tuple(int(d) for d in shape)


def concat(
    keys: Sequence[str],
    into: str,
    *,
    sizes: Sequence[int | tuple[int, ...]] | None = None,
    lossy: str | None = None,
) -> Transform:
    """State concatenation: `concat(["eef_pos", "eef_axis_angle", "gripper"], into="state",
    sizes=[3, 3, ()])`. The vector is the parts flattened, in the order given (dtype: numpy's
    common type of the parts); `sizes` gives each part's shape (an int n: shape (n,))."""
    names = _keys(keys, "seq.tf.concat")
    if not isinstance(into, str):
        raise SeqInputError(f"seq.tf.concat: into= must be a key name, got {into!r}.")
    shapes = None
    if sizes is not None:
        shapes = tuple(_shape(s, "seq.tf.concat") for s in sizes)
        if len(shapes) != len(names):
            raise SeqInputError(
                f"seq.tf.concat: sizes= needs one size per key ({len(names)}), got {len(shapes)}."
            )
    return Concat(names, into, shapes, lossy)
