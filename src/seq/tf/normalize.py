"""Numeric transforms of observation keys (or of whole actions): normalize, denormalize, cast.

normalize: y = (x − mean) / std, or y = 2 (x − low) / (high − low) − 1 (so [low, high] → [−1, 1]).
denormalize is its inverse: x = y · std + mean, or x = (y + 1) / 2 · (high − low) + low.
Both compute in float64 and return the input's dtype when it is floating (else float32), unless
`dtype=` says otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from seq.errors import SeqInputError
from seq.tf.base import KeyTransform, Transform
from seq.tf.labels import Label, claimed, lossless, lossy
from seq.tf.spec import random_array


def _stats(mean: Any, std: Any, low: Any, high: Any, where: str) -> tuple[np.ndarray, np.ndarray, str]:
    """The affine statistics as (offset, scale) with y = (x − offset) / scale, and their kind."""
    if mean is not None or std is not None:
        if mean is None or std is None or low is not None or high is not None:
            raise SeqInputError(f"{where}: give mean= and std= together, or low= and high= together.")
        offset, scale, kind = np.asarray(mean, np.float64), np.asarray(std, np.float64), "mean/std"
    elif low is not None and high is not None:
        low_a, high_a = np.asarray(low, np.float64), np.asarray(high, np.float64)
        offset, scale, kind = (low_a + high_a) / 2, (high_a - low_a) / 2, "low/high"
    else:
        raise SeqInputError(f"{where}: give mean= and std=, or low= and high=.")
    try:
        np.broadcast_shapes(offset.shape, scale.shape)
    except ValueError:
        raise SeqInputError(
            f"{where}: the statistics' shapes {offset.shape} and {scale.shape} differ."
        ) from None
    if not np.all(np.isfinite(offset)) or not np.all(np.isfinite(scale)) or np.any(scale == 0):
        raise SeqInputError(f"{where}: the statistics must be finite, with no zero std (or low = high).")
    return offset, scale, kind


def _output_dtype(value: np.ndarray, dtype: np.dtype | None) -> np.dtype:
    if dtype is not None:
        return dtype
    return value.dtype if value.dtype.kind == "f" else np.dtype(np.float32)


class Affine(KeyTransform):
    """y = (x − offset) / scale (`normalize`) or its inverse x = y · scale + offset (`denormalize`),
    optionally clipped to [−1, 1] (which makes it lossy)."""

    def __init__(
        self,
        key: str | None,
        offset: np.ndarray,
        scale: np.ndarray,
        kind: str,
        direction: str,
        clip: bool,
        dtype: np.dtype | None,
        reason: str | None,
    ) -> None:
        self.offset, self.scale, self.kind, self.direction = offset, scale, kind, direction
        self.clip, self.dtype = clip, dtype
        default: Label = lossless
        if clip:
            default = lossy("values beyond ±1 in normalized units are clipped")
        elif dtype is not None and dtype != np.float64:
            default = lossy(f"the result is rounded to {dtype}")
        super().__init__(key, claimed(default, reason))

    @property
    def name(self) -> str:
        key = "" if self.key is None else f"{self.key!r}, "
        return f"{self.direction}({key}{self.kind})"

    def _normalize(self, value: Any, clip: bool, dtype: np.dtype | None) -> np.ndarray:
        array = np.asarray(value)
        out = (array.astype(np.float64) - self.offset) / self.scale
        if clip:
            out = np.clip(out, -1.0, 1.0)
        return out.astype(_output_dtype(array, dtype))

    def _denormalize(self, value: Any, clip: bool, dtype: np.dtype | None) -> np.ndarray:
        array = np.asarray(value)
        values = array.astype(np.float64)
        if clip:
            values = np.clip(values, -1.0, 1.0)
        return (values * self.scale + self.offset).astype(_output_dtype(array, dtype))

    def forward(self, value: Any) -> np.ndarray:
        if self.direction == "normalize":
            return self._normalize(value, self.clip, self.dtype)
        return self._denormalize(value, self.clip, self.dtype)

    def backward(self, value: Any) -> np.ndarray:
        if self.direction == "normalize":
            return self._denormalize(value, False, None)
        return self._normalize(value, False, None)

    def invertible(self) -> bool:
        return not self.label.lossy  # type: ignore[union-attr]

    def rounding_scale(self) -> float:
        """normalize rounds at |x| + |offset|; denormalize at |x| + |offset / scale|."""
        offset = self.offset if self.direction == "normalize" else self.offset / self.scale
        return float(np.max(np.abs(offset)))

    def examples(self, rng: np.random.Generator) -> list[Any]:
        shape = np.broadcast_shapes(self.offset.shape, self.scale.shape) or (4,)
        return [
            self.keyed(random_array(rng, shape, "float64")),
            self.keyed(random_array(rng, shape, "float32")),
        ]


def _dtype(dtype: Any, where: str) -> np.dtype | None:
    if dtype is None:
        return None
    try:
        result = np.dtype(dtype)
    except TypeError:
        raise SeqInputError(f"{where}: {dtype!r} is not a numpy dtype.") from None
    if result.kind != "f":
        raise SeqInputError(f"{where}: dtype= must be a floating dtype, got {result}.")
    return result


def normalize(
    key: str | None = None,
    *,
    mean: Any = None,
    std: Any = None,
    low: Any = None,
    high: Any = None,
    clip: bool = False,
    dtype: Any = None,
    lossy: str | None = None,
) -> Transform:
    """`normalize("state", mean=m, std=s)`: (x − m) / s; or `low=, high=`: [low, high] → [−1, 1].
    Lossless unless `clip=True` or `dtype=` narrower than float64."""
    offset, scale, kind = _stats(mean, std, low, high, "seq.tf.normalize")
    return Affine(key, offset, scale, kind, "normalize", clip, _dtype(dtype, "seq.tf.normalize"), lossy)


def denormalize(
    key: str | None = None,
    *,
    mean: Any = None,
    std: Any = None,
    low: Any = None,
    high: Any = None,
    clip: bool = False,
    dtype: Any = None,
    lossy: str | None = None,
) -> Transform:
    """`denormalize(mean=m, std=s)` on a policy's normalized actions: y · s + m; or `low=, high=`:
    [−1, 1] → [low, high]. `clip=True` clips to [−1, 1] first (lossy)."""
    offset, scale, kind = _stats(mean, std, low, high, "seq.tf.denormalize")
    return Affine(key, offset, scale, kind, "denormalize", clip, _dtype(dtype, "seq.tf.denormalize"), lossy)


class Cast(KeyTransform):
    """`astype(dtype)`; floats going to integers are rounded to nearest and clipped to the range.
    Lossless only when `source` is given and every `source` value fits `dtype` (numpy's safe cast)."""

    def __init__(self, key: str | None, dtype: np.dtype, source: np.dtype | None, reason: str | None) -> None:
        self.dtype, self.source = dtype, source
        if source is not None and np.can_cast(source, dtype, "safe"):
            default: Label = lossless
        elif source is not None:
            default = lossy(f"casting {source} to {dtype} rounds or overflows")
        else:
            default = lossy(f"casting to {dtype} may round or overflow (declare source= to check it)")
        super().__init__(key, claimed(default, reason))

    @property
    def name(self) -> str:
        key = "" if self.key is None else f"{self.key!r}, "
        source = "" if self.source is None else f"{self.source} → "
        return f"cast({key}{source}{self.dtype})"

    def forward(self, value: Any) -> np.ndarray:
        array = np.asarray(value)
        if self.source is not None and array.dtype != self.source:
            raise ValueError(f"{self.name}: the value is {array.dtype}, declared {self.source}.")
        if self.dtype.kind in "iu" and array.dtype.kind in "fc":
            info = np.iinfo(self.dtype)
            return np.clip(np.rint(array.real), info.min, info.max).astype(self.dtype)
        return array.astype(self.dtype)

    def backward(self, value: Any) -> np.ndarray:
        assert self.source is not None
        return np.asarray(value).astype(self.source)

    def invertible(self) -> bool:
        return not self.label.lossy  # type: ignore[union-attr]

    def examples(self, rng: np.random.Generator) -> list[Any]:
        return [] if self.source is None else [self.keyed(random_array(rng, (4,), self.source))]


def cast(key: str | None, dtype: Any, *, source: Any = None, lossy: str | None = None) -> Transform:
    """`cast("image", "float32", source="uint8")` (lossless: every uint8 fits a float32);
    `cast("state", "float32")` (lossy: a float64 may round)."""
    try:
        target = np.dtype(dtype)
        origin = None if source is None else np.dtype(source)
    except TypeError:
        raise SeqInputError(f"seq.tf.cast: {dtype!r} or {source!r} is not a numpy dtype.") from None
    return Cast(key, target, origin, lossy)
