"""Frames that once hurt the server, sent again: each is refused as a `bad_request` naming its
limit, the server's memory stays bounded, and it still answers another client.

The server runs in a process of its own (`seq policy serve`), so a regression that crashes it
fails this test rather than taking pytest down, and its memory is read from /proc.
"""

from __future__ import annotations

import io
import struct
import zlib

import msgpack
import numpy as np
import pytest
from serving_helpers import rss_mb, server_process

from seq.serving import RemotePolicy, codec
from seq.serving.transport import SyncSocket


def nested_tuples(depth: int) -> bytes:
    """msgpack ext type 3 (a tuple) inside itself `depth` deep: 400 deep once overflowed the C
    stack of the ext hook's recursion and killed the server."""
    frame = msgpack.packb(None)
    for _ in range(depth):
        frame = msgpack.packb(msgpack.ExtType(codec.EXT_TUPLE, frame))
    return frame


def jpeg_claiming(width: int, height: int) -> bytes:
    """A 16 × 16 JPEG whose header claims `width` × `height`: a decoder that trusts the header
    allocates for all of it."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.zeros((16, 16, 3), np.uint8)).save(buffer, format="JPEG")
    data = bytearray(buffer.getvalue())
    struct.pack_into(">HH", data, data.index(b"\xff\xc0") + 5, height, width)
    return bytes(data)


def png_bomb(width: int, height: int) -> bytes:
    """A real PNG of `width` × `height` black RGB pixels: about a thousandth of its decoded size."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    squeeze, row = zlib.compressobj(9), bytes(1 + 3 * width)
    pixels = b"".join(squeeze.compress(row) for _ in range(height)) + squeeze.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


@pytest.fixture
def server(tmp_path):
    with server_process(tmp_path) as served:
        yield served


def _seq_reply(url: str, frame: bytes) -> dict:
    """The seq server's answer to one frame, on a fresh connection."""
    sock = SyncSocket(url, subprotocols=[codec.SUBPROTOCOL])
    try:
        sock.recv(10)  # the hello
        sock.send(frame)
        return codec.unpack(sock.recv(30))
    finally:
        sock.close()


def _vla_eval_reply(url: str, message: dict) -> dict:
    """The server's answer to one vla-eval message (after a hello), on a fresh connection."""
    sock = SyncSocket(url)
    try:
        sock.send(msgpack.packb({"type": "hello", "payload": {}, "seq": 1, "timestamp": 0.0}))
        sock.recv(10)  # the server's answer to the client's hello
        sock.send(msgpack.packb({**message, "timestamp": 0.0}))
        return msgpack.unpackb(sock.recv(30))
    finally:
        sock.close()


def _act(url: str, image_encoding: str = "raw") -> np.ndarray:
    state = {"state": np.array([0.0, 1.0]), "image": np.zeros((32, 32, 3), np.uint8)}
    with RemotePolicy(url, image_encoding=image_encoding, retries=0) as remote:
        remote.begin_episode(None)
        return remote.act(state, seed=0, instruction="near")


def test_frames_that_once_hurt_the_server_are_refused_and_it_lives_on(server):
    url, process = server
    assert _act(url, "jpeg").tolist() == [[0.1]]  # warm: every module a request needs is imported
    baseline = rss_mb(process.pid)

    nested = nested_tuples(400)
    assert len(nested) < 2048
    reply = _seq_reply(url, nested)
    assert reply["type"] == "error" and reply["kind"] == "bad_request", reply
    assert "deeper than the limit of 32" in reply["error"]

    for shape in ([25_000_000], [2**40]):
        start = {
            "type": "episode_start",
            "id": 1,
            "action_space": {"type": "Box", "shape": shape, "dtype": "<f8"},
        }
        frame = codec.pack(start)
        assert len(frame) < 100
        for _ in range(3):
            reply = _seq_reply(url, frame)
            assert reply["type"] == "error" and reply["kind"] == "bad_request", reply
            assert "over the limit of 1,048,576 elements" in reply["error"]

    bomb = msgpack.ExtType(codec.EXT_JPEG, b"\x03" + jpeg_claiming(9000, 9000))
    act = {"type": "act", "id": 2, "obs": {"a": bomb, "b": bomb, "c": bomb}, "seed": 0, "instruction": None}
    reply = _seq_reply(url, msgpack.packb(act))
    assert reply["type"] == "error" and reply["kind"] == "bad_request", reply
    assert "9000 x 9000 pixels" in reply["error"] and "pixel budget of 33,554,432" in reply["error"]

    png = {"__image__": True, "format": "png", "data": png_bomb(9000, 9000), "shape": [9000, 9000, 3]}
    observation = {"type": "observation", "seq": 3, "payload": {"a": png, "b": png, "c": png}}
    reply = _vla_eval_reply(url, observation)
    assert reply["type"] == "error" and "bad_request" in reply["payload"]["error"], reply
    assert "pixel budget" in reply["payload"]["error"]

    assert process.poll() is None, process.stderr.read()
    assert _act(url).tolist() == [[0.1]]  # another client is answered
    grown = rss_mb(process.pid) - baseline
    assert grown < 64, f"the server grew by {grown:.0f} MB"
