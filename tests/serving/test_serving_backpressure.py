"""Memory a client can make the server spend, measured on a real `seq policy serve` process.

The attacks of the last review, replayed: a client that asks for 8 MB actions (a Box of 2**20
float64, within the space budget) and never reads them, and one `act_batch` of 300 such acts.
The budget asserted: the server's peak resident memory (VmHWM) stays within `BUDGET_MB` of its
size before the attack, whatever the number of frames sent (the unbounded server reached 4.1 GB
on 500 frames); each batch gets an answer, a result or an error naming the reply budget; `/health`
and other clients are answered throughout.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from serving_helpers import rss_mb, server_process

from seq.serving import codec
from seq.serving.transport import SyncSocket

BUDGET_MB = 256  # the server's peak growth under these attacks (64 MiB replies are packed twice)
BIG = {"type": "Box", "low": -1.0, "high": 1.0, "shape": [2**20], "dtype": "<f8"}  # 8 MiB an act
REPLY_BUDGET = 64 * 2**20  # the default max_reply_bytes: max_message_bytes


def peak_mb(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmHWM for process {pid}")


def reset_peak(pid: int) -> None:
    """Start VmHWM again from the current size (Linux: writing 5 to clear_refs)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def health(url: str) -> dict:
    with urllib.request.urlopen(url.replace("ws://", "http://") + "/health", timeout=10) as reply:
        return json.loads(reply.read())


def start(url: str, space: dict) -> SyncSocket:
    """A seq connection whose episode has `space` as its action space (the `ready` read)."""
    sock = SyncSocket(url, subprotocols=[codec.SUBPROTOCOL])
    sock.recv(10)  # the hello
    sock.send(codec.pack({"type": "episode_start", "id": 0, "action_space": space}))
    assert codec.unpack(sock.recv(30))["type"] == "ready"
    return sock


def send_without_reading(sock: SyncSocket, frames: int) -> int:
    """Send `frames` small acts and read nothing; stops when the server no longer takes them
    (its socket and ours are full). Returns how many went out whole."""
    sock.sock.settimeout(0.5)
    for number in range(frames):
        sock.protocol.send_binary(codec.pack({"type": "act", "id": number + 1, "obs": 0.0, "seed": number}))
        try:
            for data in sock.protocol.data_to_send():
                sock.sock.sendall(data)
        except TimeoutError:
            return number
    return frames


def act(sock: SyncSocket, number: int) -> dict:
    sock.send(codec.pack({"type": "act", "id": number, "obs": 0.0, "seed": number}))
    return codec.unpack(sock.recv(60))


def another_client_is_answered(url: str) -> None:
    sock = start(url, {**BIG, "shape": [3]})
    try:
        reply = act(sock, 7)
        assert reply["type"] == "action" and reply["id"] == 7 and reply["actions"].shape == (1, 3), reply
    finally:
        sock.close()


@pytest.fixture(scope="module")
def random_server(tmp_path_factory):
    """`seq policy serve random` (uniform actions in the episode's Box), warmed by one act."""
    with server_process(tmp_path_factory.mktemp("served"), policy="random") as served:
        url, process = served
        another_client_is_answered(url)  # every module a request needs is imported
        yield url, process


def test_a_client_that_never_reads_costs_the_server_one_reply(random_server):
    url, process = random_server
    before = rss_mb(process.pid)
    reset_peak(process.pid)
    for frames in (10, 500, 5_000):
        sock = start(url, BIG)
        sent = send_without_reading(sock, frames)
        assert sent >= min(frames, 500), sent  # the frames left; the server stopped reading the rest
        assert health(url) == {"status": "ok"}  # answered while the client sits on its replies
        another_client_is_answered(url)
        grown = peak_mb(process.pid) - before
        assert grown < BUDGET_MB, f"{frames} unread acts: the server's peak grew by {grown:.0f} MB"
        sock.close()
    assert process.poll() is None
    assert peak_mb(process.pid) < 1024


def test_a_batch_over_the_reply_budget_is_refused_before_it_is_computed(random_server):
    url, process = random_server
    before = rss_mb(process.pid)
    reset_peak(process.pid)
    sock = start(url, BIG)
    acts = [{"obs": 0, "seed": i} for i in range(300)]
    frame = codec.pack({"type": "act_batch", "id": 3, "acts": acts})
    assert len(frame) < 4096  # 3.8 KB on the wire, as in the review
    sock.send(frame)
    reply = codec.unpack(sock.recv(60))
    assert reply["type"] == "error" and reply["id"] == 3 and reply["kind"] == "bad_request", reply
    assert "reply budget of 67,108,864 bytes" in reply["error"] and "300 act(s)" in reply["error"]
    assert act(sock, 4)["actions"].shape == (1, 2**20)  # the connection goes on: one act fits
    sock.close()
    assert health(url) == {"status": "ok"}
    grown = peak_mb(process.pid) - before
    assert grown < BUDGET_MB, f"the server's peak grew by {grown:.0f} MB"


FUZZ = None
try:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    FUZZ = settings(
        max_examples=12,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
except ImportError:  # the fuzz test below says so
    pass


@pytest.mark.skipif(FUZZ is None, reason="needs hypothesis (the test extra)")
def test_any_mix_of_unread_frames_and_batches_is_answered_within_the_budget(random_server):
    """Property: whatever the action space's size, the acts in a batch and the frames another
    client leaves unread, the batch is answered (actions, or an error naming the reply budget
    exactly when acts × values × 8 bytes is over it), `/health` answers, and the server's peak
    stays within `BUDGET_MB`."""
    url, process = random_server
    before = rss_mb(process.pid)
    reset_peak(process.pid)

    @FUZZ
    @given(
        values=st.integers(1, 2**20),
        acts=st.integers(1, 400),
        unread=st.integers(0, 2_000),
    )
    def check(values: int, acts: int, unread: int) -> None:
        space = {**BIG, "shape": [values]}
        idle = start(url, space)
        send_without_reading(idle, unread)
        sock = start(url, space)
        batch = [{"obs": 0, "seed": i} for i in range(acts)]
        sock.send(codec.pack({"type": "act_batch", "id": 9, "acts": batch}))
        reply = codec.unpack(sock.recv(120))
        if acts * values * 8 > REPLY_BUDGET:
            assert reply["type"] == "error" and "reply budget of 67,108,864 bytes" in reply["error"], reply
        else:
            assert reply["type"] == "actions" and len(reply["results"]) == acts, str(reply)[:200]
            assert reply["results"][0]["actions"].shape == (1, values)
        assert health(url) == {"status": "ok"}
        sock.close()
        idle.close()
        grown = peak_mb(process.pid) - before
        assert grown < BUDGET_MB, f"{values} values × {acts} acts, {unread} unread: grew {grown:.0f} MB"

    check()


def test_actions_over_the_budget_or_a_reply_that_cannot_be_packed_get_an_error_frame(tmp_path, monkeypatch):
    """Every failure to answer is an error frame for the request: actions over `max_reply_bytes`
    found once computed (no action space said so before), and a reply whose packing runs out of
    memory."""
    from serving_helpers import deploy_all

    from seq.serving import serve, session

    deploy_all(tmp_path)
    with serve("dict-line", port=0, params={"chunk": 200}, max_reply_bytes=1024) as server:
        sock = SyncSocket(server.url, subprotocols=[codec.SUBPROTOCOL])
        sock.recv(10)
        sock.send(codec.pack({"type": "act", "id": 5, "obs": {"state": np.array([0.0, 1.0])}, "seed": 0}))
        reply = codec.unpack(sock.recv(30))
        assert reply["type"] == "error" and reply["id"] == 5 and reply["kind"] == "server", reply
        assert "1,600 bytes, over the server's reply budget of 1,024 bytes" in reply["error"]
        sock.close()

    packing = codec.pack

    def out_of_memory(message):
        if message.get("type") == "action":
            raise MemoryError
        return packing(message)

    monkeypatch.setattr(session.codec, "pack", out_of_memory)
    with serve("dict-line", port=0) as server:
        sock = SyncSocket(server.url, subprotocols=[codec.SUBPROTOCOL])
        sock.recv(10)
        for number in (6, 7):  # and the connection goes on
            sock.send(codec.pack({"type": "act", "id": number, "obs": {"state": np.zeros(2)}, "seed": 0}))
            reply = codec.unpack(sock.recv(30))
            assert reply["type"] == "error" and reply["id"] == number and reply["kind"] == "server", reply
            assert "MemoryError" in reply["error"]
        sock.close()
