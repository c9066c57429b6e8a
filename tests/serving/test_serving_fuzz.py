"""Property-based fuzzing of every decoder, in this process and through a live server: random and
adversarial msgpack (deep nesting, huge declared shapes, bad dtypes, image headers claiming huge
sizes, malformed spaces) and truncated frames are decoded or refused with a `CodecError`, never
anything else; the server survives them all, its memory stays bounded, and another client is
still answered. Examples are derandomized, so CI runs the same ones every time."""

from __future__ import annotations

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")

import msgpack  # noqa: E402
from fuzz_frames import frames  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from serving_helpers import rss_mb, server_process  # noqa: E402

from seq.serving import RemotePolicy, codec, openpi, vlaeval  # noqa: E402
from seq.serving.codec import CodecError  # noqa: E402
from seq.serving.images import MAX_FRAME_PIXELS  # noqa: E402
from seq.serving.inputs import writable  # noqa: E402
from seq.serving.spaces import SpaceCache  # noqa: E402
from seq.serving.transport import SyncSocket  # noqa: E402

FUZZ = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def _vla_eval_deferred(frame: bytes):
    return vlaeval.decode_images(vlaeval.unpack_message(frame, []))


DECODERS = {
    "seq": codec.unpack,
    "openpi": openpi.unpack,
    "vla-eval": vlaeval.unpack_message,
    "vla-eval (images decoded later)": _vla_eval_deferred,
}


def _arrays(value):
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _arrays(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _arrays(item)


@FUZZ
@given(frames)
def test_every_decoder_decodes_or_refuses_any_frame(frame):
    cache = SpaceCache()
    for name, decode in DECODERS.items():
        try:
            value = decode(frame)
        except CodecError:
            continue
        codec.check_depth(value)
        owned = writable(value)
        arrays = list(_arrays(owned))
        assert all(array.flags.writeable for array in arrays), name
        decoded = sum(array.nbytes for array in arrays)
        assert decoded <= 2 * len(frame) + 4 * MAX_FRAME_PIXELS, (name, decoded, len(frame))
        space = value.get("action_space") if isinstance(value, dict) else None
        try:
            cache.get(space)
        except ValueError:
            pass


FOLLOW_UP = msgpack.packb(
    {
        "type": "observation",
        "payload": {"state": [0.0, 1.0]},
        "seq": 99,
        "timestamp": 0.0,
        "state": [0.0, 1.0],
    }
)


def _answers_follow_up(reply) -> bool:
    """Whether `reply` answers FOLLOW_UP, as a vla-eval observation (seq 99) or an openpi one."""
    if isinstance(reply, str):
        return False
    try:
        message = msgpack.unpackb(reply, strict_map_key=False)
    except Exception:
        return False
    return isinstance(message, dict) and (message.get("seq") == 99 or "server_timing" in message)


def _send(url: str, frame: bytes, seq_protocol: bool) -> None:
    """Send `frame` on a fresh connection and wait until the server has answered it (seq), or a
    frame sent after it (openpi, vla-eval): a frame is never answered by dropping the connection."""
    sock = SyncSocket(url, subprotocols=[codec.SUBPROTOCOL] if seq_protocol else [])
    try:
        sock.recv(10)  # the hello
        sock.send(frame)
        if seq_protocol:
            sock.recv(10)  # every seq frame gets one answer
            return
        sock.send(FOLLOW_UP)
        while not _answers_follow_up(sock.recv(10)):
            pass
    finally:
        sock.close()


@pytest.fixture
def server(tmp_path):
    with server_process(tmp_path) as served:
        yield served


def test_a_server_survives_fuzzed_frames_with_bounded_memory_and_answers_another_client(server):
    url, process = server
    healthy = RemotePolicy(url, retries=0)
    healthy.begin_episode(None)
    state = {"state": np.array([0.0, 1.0])}
    assert healthy.act(state, seed=0, instruction="near").tolist() == [[0.1]]
    _send(url, codec.pack({"type": "act", "id": 1, "obs": {"a": np.zeros((8, 8, 3), np.uint8)}}, 80), True)
    baseline = rss_mb(process.pid)

    @FUZZ
    @given(frames, st.booleans())
    def attack(frame, seq_protocol):
        _send(url, frame, seq_protocol)
        assert process.poll() is None, process.stderr.read()
        assert healthy.act(state, seed=0, instruction="near").tolist() == [[0.1]]

    attack()
    healthy.close()
    grown = rss_mb(process.pid) - baseline
    assert grown < 128, f"the server grew by {grown:.0f} MB"


def test_a_space_whose_keys_cannot_be_ordered_is_refused_in_words():
    """Found by the fuzz test above: a description with text and number keys side by side."""
    from seq.serving.spaces import SpaceCache

    with pytest.raises(ValueError, match="keys must all be text"):
        SpaceCache().get({"type": "Box", 0: 0})
    for nvec in (None, "ab", [None], [2**80]):  # also found by it, on another machine
        with pytest.raises(ValueError, match="nvec"):
            SpaceCache().get({"type": "MultiDiscrete", "nvec": nvec})
