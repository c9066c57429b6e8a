"""Hypothesis strategies for frames a hostile or broken peer might send: random bytes, random and
adversarial msgpack (deep nesting, ext types with forged array headers, huge declared shapes, bad
dtypes, image headers claiming huge sizes, space descriptions), and truncated valid frames."""

from __future__ import annotations

import io
import struct
from typing import Any

import msgpack
import numpy as np
from hypothesis import strategies as st

from seq.serving import codec

DTYPES = ["<f8", "<f4", "|u1", "<i8", "|b1", "<c16", "|O8", "|V8", "<U3", "|S5", "<M8", "f", "x", "", "<f16"]
DIMS = st.one_of(st.integers(0, 4), st.sampled_from([2**31, 2**40, 2**62, 2**63 - 1, -1]))
SHAPES = st.lists(DIMS, max_size=5)
DTYPE_NAMES = st.one_of(st.sampled_from(DTYPES), st.text(max_size=6))

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.binary(max_size=16),
)


def plain_values(leaves: st.SearchStrategy = scalars) -> st.SearchStrategy:
    """Nested lists and maps of `leaves`."""
    return st.recursive(
        leaves,
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
        ),
        max_leaves=16,
    )


@st.composite
def array_exts(draw: Any) -> msgpack.ExtType:
    """A seq array (ext 1) or scalar (ext 2) whose header may lie about its dtype, shape or size."""
    name = draw(DTYPE_NAMES).encode("utf-8")[:255]
    dims = draw(SHAPES)
    ndim = draw(st.one_of(st.just(len(dims)), st.integers(0, 255)))
    head = bytes((ndim, len(name))) + name
    head += b"\0" * (-len(head) % 8)
    dims_bytes = b"".join(struct.pack("<q", max(-(2**63), min(d, 2**63 - 1))) for d in dims)
    data = draw(st.binary(max_size=64))
    return msgpack.ExtType(
        draw(st.sampled_from([1, 2])), (head + dims_bytes + data)[: draw(st.integers(0, 200))]
    )


def _image(width: int, height: int, kind: str) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.zeros((4, 4, 3), np.uint8)).save(buffer, format=kind)
    data = bytearray(buffer.getvalue())
    if kind == "PNG":
        struct.pack_into(">II", data, 16, width, height)  # (its CRC no longer matches: also refused)
    else:
        struct.pack_into(">HH", data, data.index(b"\xff\xc0") + 5, height, width)
    return bytes(data)


IMAGE_BYTES = st.one_of(
    st.binary(max_size=64),
    st.builds(
        _image,
        st.sampled_from([4, 9000, 65535]),
        st.sampled_from([4, 9000, 65535]),
        st.sampled_from(["PNG", "JPEG"]),
    ),
)

ext_values = st.one_of(
    array_exts(),
    st.builds(lambda data: msgpack.ExtType(codec.EXT_JPEG, b"\x03" + data), IMAGE_BYTES),
    st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=32)),  # (-1 is a timestamp)
)


@st.composite
def peer_arrays(draw: Any) -> dict:
    """openpi's and vla-eval's array and image maps, with lying fields."""
    fields = {
        "data": draw(st.binary(max_size=64)),
        "dtype": draw(DTYPE_NAMES),
        "shape": draw(st.one_of(SHAPES, scalars)),
    }
    kind = draw(
        st.sampled_from(["__ndarray__", "__image__", "__npgeneric__", b"__ndarray__", b"__npgeneric__"])
    )
    if kind == "__image__":
        fields["format"] = draw(st.sampled_from(["png", "jpeg", "raw", "gif", None]))
        fields["data"] = draw(IMAGE_BYTES)
    if isinstance(kind, bytes):
        fields = {key.encode(): value for key, value in fields.items()}
    return {kind: True, **fields}


@st.composite
def spaces(draw: Any, depth: int = 0) -> Any:
    """Space descriptions, some of them huge or malformed."""
    kind = draw(
        st.sampled_from(["Box", "Discrete", "MultiDiscrete", "MultiBinary", "Dict", "Tuple", "Other", 3])
    )
    if kind == "Box":
        return {
            "type": "Box",
            "shape": draw(st.one_of(SHAPES, scalars)),
            "dtype": draw(DTYPE_NAMES),
            "low": draw(st.one_of(scalars, st.lists(st.floats(), max_size=4))),
            "high": draw(st.one_of(scalars, st.lists(st.floats(), max_size=4))),
        }
    if kind in ("Dict", "Tuple") and depth < 3:
        parts = draw(st.lists(spaces(depth + 1), max_size=3))
        return {"type": kind, "spaces": {str(i): p for i, p in enumerate(parts)} if kind == "Dict" else parts}
    return {"type": kind, "n": draw(st.one_of(scalars, SHAPES)), "nvec": draw(st.one_of(scalars, SHAPES))}


def nested(depth: int, how: str) -> bytes:
    """A frame `depth` levels deep: lists, maps or seq tuples (ext 3) inside one another."""
    frame = msgpack.packb(None)
    for _ in range(depth):
        if how == "list":
            frame = b"\x91" + frame
        elif how == "map":
            frame = b"\x81\xa1k" + frame
        else:
            frame = msgpack.packb(msgpack.ExtType(codec.EXT_TUPLE, frame))
    return frame


leaves = st.one_of(scalars, ext_values, peer_arrays())
messages = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["act", "act_batch", "episode_start", "fly"]), "id": scalars},
        optional={
            "obs": plain_values(leaves),
            "acts": st.lists(
                st.fixed_dictionaries({"obs": plain_values(leaves)}, optional={"episode": scalars}),
                max_size=3,
            ),
            "seed": scalars,
            "instruction": scalars,
            "episode": scalars,
            "action_space": spaces(),
            "params": plain_values(),
        },
    ),
    st.fixed_dictionaries(
        {
            "type": st.one_of(
                st.sampled_from(["observation", "episode_start", "episode_end", "hello", "action", "error"]),
                scalars,
                st.lists(scalars, max_size=2),
            ),
            "payload": plain_values(leaves),
            "seq": st.one_of(st.integers(-5, 2**40), scalars),
            "timestamp": scalars,
        }
    ),
    plain_values(leaves),
)


def _pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


VALID = [
    codec.pack(
        {
            "type": "act",
            "id": 1,
            "obs": {"state": np.zeros(3), "pair": (1, 2.0)},
            "seed": 0,
            "instruction": "x",
        }
    ),
    codec.pack(
        {"type": "act", "id": 2, "obs": {"image": np.zeros((8, 8, 3), np.uint8)}, "seed": 0}, jpeg_quality=80
    ),
    _pack({"type": "observation", "payload": {"state": [0.0, 1.0]}, "seq": 3, "timestamp": 0.0}),
]

frames = st.one_of(
    st.binary(max_size=256),
    messages.map(_pack),
    st.builds(nested, st.integers(1, 600), st.sampled_from(["list", "map", "tuple"])),
    st.builds(lambda frame, cut: frame[:cut], st.sampled_from(VALID), st.integers(0, 400)),
)
