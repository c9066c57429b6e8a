"""`libero-to-openpi`: the `libero` benchmark's observation as openpi's LIBERO client sends it, so
an openpi LIBERO policy server (pi0, pi0-FAST, pi05 `*_libero`) works unchanged:

    seq eval run --benchmark libero --policy-url ws://HOST:8000 --policy-protocol openpi \
        --adapter libero-to-openpi

What openpi's `examples/libero/main.py` does, and what this does: the images turned upright
(seq's observation already is), resized to 224² (`resize_with_pad`; from 256² the aspect is kept,
so no padding) under `observation/image` and `observation/wrist_image`; the 8-D state (end-effector
position, axis-angle, finger positions) under `observation/state`; the instruction as `prompt`
(seq's openpi client adds it); each chunk's first 5 actions played before asking again
(`replan_steps`), passed to LIBERO as they come.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import seq
from seq import tf

PRECISION_BITS = 22  # Pillow's fixed point for 8-bit images (32 - 8 - 2)


def _pil_weights(source: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Pillow's bilinear resampling weights, as its `precompute_coeffs` and
    `normalize_coeffs_8bpc` compute them: for each output pixel, the first input pixel and the
    integer weights of the pixels from there."""
    scale = source / size
    filter_scale = max(scale, 1.0)
    support = filter_scale  # the bilinear filter's support, 1, scaled
    width = int(math.ceil(support)) * 2 + 1
    starts, weights = np.zeros(size, dtype=np.int64), np.zeros((size, width), dtype=np.int64)
    inverse_scale = 1.0 / filter_scale
    for out in range(size):
        centre = (out + 0.5) * scale
        first = max(int(centre - support + 0.5), 0)
        count = min(int(centre + support + 0.5), source) - first
        floats = [max(0.0, 1.0 - abs((x + first - centre + 0.5) * inverse_scale)) for x in range(count)]
        total = 0.0
        for value in floats:
            total += value
        for x, value in enumerate(floats):
            value = value / total if total != 0.0 else value
            weights[out, x] = int((0.5 if value >= 0 else -0.5) + value * (1 << PRECISION_BITS))
        starts[out] = first
    return starts, weights


def _pil_pass(image: np.ndarray, axis: int, size: int) -> np.ndarray:
    """One of Pillow's two resampling passes (columns: axis 1, rows: axis 0), in its integers."""
    starts, weights = _pil_weights(image.shape[axis], size)
    moved = np.moveaxis(image.astype(np.int64), axis, 0)
    padded = np.concatenate([moved, np.zeros((weights.shape[1], *moved.shape[1:]), np.int64)])
    total = np.full((size, *moved.shape[1:]), 1 << (PRECISION_BITS - 1), dtype=np.int64)
    for k in range(weights.shape[1]):
        taken = padded[starts + k]
        total += taken * weights[:, k].reshape((size,) + (1,) * (moved.ndim - 1))
    out = np.clip(total >> PRECISION_BITS, 0, 255).astype(np.uint8)
    return np.moveaxis(out, 0, axis)


def pil_bilinear(image: Any, size: int) -> np.ndarray:
    """`PIL.Image.fromarray(image).resize((size, size), Image.BILINEAR)`, bit for bit, in NumPy:
    what openpi's `image_tools.resize_with_pad` does to a square image (an adapter file imports
    nothing but NumPy and seq.tf)."""
    image = np.asarray(image)
    if image.shape[:2] == (size, size):
        return image
    columns = _pil_pass(image, 1, size) if image.shape[1] != size else image
    return _pil_pass(columns, 0, size) if image.shape[0] != size else columns


def _resize(key: str, size: int) -> Any:
    def apply(obs: dict[str, Any]) -> dict[str, Any]:
        return {**obs, key: pil_bilinear(obs[key], size)}

    reason = f"openpi's LIBERO client sends {size}x{size} (resize_with_pad: Pillow's bilinear)"
    return tf.custom(apply, label=tf.lossy(reason), name=f"resize {key} to {size}x{size}")


@seq.adapter(name="libero-to-openpi")
class LiberoToOpenPi(seq.Adapter):
    """The `libero` benchmark's published observation → openpi's LIBERO request (module doc)."""

    observation_spec = {
        "agentview_image": ((256, 256, 3), "uint8"),
        "wrist_image": ((256, 256, 3), "uint8"),
        "state": ((8,), "float64"),
    }
    action_spec = (7,)

    def __init__(self, *, image_size: int = 224, steps_per_query: int = 5) -> None:
        self.obs_transforms = [
            tf.select(
                "agentview_image",
                "wrist_image",
                "state",
                lossy="openpi's LIBERO client sends the two images and the 8-D state, nothing else",
            ),
            tf.rename(
                {
                    "agentview_image": "observation/image",
                    "wrist_image": "observation/wrist_image",
                    "state": "observation/state",
                }
            ),
            _resize("observation/image", image_size),
            _resize("observation/wrist_image", image_size),
        ]
        self.action_transforms = []
        self.steps_per_query = steps_per_query
