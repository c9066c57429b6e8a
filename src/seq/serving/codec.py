"""The `seq` wire codec: msgpack, with numpy arrays as raw bytes plus dtype and shape.

No pickle, ever. Arrays travel as msgpack ext type 1 (a small header, then the array's bytes,
8-byte aligned) and come back as arrays the receiver owns and may write into (one copy out of the
frame: a policy may write into its observation, as MetaWorld's experts do). Numpy
scalars (ext 2) and tuples (ext 3) keep their types, so a policy served over the wire sees the same
Python values it would see inline. A uint8 image `[H, W, 1|3]` goes as JPEG (ext 4) only when the
sender asks for it (`jpeg_quality`); otherwise images are raw like any array.

A frame comes from whoever can reach the socket, so decoding is bounded: maps, arrays and tuples
nest at most `MAX_DEPTH` deep (a tuple inside a tuple is decoded by a fresh `msgpack.Unpacker`,
whose state lives on the heap, not the C stack), an array has at most `MAX_NDIM` dimensions and
exactly the bytes its shape needs, and a frame's JPEGs decode to at most `images.MAX_FRAME_PIXELS`
pixels, checked from their headers. Whatever is refused raises `CodecError`, naming the limit.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import msgpack
import numpy as np

from seq.serving.images import PixelBudget, is_image, jpeg_array, jpeg_bytes
from seq.serving.remote_errors import CodecError

__all__ = [  # jpeg_array, jpeg_bytes and is_image live in seq.serving.images, re-exported here
    "CodecError",
    "Encoder",
    "received_array",
    "check_depth",
    "checked_dtype",
    "is_image",
    "jpeg_array",
    "jpeg_bytes",
    "pack",
    "unpack",
    "unpack_limited",
]

SUBPROTOCOL = "seq.v1"  # the websocket subprotocol a seq client asks for
PROTOCOL_VERSION = 1
EXT_ARRAY, EXT_SCALAR, EXT_TUPLE, EXT_JPEG = 1, 2, 3, 4
ALLOWED_KINDS = frozenset("biufc")  # bool, int, uint, float, complex: plain bytes, nothing to execute
MAX_DEPTH = 32  # maps, arrays and tuples inside one another: deeper than any observation or space
MAX_NDIM = 32  # an array's dimensions


_DTYPES: dict[Any, np.dtype] = {}  # the checked dtypes, by the name a peer sent (a few at most)


def checked_dtype(text: Any) -> np.dtype:
    """The dtype a peer named, if it is a plain numeric one (never object, void or structured)."""
    dtype = _DTYPES.get(text)
    if dtype is not None:
        return dtype
    try:
        dtype = np.dtype(text if isinstance(text, str) else bytes(text).decode("ascii"))
    except (TypeError, ValueError, UnicodeDecodeError, OverflowError, MemoryError):
        raise CodecError(f"unknown dtype {str(text)[:40]!r}.") from None
    if dtype.kind not in ALLOWED_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise CodecError(f"dtype {dtype} is refused: only bool, int, uint, float and complex arrays travel.")
    if len(_DTYPES) < 256 and isinstance(text, str | bytes):
        _DTYPES[text] = dtype
    return dtype


def received_array(buffer: Any, dtype: np.dtype, shape: Any, offset: int = 0) -> np.ndarray:
    """`buffer`'s bytes (from `offset`) as an array the receiver owns and may write into, after
    checking the sizes agree: one copy out of the frame (a view of it would be read-only)."""
    try:
        dims = tuple(int(n) for n in shape)
    except (TypeError, ValueError, OverflowError):
        raise CodecError(f"bad array shape {str(shape)[:80]}.") from None
    if len(dims) > MAX_NDIM or any(n < 0 for n in dims):
        raise CodecError(f"bad array shape {str(dims)[:80]}: at most {MAX_NDIM} dimensions, none negative.")
    count = math.prod(dims)
    if len(buffer) - offset != count * dtype.itemsize:
        raise CodecError(f"array of shape {dims} and dtype {dtype} needs {count * dtype.itemsize} bytes.")
    array = np.frombuffer(buffer, dtype=dtype, count=count, offset=offset)
    return (array if len(dims) == 1 else array.reshape(dims)).copy()


_NESTING = (dict, list, tuple)


def check_depth(value: Any, limit: int = MAX_DEPTH) -> Any:
    """`value`, if its maps, lists and tuples nest at most `limit` deep (else CodecError).

    Walked level by level, without recursion: a decoded value is checked before any code that
    recurses into it (a space's builder, a policy) sees it."""
    if type(value) not in _NESTING:
        return value
    level: Any = (value,)
    depth = 1
    while True:
        deeper = None
        for container in level:
            for child in container.values() if type(container) is dict else container:
                if type(child) in _NESTING:
                    if deeper is None:
                        deeper = [child]
                    else:
                        deeper.append(child)
        if deeper is None:
            return value
        depth += 1
        if depth > limit:
            raise CodecError(f"a frame nests maps, arrays and tuples deeper than the limit of {limit}.")
        level = deeper


# Every level of nesting starts with a map, array or ext header byte; a frame with few bytes of
# those values cannot nest deep, and is not walked (a fast path for the small frames of each act).
_HEADER_BYTES = {*range(0x80, 0xA0), *range(0xC7, 0xCA), *range(0xD4, 0xD9), *range(0xDC, 0xE0)}
_OTHER_BYTES = bytes(b for b in range(256) if b not in _HEADER_BYTES)


def _checked(value: Any, frame: Any) -> Any:
    """`value` decoded from `frame`, its depth checked (see `check_depth`)."""
    if type(frame) is bytes and len(frame) <= 4096 and len(frame.translate(None, _OTHER_BYTES)) <= MAX_DEPTH:
        return value
    return check_depth(value)


def _refusal(error: Exception) -> CodecError:
    """The CodecError for what msgpack raised on a frame."""
    if isinstance(error, CodecError):
        return error
    if isinstance(error, msgpack.StackError):
        return CodecError(f"a frame nests maps and arrays deeper than the limit of {MAX_DEPTH}.")
    if isinstance(error, MemoryError):
        return CodecError("a frame declares more than the server's memory can hold.")
    return CodecError(f"not a valid msgpack frame ({type(error).__name__}: {error}).")


def unpack_limited(frame: Any, **options: Any) -> Any:
    """`msgpack.unpackb(frame, **options)` within the codec's limits (nesting depth, sizes no
    larger than the frame); anything msgpack refuses or cannot hold raises CodecError."""
    try:
        value = msgpack.unpackb(frame, raw=False, strict_map_key=False, **options)
    except Exception as error:  # msgpack raises several types for malformed input
        raise _refusal(error) from None
    return _checked(value, frame)


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
    if ndim > MAX_NDIM:
        raise CodecError(f"an array of {ndim} dimensions is refused: at most {MAX_NDIM}.")
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
    dims = shape.unpack_from(data, start)
    count = math.prod(dims)
    if len(data) - end != count * dtype.itemsize or (dims and min(dims) < 0):
        return received_array(data, dtype, dims, end)  # (says what is wrong)
    array = np.frombuffer(data, dtype=dtype, count=count, offset=end)
    return (array if ndim == 1 else array.reshape(dims)).copy()  # the receiver's own, writable


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
        bases: tuple[type[Any], ...] = (bool, int, float, str, bytes, list, dict)
        for base in bases:  # subclasses: enums, OrderedDict …
            if isinstance(value, base):
                return base(value)
        raise TypeError(
            f"cannot send a value of type {type(value).__name__} over the wire; send numpy arrays, "
            "numbers, strings, bytes, lists, tuples and dicts."
        )


class _Decoding:
    """One frame being decoded: how deep its tuples nest, and its images' pixel budget."""

    __slots__ = ("depth", "pixels")

    def __init__(self) -> None:
        self.depth = 0
        self.pixels: PixelBudget | None = None

    def ext_hook(self, code: int, data: bytes) -> Any:
        if code == EXT_ARRAY:
            return _array_from_ext(data)
        if code == EXT_SCALAR:
            return _array_from_ext(data)[()]
        if code == EXT_TUPLE:
            return self._tuple(data)
        if code == EXT_JPEG:
            if self.pixels is None:
                self.pixels = PixelBudget()
            return jpeg_array(data[1:], data[0] if data else None, self.pixels)
        raise CodecError(f"unknown msgpack ext type {code}.")

    def _tuple(self, data: bytes) -> tuple:
        if self.depth >= MAX_DEPTH:
            raise CodecError(f"a frame nests tuples deeper than the limit of {MAX_DEPTH} levels.")
        self.depth += 1
        try:  # an Unpacker keeps its parser's stack on the heap, so nesting costs no C stack
            unpacker = msgpack.Unpacker(
                ext_hook=self.ext_hook, raw=False, strict_map_key=False, max_buffer_size=max(len(data), 1)
            )
            unpacker.feed(data)
            items = unpacker.unpack()
            if unpacker.tell() != len(data) or type(items) is not list:
                raise CodecError("a tuple's payload is not one msgpack array.")
        except msgpack.OutOfData:
            raise CodecError("a tuple's payload is truncated.") from None
        finally:
            self.depth -= 1
        return tuple(items)


def pack(value: Any, jpeg_quality: int | None = None) -> bytes:
    """One frame of `value` (see `Encoder`)."""
    return Encoder(jpeg_quality).pack(value)


def unpack(frame: bytes) -> Any:
    """The value in a frame; its arrays are the receiver's own, writable. A frame over the
    codec's limits (see the module's doc) raises CodecError."""
    try:
        value = msgpack.unpackb(frame, ext_hook=_Decoding().ext_hook, raw=False, strict_map_key=False)
    except Exception as error:
        raise _refusal(error) from None
    return _checked(value, frame)
