"""The `seq` wire codec: msgpack, with numpy arrays as raw bytes plus dtype and shape.

No pickle, ever. Arrays travel as msgpack ext type 1 (a small header, then the array's bytes,
8-byte aligned) and come back as read-only `np.frombuffer` views of the received frame, without a
copy. Numpy scalars (ext 2) and tuples (ext 3) keep their types, so a policy served over the wire
sees the same Python values it would see inline. A uint8 image `[H, W, 1|3]` goes as JPEG (ext 4)
only when the sender asks for it (`jpeg_quality`); otherwise images are raw like any array.
"""

from __future__ import annotations

import io
import math
import struct
from typing import Any

import msgpack
import numpy as np

SUBPROTOCOL = "seq.v1"  # the websocket subprotocol a seq client asks for
PROTOCOL_VERSION = 1
EXT_ARRAY, EXT_SCALAR, EXT_TUPLE, EXT_JPEG = 1, 2, 3, 4
ALLOWED_KINDS = frozenset("biufc")  # bool, int, uint, float, complex: plain bytes, nothing to execute


class CodecError(ValueError):
    """A frame or a value that the codec refuses (bad bytes, an unsupported type or dtype)."""


_DTYPES: dict[Any, np.dtype] = {}  # the checked dtypes, by the name a peer sent (a few at most)


def checked_dtype(text: Any) -> np.dtype:
    """The dtype a peer named, if it is a plain numeric one (never object, void or structured)."""
    dtype = _DTYPES.get(text)
    if dtype is not None:
        return dtype
    try:
        dtype = np.dtype(text if isinstance(text, str) else bytes(text).decode("ascii"))
    except (TypeError, ValueError, UnicodeDecodeError):
        raise CodecError(f"unknown dtype {text!r}.") from None
    if dtype.kind not in ALLOWED_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise CodecError(f"dtype {dtype} is refused: only bool, int, uint, float and complex arrays travel.")
    if len(_DTYPES) < 256 and isinstance(text, str | bytes):
        _DTYPES[text] = dtype
    return dtype


def array_view(buffer: Any, dtype: np.dtype, shape: Any, offset: int = 0) -> np.ndarray:
    """A zero-copy, read-only view of `buffer` as an array, after checking the sizes agree."""
    try:
        dims = tuple(int(n) for n in shape)
    except (TypeError, ValueError):
        raise CodecError(f"bad array shape {shape!r}.") from None
    if any(n < 0 for n in dims):
        raise CodecError(f"bad array shape {dims}.")
    count = math.prod(dims)
    if len(buffer) - offset != count * dtype.itemsize:
        raise CodecError(f"array of shape {dims} and dtype {dtype} needs {count * dtype.itemsize} bytes.")
    array = np.frombuffer(buffer, dtype=dtype, count=count, offset=offset)
    return array if len(dims) == 1 else array.reshape(dims)


def is_image(array: np.ndarray) -> bool:
    """A uint8 `[H, W, C]` array with 1 or 3 channels: what JPEG can carry."""
    return array.dtype == np.uint8 and array.ndim == 3 and array.shape[2] in (1, 3)


def jpeg_bytes(image: np.ndarray, quality: int) -> bytes:
    from PIL import Image  # optional: only when a sender asks for JPEG

    pil = Image.fromarray(image[:, :, 0] if image.shape[2] == 1 else image)
    buffer = io.BytesIO()
    pil.save(buffer, format="JPEG", quality=int(quality))
    return buffer.getvalue()


def jpeg_array(data: bytes, channels: int | None = None) -> np.ndarray:
    from PIL import Image

    try:
        array = np.asarray(Image.open(io.BytesIO(data)))
    except Exception as error:
        raise CodecError(f"a JPEG image could not be decoded: {error}") from None
    return array[:, :, None] if array.ndim == 2 or channels == 1 else array


_HEADS: dict[tuple[str, int], tuple[bytes, struct.Struct]] = {}  # header prefix by (dtype, ndim)


def _head(dtype: np.dtype, ndim: int) -> tuple[bytes, struct.Struct]:
    key = (dtype.str, ndim)
    cached = _HEADS.get(key)
    if cached is None:
        checked_dtype(dtype.str)
        name = dtype.str.encode("ascii")
        prefix = bytes((ndim, len(name))) + name
        cached = (prefix + b"\0" * (-len(prefix) % 8), struct.Struct(f"<{ndim}q"))
        if len(_HEADS) < 256:
            _HEADS[key] = cached
    return cached


def _array_ext(array: np.ndarray) -> msgpack.ExtType:
    if not array.flags.c_contiguous:
        array = array.copy(order="C")  # (np.ascontiguousarray would turn a 0-d array into 1-d)
    prefix, shape = _head(array.dtype, array.ndim)
    data = array.tobytes() if array.nbytes < 65536 else array.reshape(-1).view(np.uint8).data
    return msgpack.ExtType(EXT_ARRAY, b"".join((prefix, shape.pack(*array.shape), data)))


_PARSED: dict[bytes, tuple[np.dtype, struct.Struct]] = {}  # (dtype, shape struct) by header prefix


def _array_from_ext(data: bytes) -> np.ndarray:
    if len(data) < 2:
        raise CodecError("truncated array header.")
    ndim, length = data[0], data[1]
    start = 2 + length
    start += -start % 8
    prefix = data[:start]
    parsed = _PARSED.get(prefix)
    if parsed is None:
        parsed = (checked_dtype(data[2 : 2 + length]), struct.Struct(f"<{ndim}q"))
        if len(_PARSED) < 256:
            _PARSED[prefix] = parsed
    dtype, shape = parsed
    end = start + shape.size
    if len(data) < end:
        raise CodecError("truncated array header.")
    return array_view(data, dtype, shape.unpack_from(data, start), end)


class Encoder:
    """Packs a value; `jpeg_quality` (1-95) turns uint8 `[H, W, 1|3]` arrays into JPEG."""

    def __init__(self, jpeg_quality: int | None = None) -> None:
        self.jpeg_quality = jpeg_quality

    def pack(self, value: Any) -> bytes:
        try:
            return msgpack.packb(value, default=self._default, use_bin_type=True, strict_types=True)
        except (TypeError, ValueError, OverflowError) as error:
            raise CodecError(str(error)) from None

    def _default(self, value: Any) -> Any:
        if isinstance(value, np.ndarray):
            if self.jpeg_quality is not None and is_image(value):
                data = jpeg_bytes(value, self.jpeg_quality)
                return msgpack.ExtType(EXT_JPEG, bytes((value.shape[2],)) + data)
            return _array_ext(value)
        if isinstance(value, np.generic):
            if isinstance(value, np.str_ | np.bytes_):
                return value.item()
            return msgpack.ExtType(EXT_SCALAR, _array_ext(np.asarray(value)).data)
        if isinstance(value, tuple):
            return msgpack.ExtType(EXT_TUPLE, self.pack(list(value)))
        for base in (bool, int, float, str, bytes, list, dict):  # subclasses: enums, OrderedDict …
            if isinstance(value, base):
                return base(value)
        raise TypeError(
            f"cannot send a value of type {type(value).__name__} over the wire; send numpy arrays, "
            "numbers, strings, bytes, lists, tuples and dicts."
        )


def _ext_hook(code: int, data: bytes) -> Any:
    if code == EXT_ARRAY:
        return _array_from_ext(data)
    if code == EXT_SCALAR:
        return _array_from_ext(data)[()]
    if code == EXT_TUPLE:
        return tuple(unpack(data))
    if code == EXT_JPEG:
        return jpeg_array(data[1:], data[0] if data else None)
    raise CodecError(f"unknown msgpack ext type {code}.")


def pack(value: Any, jpeg_quality: int | None = None) -> bytes:
    """One frame of `value` (see `Encoder`)."""
    return Encoder(jpeg_quality).pack(value)


def unpack(frame: bytes) -> Any:
    """The value in a frame; arrays are read-only views of `frame`'s bytes."""
    try:
        return msgpack.unpackb(frame, ext_hook=_ext_hook, raw=False, strict_map_key=False)
    except CodecError:
        raise
    except Exception as error:  # msgpack raises several types for malformed input
        raise CodecError(f"not a valid msgpack frame ({type(error).__name__}: {error}).") from None
