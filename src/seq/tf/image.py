"""Image transforms: resize, crop, flip, and the axis layout (HWC ↔ CHW).

Images are `HW` or `HWC` arrays (leading axes, such as time, are kept) unless a layout says
otherwise; sizes are written `(height, width)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from seq.errors import SeqInputError
from seq.tf.base import KeyTransform, Transform
from seq.tf.labels import claimed, lossless, lossy
from seq.tf.spec import random_array


def _size(value: Any, where: str) -> tuple[int, int]:
    if (
        not isinstance(value, tuple | list)
        or len(value) != 2
        or not all(isinstance(d, int | np.integer) and d > 0 for d in value)
    ):
        raise SeqInputError(f"{where}: a size is (height, width) in pixels, got {value!r}.")
    return int(value[0]), int(value[1])


def _hw_axes(image: np.ndarray, where: str) -> tuple[int, int]:
    if image.ndim < 2:
        raise ValueError(f"{where}: expected an HW or HWC image, got shape {image.shape}.")
    return (-2, -1) if image.ndim == 2 else (-3, -2)


def _cast_like(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Interpolated float values back to the image's dtype: integers rounded and clipped."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(values), info.min, info.max).astype(dtype)
    if dtype == np.bool_:
        return values >= 0.5
    return values.astype(dtype)


def _nearest_index(n_in: int, n_out: int) -> np.ndarray:
    """Nearest source pixel of each output pixel: floor((j + 0.5) · n_in / n_out)."""
    return np.minimum(((np.arange(n_out) + 0.5) * n_in / n_out).astype(int), n_in - 1)


def _linear(image: np.ndarray, axis: int, n_out: int) -> np.ndarray:
    """Linear resampling along one axis with half-pixel centres: src = (j + 0.5) · n_in / n_out − 0.5,
    clamped to the edge (OpenCV's INTER_LINEAR; no antialiasing)."""
    n_in = image.shape[axis]
    src = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1)
    low = np.floor(src).astype(int)
    high = np.minimum(low + 1, n_in - 1)
    weight_shape = [1] * image.ndim
    weight_shape[axis] = n_out
    weight = (src - low).reshape(weight_shape)
    return np.take(image, low, axis=axis) * (1 - weight) + np.take(image, high, axis=axis) * weight


class Resize(KeyTransform):
    """Resize an image from `source` to `target` (height, width) pixels, bilinear or nearest.

    Lossless only when nearest-neighbour scales both sides up by whole factors (each pixel
    becomes a k×k block; the inverse takes one pixel of each block). Anything else is lossy.
    """

    def __init__(
        self,
        key: str | None,
        source: tuple[int, int] | None,
        target: tuple[int, int],
        method: str,
        reason: str | None,
    ) -> None:
        self.source, self.target, self.method = source, target, method
        whole = source is not None and all(t % s == 0 for s, t in zip(source, target, strict=True))
        if method == "nearest" and whole:
            default = lossless
        elif source is None:
            default = lossy(f"resizing to {target[0]}x{target[1]} from whatever size comes")
        elif any(t < s for s, t in zip(source, target, strict=True)):
            default = lossy(f"resizing {source[0]}x{source[1]} to {target[0]}x{target[1]} drops pixels")
        else:
            default = lossy(
                f"{method} resizing {source[0]}x{source[1]} to {target[0]}x{target[1]} "
                "does not keep every pixel value"
            )
        super().__init__(key, claimed(default, reason))

    @property
    def name(self) -> str:
        source = "" if self.source is None else f"{self.source[0]}x{self.source[1]} → "
        key = "" if self.key is None else f"{self.key!r}, "
        return f"resize({key}{source}{self.target[0]}x{self.target[1]}, {self.method})"

    def forward(self, value: Any) -> np.ndarray:
        image = np.asarray(value)
        h_axis, w_axis = _hw_axes(image, self.name)
        size = (image.shape[h_axis], image.shape[w_axis])
        if self.source is not None and size != self.source:
            raise ValueError(
                f"{self.name}: the image is {size[0]}x{size[1]}, declared {self.source[0]}x{self.source[1]}."
            )
        if self.method == "nearest":
            rows, cols = _nearest_index(size[0], self.target[0]), _nearest_index(size[1], self.target[1])
            return np.take(np.take(image, rows, axis=h_axis), cols, axis=w_axis)
        out = _linear(_linear(image.astype(np.float64), h_axis, self.target[0]), w_axis, self.target[1])
        return _cast_like(out, image.dtype)

    def backward(self, value: Any) -> np.ndarray:
        if self.label.lossy or self.source is None:  # type: ignore[union-attr]
            raise NotImplementedError(f"{self.name} has no inverse ({self.label}).")
        image = np.asarray(value)
        h_axis, w_axis = _hw_axes(image, self.name)
        fh, fw = self.target[0] // self.source[0], self.target[1] // self.source[1]
        rows, cols = np.arange(self.source[0]) * fh, np.arange(self.source[1]) * fw
        return np.take(np.take(image, rows, axis=h_axis), cols, axis=w_axis)

    def invertible(self) -> bool:
        return not self.label.lossy  # type: ignore[union-attr]

    def examples(self, rng: np.random.Generator) -> list[Any]:
        if self.source is None:
            return []
        return [self.keyed(random_array(rng, (*self.source, 3), "uint8"))]


def resize(
    key: str | None,
    source: Sequence[int] | None,
    target: Sequence[int],
    *,
    method: str = "bilinear",
    lossy: str | None = None,
) -> Transform:
    """`resize("image", (256, 256), (224, 224), lossy="the policy takes 224x224")`: sizes are
    (height, width); `source=None` takes any size (and is lossy). `method`: "bilinear" (half-pixel
    centres, no antialiasing) or "nearest"."""
    if method not in ("bilinear", "nearest"):
        raise SeqInputError(f"seq.tf.resize: method must be 'bilinear' or 'nearest', got {method!r}.")
    source_size = None if source is None else _size(source, "seq.tf.resize")
    return Resize(key, source_size, _size(target, "seq.tf.resize"), method, lossy)


class Crop(KeyTransform):
    """Keep a `size` (height, width) window at `offset` (top, left; default: centred). Lossy."""

    def __init__(
        self, key: str | None, size: tuple[int, int], offset: tuple[int, int] | None, reason: str | None
    ) -> None:
        self.size, self.offset = size, offset
        where = "centred" if offset is None else f"at row {offset[0]}, column {offset[1]}"
        default = lossy(f"keeps a {size[0]}x{size[1]} window {where}; the pixels outside it are dropped")
        super().__init__(key, claimed(default, reason))

    @property
    def name(self) -> str:
        key = "" if self.key is None else f"{self.key!r}, "
        return f"crop({key}{self.size[0]}x{self.size[1]})"

    def forward(self, value: Any) -> np.ndarray:
        image = np.asarray(value)
        h_axis, w_axis = _hw_axes(image, self.name)
        height, width = image.shape[h_axis], image.shape[w_axis]
        top, left = self.offset or ((height - self.size[0]) // 2, (width - self.size[1]) // 2)
        if top < 0 or left < 0 or top + self.size[0] > height or left + self.size[1] > width:
            raise ValueError(f"{self.name}: the window does not fit in a {height}x{width} image.")
        rows, cols = np.arange(top, top + self.size[0]), np.arange(left, left + self.size[1])
        return np.take(np.take(image, rows, axis=h_axis), cols, axis=w_axis)


def crop(
    key: str | None,
    size: Sequence[int],
    *,
    offset: Sequence[int] | None = None,
    lossy: str | None = None,
) -> Transform:
    """`crop("image", (224, 224))` keeps the centred 224x224 window; `offset=(top, left)` places it."""
    if offset is not None and (
        len(offset) != 2 or not all(isinstance(d, int | np.integer) and d >= 0 for d in offset)
    ):
        raise SeqInputError(f"seq.tf.crop: offset= is (top, left) in pixels, got {offset!r}.")
    place = None if offset is None else (int(offset[0]), int(offset[1]))
    return Crop(key, _size(size, "seq.tf.crop"), place, lossy)


def _layout(text: str, where: str) -> str:
    if not isinstance(text, str) or not text or len(set(text)) != len(text):
        raise SeqInputError(
            f"{where}: a layout is a string of distinct axis letters such as 'HWC', got {text!r}."
        )
    return text


class Layout(KeyTransform):
    """Reorder an array's last axes from one layout to another (`"HWC"` → `"CHW"`); lossless."""

    def __init__(self, key: str | None, source: str, target: str) -> None:
        self.source, self.target = source, target
        super().__init__(key, lossless)

    @property
    def name(self) -> str:
        key = "" if self.key is None else f"{self.key!r}, "
        return f"layout({key}{self.source} → {self.target})"

    @staticmethod
    def _permute(value: Any, source: str, target: str, where: str) -> np.ndarray:
        array = np.asarray(value)
        if array.ndim < len(source):
            raise ValueError(
                f"{where}: expected at least {len(source)} axes ({source}), got shape {array.shape}."
            )
        lead = array.ndim - len(source)
        order = list(range(lead)) + [lead + source.index(axis) for axis in target]
        return np.transpose(array, order)

    def forward(self, value: Any) -> np.ndarray:
        return self._permute(value, self.source, self.target, self.name)

    def backward(self, value: Any) -> np.ndarray:
        return self._permute(value, self.target, self.source, self.name)

    def examples(self, rng: np.random.Generator) -> list[Any]:
        return [self.keyed(random_array(rng, tuple(range(2, 2 + len(self.source))), "uint8"))]


def layout(key: str | None, source: str, target: str) -> Transform:
    """`layout("image", "HWC", "CHW")`: the same axes, reordered (leading axes are kept)."""
    source, target = _layout(source, "seq.tf.layout"), _layout(target, "seq.tf.layout")
    if sorted(source) != sorted(target):
        raise SeqInputError(f"seq.tf.layout: {source!r} and {target!r} do not name the same axes.")
    return Layout(key, source, target)


def hwc_to_chw(key: str | None) -> Transform:
    """Height-width-channel to channel-height-width (what most PyTorch vision models take)."""
    return layout(key, "HWC", "CHW")


def chw_to_hwc(key: str | None) -> Transform:
    """Channel-height-width to height-width-channel."""
    return layout(key, "CHW", "HWC")


class Flip(KeyTransform):
    """Reverse an image along some of its axes (`"HW"` turns it by 180°); lossless, its own inverse."""

    def __init__(self, key: str | None, axes: str, image_layout: str) -> None:
        self.axes, self.image_layout = axes, image_layout
        super().__init__(key, lossless)

    @property
    def name(self) -> str:
        key = "" if self.key is None else f"{self.key!r}, "
        return f"flip({key}{self.axes})"

    def forward(self, value: Any) -> np.ndarray:
        array = np.asarray(value)
        if array.ndim < len(self.image_layout):
            raise ValueError(f"{self.name}: expected a {self.image_layout} array, got shape {array.shape}.")
        lead = array.ndim - len(self.image_layout)
        return np.flip(array, axis=tuple(lead + self.image_layout.index(a) for a in self.axes)).copy()

    backward = forward

    def examples(self, rng: np.random.Generator) -> list[Any]:
        return [self.keyed(random_array(rng, tuple(range(3, 3 + len(self.image_layout))), "uint8"))]


def flip(key: str | None, axes: str = "HW", *, image_layout: str = "HWC") -> Transform:
    """`flip("image", "HW")`: upside down and mirrored (LIBERO's cameras); `"H"` upside down only,
    `"W"` mirrored only. Axis letters refer to `image_layout`."""
    image_layout = _layout(image_layout, "seq.tf.flip")
    if not axes or any(a not in image_layout for a in axes):
        raise SeqInputError(f"seq.tf.flip: axes {axes!r} must be letters of the layout {image_layout!r}.")
    return Flip(key, axes, image_layout)
