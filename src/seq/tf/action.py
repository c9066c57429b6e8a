"""Action transforms: scaling, clipping, and keeping some of an action's entries.

scale: y = x · factor + offset (factor ≠ 0 everywhere; lossless, the inverse is (y − offset) / factor).
clip: y = min(max(x, low), high) (lossy). take: y = x[..., indices] (lossy unless it only reorders).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from seq.errors import SeqInputError
from seq.tf.base import KeyTransform, Transform
from seq.tf.labels import Label, claimed, lossless, lossy
from seq.tf.spec import random_array


def _floats(value: Any, where: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise SeqInputError(f"{where}: expected a number or an array of numbers, got {value!r}.") from None
    if not np.all(np.isfinite(array)):
        raise SeqInputError(f"{where}: the values must be finite, got {value!r}.")
    return array


def _floating(array: np.ndarray) -> np.dtype:
    return array.dtype if array.dtype.kind == "f" else np.dtype(np.float64)


class Scale(KeyTransform):
    """y = x · factor + offset, computed in float64, returned in the input's floating dtype."""

    def __init__(self, key: str | None, factor: np.ndarray, offset: np.ndarray, reason: str | None) -> None:
        self.factor, self.offset = factor, offset
        super().__init__(key, claimed(lossless, reason))

    @property
    def name(self) -> str:
        key = "" if self.key is None else f"{self.key!r}, "
        factor, offset = np.array2string(self.factor, precision=4), np.array2string(self.offset, precision=4)
        return f"scale({key}× {factor} + {offset})"

    def forward(self, value: Any) -> np.ndarray:
        array = np.asarray(value)
        return (array.astype(np.float64) * self.factor + self.offset).astype(_floating(array))

    def backward(self, value: Any) -> np.ndarray:
        array = np.asarray(value)
        return ((array.astype(np.float64) - self.offset) / self.factor).astype(_floating(array))

    def invertible(self) -> bool:
        return not self.label.lossy  # type: ignore[union-attr]

    def rounding_scale(self) -> float:
        """x · factor + offset rounds at |x| + |offset / factor|."""
        return float(np.max(np.abs(self.offset / self.factor)))

    def examples(self, rng: np.random.Generator) -> list[Any]:
        shape = np.broadcast_shapes(self.factor.shape, self.offset.shape) or (7,)
        return [self.keyed(random_array(rng, shape, "float64"))]


def scale(factor: Any, offset: Any = 0.0, *, key: str | None = None, lossy: str | None = None) -> Transform:
    """`scale(0.05)`: a policy's unit actions to 5 cm steps; `scale([1, 1, 1, 2], offset=[0, 0, 0, -1])`
    per entry."""
    factor_a, offset_a = _floats(factor, "seq.tf.scale factor"), _floats(offset, "seq.tf.scale offset")
    if np.any(factor_a == 0):
        raise SeqInputError("seq.tf.scale: a factor of 0 erases the value; use seq.tf.take to drop entries.")
    try:
        np.broadcast_shapes(factor_a.shape, offset_a.shape)
    except ValueError:
        raise SeqInputError(
            f"seq.tf.scale: factor {factor_a.shape} and offset {offset_a.shape} differ."
        ) from None
    return Scale(key, factor_a, offset_a, lossy)


class Clip(KeyTransform):
    """y = min(max(x, low), high); lossy (values beyond the bounds are lost)."""

    def __init__(self, key: str | None, low: np.ndarray, high: np.ndarray, reason: str | None) -> None:
        self.low, self.high = low, high
        bounds = f"[{np.array2string(low, precision=4)}, {np.array2string(high, precision=4)}]"
        super().__init__(key, claimed(lossy(f"values outside {bounds} are clipped"), reason))

    @property
    def name(self) -> str:
        key = "" if self.key is None else f"{self.key!r}, "
        return (
            f"clip({key}{np.array2string(self.low, precision=4)}, {np.array2string(self.high, precision=4)})"
        )

    def forward(self, value: Any) -> np.ndarray:
        array = np.asarray(value)
        return np.clip(array, self.low, self.high).astype(_floating(array))


def clip(low: Any, high: Any, *, key: str | None = None, lossy: str | None = None) -> Transform:
    """`clip(-1, 1)`: an action into the env's bounds. Lossy."""
    low_a, high_a = _floats(low, "seq.tf.clip low"), _floats(high, "seq.tf.clip high")
    if np.any(low_a > high_a):
        raise SeqInputError(f"seq.tf.clip: low {low!r} is above high {high!r}.")
    return Clip(key, low_a, high_a, lossy)


class Take(KeyTransform):
    """y = x[..., indices]: keep (and reorder) entries of the last axis."""

    def __init__(
        self, key: str | None, indices: tuple[int, ...], size: int | None, reason: str | None
    ) -> None:
        self.indices, self.size = indices, size
        permutation = size is not None and sorted(i % size for i in indices) == list(range(size))
        default: Label = (
            lossless if permutation else lossy(f"keeps only entries {list(indices)} of the last axis")
        )
        super().__init__(key, claimed(default, reason))

    @property
    def name(self) -> str:
        key = "" if self.key is None else f"{self.key!r}, "
        return f"take({key}{list(self.indices)})"

    def forward(self, value: Any) -> np.ndarray:
        array = np.asarray(value)
        if self.size is not None and array.shape[-1:] != (self.size,):
            raise ValueError(f"{self.name}: expected {self.size} entries, got shape {array.shape}.")
        return array[..., list(self.indices)]

    def backward(self, value: Any) -> np.ndarray:
        assert self.size is not None
        array = np.asarray(value)
        out = np.empty_like(array)
        out[..., [i % self.size for i in self.indices]] = array
        return out

    def invertible(self) -> bool:
        return not self.label.lossy  # type: ignore[union-attr]

    def examples(self, rng: np.random.Generator) -> list[Any]:
        return [] if self.size is None else [self.keyed(random_array(rng, (self.size,), "float64"))]


def take(
    indices: Sequence[int], *, size: int | None = None, key: str | None = None, lossy: str | None = None
) -> Transform:
    """`take(range(7))`: the first 7 entries of a policy's 8-D action (lossy); with `size=` the
    input's length, a reordering of all of them, such as `take([1, 0, 2], size=3)`, is lossless."""
    try:
        picked = tuple(int(i) for i in indices)
    except (TypeError, ValueError):
        raise SeqInputError(f"seq.tf.take: indices must be integers, got {indices!r}.") from None
    if not picked:
        raise SeqInputError("seq.tf.take: indices is empty; an action needs at least one entry.")
    if size is not None and (not isinstance(size, int) or any(not -size <= i < size for i in picked)):
        raise SeqInputError(f"seq.tf.take: indices {list(picked)} do not all fit size={size!r}.")
    return Take(key, picked, size, lossy)
