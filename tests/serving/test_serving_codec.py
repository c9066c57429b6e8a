"""The wire codecs: types survive, arrays arrive writable and the receiver's own, nothing
executable travels, and the openpi and vla-eval encodings match the real packages' own codecs."""

from __future__ import annotations

import collections

import msgpack
import numpy as np
import pytest

from seq.serving import codec, openpi, vlaeval
from seq.serving.spaces import SpaceCache, build_space, describe_space


def test_values_keep_their_types_through_the_seq_codec():
    value = {
        "image": np.arange(24, dtype=np.uint8).reshape(2, 4, 3),
        "state": np.arange(3, dtype=">f4"),
        "strided": np.arange(10)[::3],
        "empty": np.zeros((0, 2)),
        "zero_d": np.array(2.5),
        "scalars": [np.float32(1.5), np.int64(-3), np.bool_(True), 7, 2.25, None, "text", b"bytes"],
        "pair": (1, (2.0, "x")),
        "ordered": collections.OrderedDict(a=1),
        3: "an int key",
    }
    back = codec.unpack(codec.pack(value))
    assert back.keys() == value.keys()
    for key in ("image", "state", "strided", "empty", "zero_d"):
        assert back[key].dtype == value[key].dtype and back[key].shape == value[key].shape
        np.testing.assert_array_equal(back[key], value[key])
    assert [type(v) for v in back["scalars"]] == [type(v) for v in value["scalars"]]
    assert back["scalars"] == value["scalars"]
    assert back["pair"] == (1, (2.0, "x")) and type(back["pair"][1]) is tuple
    assert back["ordered"] == {"a": 1} and back[3] == "an int key"


def test_arrays_are_the_receivers_own_and_writable_in_every_decoder():
    array = np.arange(1000, dtype=np.float64).reshape(10, 100)
    frame = codec.pack({"a": array})
    for decoded in (
        codec.unpack(frame)["a"],
        openpi.unpack(openpi.pack({"a": array}))["a"],
        vlaeval.unpack_message(vlaeval.pack_message("observation", {"a": array}))["payload"]["a"],
    ):
        assert decoded.flags.writeable and decoded.flags.owndata and decoded.flags.c_contiguous
        np.testing.assert_array_equal(decoded, array)
        decoded += 1  # the frame is untouched: a copy, not a view of its bytes
    assert codec.unpack(frame)["a"][0, 0] == 0.0


def test_nothing_executable_travels():
    with pytest.raises(codec.CodecError, match="dtype object is refused"):
        codec.pack(np.array([object()]))
    with pytest.raises(codec.CodecError, match="cannot send a value of type object"):
        codec.pack({"x": object()})
    with pytest.raises(codec.CodecError, match="refused"):
        codec.pack(np.zeros(2, dtype=[("a", "<f4")]))
    forged = msgpack.packb(
        msgpack.ExtType(codec.EXT_ARRAY, bytes((1, 3)) + b"|O8" + b"\0" * 3 + b"\1" + b"\0" * 7)
    )
    with pytest.raises(codec.CodecError, match="refused"):
        codec.unpack(forged)
    short = msgpack.packb(
        msgpack.ExtType(codec.EXT_ARRAY, bytes((1, 3)) + b"<f8" + b"\0" * 3 + b"\4" + b"\0" * 7)
    )
    with pytest.raises(codec.CodecError, match="needs 32 bytes"):
        codec.unpack(short)
    with pytest.raises(codec.CodecError, match="unknown msgpack ext type 42"):
        codec.unpack(msgpack.packb(msgpack.ExtType(42, b"")))
    with pytest.raises(codec.CodecError, match="not a valid msgpack frame"):
        codec.unpack(b"\xc1")


def test_images_go_raw_unless_jpeg_is_asked_for():
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:224, 0:224]
    image = np.stack([xx, yy, (xx + yy) // 2], axis=-1).astype(np.uint8)
    image = np.clip(image + rng.integers(0, 8, image.shape), 0, 255).astype(np.uint8)
    raw = codec.pack({"image": image})
    np.testing.assert_array_equal(codec.unpack(raw)["image"], image)
    jpeg = codec.pack({"image": image}, jpeg_quality=90)
    decoded = codec.unpack(jpeg)["image"]
    assert len(jpeg) < len(raw) / 3 and decoded.shape == image.shape and decoded.dtype == np.uint8
    assert np.abs(decoded.astype(int) - image).mean() < 4
    gray = codec.unpack(codec.pack(image[:, :, :1], jpeg_quality=90))
    assert gray.shape == (224, 224, 1)
    state = np.zeros((4, 4, 3), dtype=np.float32)  # not uint8: never JPEG
    assert codec.unpack(codec.pack(state, jpeg_quality=90)).dtype == np.float32


def test_the_openpi_encoding_is_openpi_clients_own():
    msgpack_numpy = pytest.importorskip("openpi_client.msgpack_numpy")
    obs = {"observation/image": np.ones((4, 4, 3), np.uint8), "state": np.arange(3.0), "prompt": "go"}
    mine = openpi.unpack(msgpack_numpy.packb(obs))
    theirs = msgpack_numpy.unpackb(openpi.pack({"actions": np.ones((5, 7), np.float32), "n": np.int32(2)}))
    np.testing.assert_array_equal(mine["observation/image"], obs["observation/image"])
    assert mine["prompt"] == "go" and mine["state"].dtype == np.float64
    assert theirs["actions"].shape == (5, 7) and theirs["n"] == 2 and type(theirs["n"]) is np.int32


def test_the_vla_eval_encoding_is_vla_evals_own():
    pytest.importorskip("vla_eval")
    from vla_eval.protocol import numpy_codec
    from vla_eval.protocol.messages import Message, MessageType, pack_message, unpack_message

    image = np.random.default_rng(1).integers(0, 255, (8, 8, 3), dtype=np.uint8)
    payload = {"images": {"cam": image}, "state": np.arange(4.0), "task_description": "go"}
    for image_format in ("png", "raw"):  # png is vla-eval's default
        numpy_codec.set_image_format(image_format)
        try:
            frame = pack_message(Message(MessageType.OBSERVATION, payload, seq=7))
        finally:
            numpy_codec.set_image_format("png")
        mine = vlaeval.unpack_message(frame)
        assert mine["type"] == "observation" and mine["seq"] == 7
        np.testing.assert_array_equal(mine["payload"]["images"]["cam"], image)
    theirs = unpack_message(vlaeval.pack_message("action", {"actions": np.ones(7, np.float32)}, 3))
    assert theirs.type == MessageType.ACTION and theirs.seq == 3 and theirs.payload["actions"].shape == (7,)
    jpeg = unpack_message(vlaeval.pack_message("observation", {"cam": image}, 4, jpeg_quality=95))
    assert jpeg.payload["cam"].shape == (8, 8, 3)


def test_action_spaces_travel_exactly():
    spaces = pytest.importorskip("gymnasium.spaces")
    box = spaces.Box(low=np.array([-1.5, 0.1], np.float32), high=np.array([2.0, 0.3], np.float32))
    rebuilt = build_space(codec.unpack(codec.pack(describe_space(box))))
    assert isinstance(rebuilt, spaces.Box) and rebuilt.dtype == np.float32
    np.testing.assert_array_equal(rebuilt.low, box.low)
    np.testing.assert_array_equal(rebuilt.high, box.high)
    image = spaces.Box(0, 255, (224, 224, 3), np.uint8)
    assert describe_space(image)["low"] == 0 and build_space(describe_space(image)).shape == (224, 224, 3)
    for space in (spaces.Discrete(5, start=1), spaces.MultiDiscrete([2, 3]), spaces.Dict({"a": box})):
        assert build_space(describe_space(space)) == space
    cache = SpaceCache()
    assert cache.get(describe_space(box)) is cache.get(describe_space(box)) and cache.get(None) is None
