"""The gripper entry of an action (or of a state): one robot's convention to another's.

Affine: y = t₀ + (x − s₀) · (t₁ − t₀) / (s₁ − s₀), mapping the range `source` = (s₀, s₁) onto
`target` = (t₀, t₁); so `source=(-1, 1), target=(1, -1)` flips the sign (robosuite's −1 open / +1
close versus a policy's +1 open), and `source=(0, 1), target=(-1, 1)` rescales. Lossless.
With `threshold`, the entry is binarised instead: t₁ where x > threshold, else t₀. Lossy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from seq.errors import SeqInputError
from seq.tf.base import KeyTransform, Transform
from seq.tf.labels import claimed, lossless, lossy
from seq.tf.spec import random_array


def _pair(value: Any, where: str) -> tuple[float, float]:
    if not isinstance(value, Sequence) or len(value) != 2:
        raise SeqInputError(f"{where}: a range is (value at one end, value at the other), got {value!r}.")
    low, high = float(value[0]), float(value[1])
    if low == high or not (np.isfinite(low) and np.isfinite(high)):
        raise SeqInputError(f"{where}: a range needs two different finite ends, got {value!r}.")
    return low, high


class Gripper(KeyTransform):
    """Map entry `index` of the last axis from `source` to `target` (see the module)."""

    def __init__(
        self,
        key: str | None,
        index: int,
        source: tuple[float, float],
        target: tuple[float, float],
        threshold: float | None,
        reason: str | None,
    ) -> None:
        self.index, self.source, self.target, self.threshold = index, source, target, threshold
        default = lossless if threshold is None else lossy(f"the gripper is binarised at {threshold}")
        super().__init__(key, claimed(default, reason))

    @property
    def name(self) -> str:
        key = "" if self.key is None else f"{self.key!r}, "
        how = (
            f"> {self.threshold} → {self.target[1]} else {self.target[0]}"
            if self.threshold is not None
            else (f"{self.source} → {self.target}")
        )
        return f"gripper({key}[{self.index}] {how})"

    @staticmethod
    def _map(x: np.ndarray, source: tuple[float, float], target: tuple[float, float]) -> np.ndarray:
        return target[0] + (x - source[0]) * (target[1] - target[0]) / (source[1] - source[0])

    def _with(self, value: Any, fn: Any) -> np.ndarray:
        array = np.asarray(value)
        if array.ndim == 0 or not -array.shape[-1] <= self.index < array.shape[-1]:
            raise ValueError(f"{self.name}: no entry {self.index} in a value of shape {array.shape}.")
        out = (
            array.astype(np.result_type(array.dtype, np.float32)) if array.dtype.kind != "f" else array.copy()
        )
        out[..., self.index] = fn(out[..., self.index].astype(np.float64))
        return out

    def forward(self, value: Any) -> np.ndarray:
        if self.threshold is not None:
            threshold, (low, high) = self.threshold, self.target
            return self._with(value, lambda x: np.where(x > threshold, high, low))
        return self._with(value, lambda x: self._map(x, self.source, self.target))

    def backward(self, value: Any) -> np.ndarray:
        if self.threshold is not None:
            raise NotImplementedError(f"{self.name} has no inverse ({self.label}).")
        return self._with(value, lambda x: self._map(x, self.target, self.source))

    def invertible(self) -> bool:
        return not self.label.lossy  # type: ignore[union-attr]

    def rounding_scale(self) -> float:
        """t₀ + (x − s₀)·k rounds at |x| + |s₀| + |t₀ / k|, k = (t₁ − t₀) / (s₁ − s₀)."""
        k = (self.target[1] - self.target[0]) / (self.source[1] - self.source[0])
        return abs(self.source[0]) + abs(self.target[0] / k)

    def examples(self, rng: np.random.Generator) -> list[Any]:
        size = self.index + 1 if self.index >= 0 else -self.index
        return [self.keyed(random_array(rng, (max(size, 7),), "float64"))]


def gripper(
    key: str | None = None,
    *,
    index: int = -1,
    source: Sequence[float] = (-1.0, 1.0),
    target: Sequence[float] = (1.0, -1.0),
    threshold: float | None = None,
    lossy: str | None = None,
) -> Transform:
    """`gripper(index=-1, source=(-1, 1), target=(1, -1))`: the last entry's sign flipped (the
    default); `gripper(source=(0, 1), target=(-1, 1))`: rescaled; `threshold=0.5` binarises."""
    if isinstance(index, bool) or not isinstance(index, int):
        raise SeqInputError(f"seq.tf.gripper: index= must be an int, got {index!r}.")
    return Gripper(
        key,
        index,
        _pair(source, "seq.tf.gripper source="),
        _pair(target, "seq.tf.gripper target="),
        None if threshold is None else float(threshold),
        lossy,
    )
