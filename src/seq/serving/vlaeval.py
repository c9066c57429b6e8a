"""The vla-evaluation-harness protocol v1 (`vla-eval` 0.8.0): its frames, both ways.

Frames are msgpack maps `{type, payload, seq, timestamp}`; types `hello` (both ways), `episode_start`,
`observation`, `action` (`{"actions": float32 array}`), `episode_end` and `error`; a reply carries
the `seq` of the frame it answers. Arrays travel as `{"__ndarray__": True, "data", "dtype",
"shape"}` (bool, int, uint and float: vla-eval refuses complex, and so does `seq` here), uint8 HWC
images optionally as `{"__image__": True, "format": "raw" | "png" | "jpeg", ...}` (PNG is
vla-eval's default).

- `seq.serving.vlaeval_client.VlaEvalPolicy`: `seq` evaluates a vla-eval model server.
- `seq.serving.vlaeval_session.VlaEvalSession`: `vla-eval run` uses a `seq` server as its model server.
"""

from __future__ import annotations

import io
import time
from typing import Any

import msgpack
import numpy as np

from seq.record.states import ImageEncoding
from seq.serving.codec import (
    CodecError,
    checked_dtype,
    is_image,
    jpeg_array,
    jpeg_bytes,
    received_array,
    unpack_limited,
)
from seq.serving.images import PixelBudget, check_image

TYPES = frozenset({"hello", "observation", "action", "episode_start", "episode_end", "error"})
PROTOCOL_VERSION = 1


def peer_dtype(text: Any) -> np.dtype:
    """A dtype vla-eval carries: `checked_dtype`'s, less complex (vla-eval's codec refuses it)."""
    dtype = checked_dtype(text)
    if dtype.kind == "c":
        raise CodecError(f"dtype {dtype} is refused: vla-eval carries bool, int, uint and float arrays.")
    return dtype


def png_bytes(image: np.ndarray) -> bytes:
    from PIL import Image  # optional: only when a sender asks for PNG

    buffer = io.BytesIO()
    Image.fromarray(image[:, :, 0] if image.shape[2] == 1 else image).save(buffer, format="PNG")
    return buffer.getvalue()


def _encoder(jpeg_quality: int | None, png: bool = False) -> Any:
    def default(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            if jpeg_quality is not None and is_image(value) and value.shape[2] == 3:
                data = jpeg_bytes(value, jpeg_quality)
                return {"__image__": True, "format": "jpeg", "data": data, "shape": list(value.shape)}
            if png and value.dtype == np.uint8 and value.ndim == 3 and value.shape[2] in (1, 3, 4):
                data = png_bytes(value)
                return {"__image__": True, "format": "png", "data": data, "shape": list(value.shape)}
            peer_dtype(value.dtype.str)
            return {
                "__ndarray__": True,
                "data": np.ascontiguousarray(value).tobytes(),
                "dtype": value.dtype.str,
                "shape": list(value.shape),
            }
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.floating):
            return float(value)
        raise CodecError(f"cannot send a value of type {type(value).__name__} in the vla-eval protocol.")

    return default


class Compressed:
    """A PNG or JPEG image not decoded yet: the server decodes it in a replica's thread."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


def decode_images(value: Any) -> Any:
    """`value` with every `Compressed` image decoded to a uint8 array."""
    if isinstance(value, Compressed):
        return jpeg_array(value.data)  # PIL reads PNG as well as JPEG
    if isinstance(value, dict):
        return {key: decode_images(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode_images(item) for item in value]
    return value


def _hook(obj: dict, deferred: list | None, budget: PixelBudget) -> Any:
    if "__image__" in obj:
        if obj.get("format") == ImageEncoding.RAW:
            return received_array(obj["data"], peer_dtype(obj["dtype"]), obj["shape"])
        if obj.get("format") not in (ImageEncoding.PNG, ImageEncoding.JPEG):
            raise CodecError(f"unknown image format {obj.get('format')!r}.")
        if deferred is None:
            return jpeg_array(obj["data"], budget=budget)
        check_image(obj["data"], budget)  # the frame's pixel budget, from the header, before decoding
        deferred.append(True)
        return Compressed(obj["data"])
    if "__ndarray__" in obj:
        return received_array(obj["data"], peer_dtype(obj["dtype"]), obj["shape"])
    return obj


def pack_message(
    kind: str, payload: Any, seq: int = 0, jpeg_quality: int | None = None, png: bool = False
) -> bytes:
    """One vla-eval frame; uint8 HWC images as JPEG (given `jpeg_quality`), PNG or raw."""
    raw = {"type": kind, "payload": payload, "seq": seq, "timestamp": time.time()}
    try:
        return msgpack.packb(raw, default=_encoder(jpeg_quality, png), use_bin_type=True)
    except (TypeError, ValueError, OverflowError) as error:
        raise CodecError(str(error)) from None


def unpack_message(frame: bytes | str, deferred: list | None = None) -> dict[str, Any]:
    """A vla-eval frame as a dict, checked for its four fields and a known type. Given a list
    `deferred`, PNG and JPEG images stay `Compressed` (one entry is appended for each)."""
    if isinstance(frame, str):
        raise CodecError("expected a binary msgpack frame, got text.")
    budget = PixelBudget()
    raw = unpack_limited(frame, object_hook=lambda obj: _hook(obj, deferred, budget))
    if not looks_like_message(raw):
        if _has_fields(raw) and isinstance(raw["type"], str) and raw["type"] not in TYPES:
            raise CodecError(
                f"unknown message type {raw['type'][:40]!r}: a vla-eval frame's type is one of "
                f"{', '.join(sorted(TYPES))}."
            )
        raise CodecError("a vla-eval frame is a map with type, payload, seq and timestamp.")
    return raw


def frame_seq(frame: bytes | str) -> int:
    """The `seq` of a frame that was refused (a bad array, an unknown type), for the error that
    answers it; 0 when the frame cannot be read at all."""
    if isinstance(frame, str):
        return 0
    try:
        raw = unpack_limited(frame)  # no hooks: the arrays and images that were refused stay maps
    except CodecError:
        return 0
    number = raw.get("seq") if isinstance(raw, dict) else None
    return number if isinstance(number, int) and not isinstance(number, bool) else 0


def _has_fields(raw: Any) -> bool:
    return isinstance(raw, dict) and {"type", "payload", "seq", "timestamp"} <= raw.keys()


def looks_like_message(raw: Any) -> bool:
    return (
        isinstance(raw, dict)
        and isinstance(raw.get("type"), str)
        and raw["type"] in TYPES
        and {"payload", "seq", "timestamp"} <= raw.keys()
        and isinstance(raw.get("seq"), int)
    )
