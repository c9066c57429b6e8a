"""vla-eval's protocol in full, both ways, and openpi's metadata and chunk broker, against the real
packages (the `interop` extra): seq's client of vla-eval model servers built from vla-eval's own
classes, and vla-eval's and openpi's own clients of a seq server."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from peer_helpers import deploy_peers, suite_server
from serving_helpers import line_step, run_episodes, runner

from seq.serving import connect, serve
from seq.serving.inline import InlinePolicy

vla_eval = pytest.importorskip("vla_eval.api")
pytest.importorskip("openpi_client.websocket_client_policy")


def _inline(name: str, **params) -> InlinePolicy:
    from seq.record.store import Store
    from seq.registry.deploy import load_version, resolve

    return InlinePolicy(load_version(resolve("policy", name, Store()))(), params)


def test_seq_completes_every_episode_of_a_server_whose_episode_start_needs_the_suite(tmp_path):
    deploy_peers(tmp_path)
    model = suite_server({"easy": 1, "hard": 1})
    with vla_eval.serve_background(model) as server:
        handle = connect(server.url, protocol="vla-eval")
        served = run_episodes("line", handle)
        model.wait_for_ends(len(served))
        handle.close()
    assert all(r.status == "ok" for r in served), [r.error for r in served]
    inline = run_episodes("line", _inline("begin-line"))
    assert [(r.item_id, r.steps, r.metrics["success"]) for r in served] == [
        (r.item_id, r.steps, r.metrics["success"]) for r in inline
    ]
    first = model.starts[0]
    assert first["mode"] == "sync" and "recording" not in first
    assert first["task"] == {
        "name": "near",
        "suite": "easy",
        "episode_idx": 0,
        "seed": 0,
        "task_description": "near",
    }
    assert [s["task"]["suite"] for s in model.starts] == ["easy"] * 3 + ["hard"] * 3
    assert len(model.ends) == len(served)
    for end, result in zip(model.ends, served, strict=True):
        assert end["steps"] == result.steps and end["metrics"]["success"] == result.metrics["success"]
        assert type(end["metrics"]["success"]) is bool  # as vla-eval's benchmarks send it
        assert end["elapsed_sec"] == pytest.approx(result.duration_s, abs=0.001)


def _interleaved(handle) -> list:
    """The line benchmark's episodes in the order far, near, far, near, …"""
    from seq.record.store import WorkItem

    episode_runner = runner("line", handle)
    conditions = episode_runner.spec.suites[episode_runner.spec.default_suite]
    far, near = [c for c in conditions if c.task == "far"], [c for c in conditions if c.task == "near"]
    ordered = [c for pair in zip(far, near, strict=True) for c in pair]
    return [episode_runner.run(WorkItem(c.key, i, c, 0)) for i, c in enumerate(ordered)]


def test_a_refused_episode_start_fails_its_own_episode_and_no_later_answer_shifts(tmp_path):
    deploy_peers(tmp_path)
    model = suite_server({"easy": 1})  # the `far` episodes are in suite `hard`: refused
    with vla_eval.serve_background(model) as server:
        handle = connect(server.url, protocol="vla-eval")
        served = _interleaved(handle)
        handle.close()
    inline = _interleaved(_inline("begin-line"))
    assert [r.task for r in served] == ["far", "near"] * 3
    for got, expected in zip(served, inline, strict=True):
        if got.task == "far":
            assert got.status == "error" and "refused the episode's start" in got.error
            assert "Suite 'hard' not found in chunk_size_map" in got.error
        else:  # each `near` episode after a refusal acts on its own observations, as inline
            assert got.status == "ok", got.error
            assert (got.steps, got.metrics["success"]) == (expected.steps, expected.metrics["success"])


def test_seq_reads_a_reply_s_action_key_as_well_as_actions(tmp_path):
    deploy_peers(tmp_path)
    with vla_eval.serve_background(suite_server({"easy": 1, "hard": 1}, answer_key="action")) as server:
        handle = connect(server.url, protocol="vla-eval")
        served = run_episodes("line", handle)
        handle.close()
    assert all(r.status == "ok" for r in served), [r.error for r in served]
    assert all(r.metrics["success"] == 1.0 for r in served)


def test_vla_eval_s_client_validates_the_specs_a_seq_server_declares(tmp_path, caplog):
    deploy_peers(tmp_path)
    config = {
        "benchmarks": [
            {"benchmark": "peer_helpers:SpecLineBenchmark", "episodes_per_task": 1, "max_steps": 40}
        ],
        "output_dir": str(tmp_path / "vla-results"),
    }
    caplog.set_level(logging.INFO, logger="vla_eval")
    with serve("spec-line", port=0, params={"chunk": 3}) as server:
        (result,) = vla_eval.run(config, server_url=server.url, no_save=True, docker=False)
        stats = server.stats()
    assert "Spec validation passed (server↔benchmark compatible)" in caplog.text
    assert "Spec mismatch" not in caplog.text
    assert result["mean_success"] == 1.0
    info = result["server_info"]
    assert info["harness_version"].startswith("seq-") and info["model_server"] == "seq:spec-line@v1"
    assert info["action_spec"]["actions"] == {
        "name": "actions",
        "dims": 1,
        "format": "delta_x",
        "range": [-0.1, 0.1],
    }
    steps = sum(e["steps"] for task in result["tasks"] for e in task["episodes"])
    assert stats["requests"] < steps  # chunks of 3, answered one action per observation


def test_the_hello_echoes_the_client_s_seq_and_a_whole_chunk_goes_to_a_client_that_takes_one(tmp_path):
    from vla_eval.protocol.messages import Message, MessageType, pack_message, unpack_message

    from seq.serving.transport import SyncSocket

    deploy_peers(tmp_path)
    with serve("spec-line", port=0, params={"chunk": 3}) as server:
        sock = SyncSocket(server.url)
        hello = {"harness_version": "0.8.0", "capabilities": {"action_chunk": True}}
        sock.send(pack_message(Message(MessageType.HELLO, hello, seq=41)))
        reply = unpack_message(sock.recv(10))
        assert reply.type == MessageType.HELLO and reply.seq == 41
        assert {"harness_version", "protocol_version", "model_server", "capabilities"} <= reply.payload.keys()
        assert reply.payload["observation_spec"]["state"]["format"] == "x_goal"
        sock.send(pack_message(Message(MessageType.EPISODE_START, {"task": {"name": "near"}}, seq=42)))
        sock.send(pack_message(Message(MessageType.OBSERVATION, {"state": np.array([0.0, 1.0])}, seq=43)))
        action = unpack_message(sock.recv(10))
        sock.close()
    assert action.seq == 43 and action.payload["actions"].shape == (3, 1)

    with serve("spec-line", port=0, params={"chunk": 3}) as server:
        handle = connect(server.url, protocol="vla-eval")  # seq's client says it takes chunks
        served = run_episodes("line", handle)
        handle.close()
        requests = server.stats()["requests"]
    inline = run_episodes("line", _inline("spec-line", chunk=3))
    assert requests == sum(r.queries for r in served)
    assert [(r.item_id, r.steps, r.queries) for r in served] == [
        (r.item_id, r.steps, r.queries) for r in inline
    ]


def test_complex_arrays_are_refused_both_ways_as_the_peers_refuse_them(tmp_path):
    import msgpack
    from openpi_client import msgpack_numpy
    from vla_eval.protocol.messages import Message, MessageType, pack_message, unpack_message

    from seq.serving import vlaeval
    from seq.serving.codec import CodecError
    from seq.serving.transport import SyncSocket

    with pytest.raises(CodecError, match="complex128 is refused"):
        vlaeval.pack_message("observation", {"state": np.array([1j])}, 1)
    state = {"__ndarray__": True, "data": b"\0" * 16, "dtype": "<c16", "shape": [1]}
    frame = {"type": "observation", "payload": {"state": state}, "seq": 1, "timestamp": 0.0}
    with pytest.raises(CodecError, match="complex128 is refused"):
        vlaeval.unpack_message(msgpack.packb(frame))

    deploy_peers(tmp_path)
    with serve("complex-out", port=0) as server:
        sock = SyncSocket(server.url)
        sock.send(pack_message(Message(MessageType.HELLO, {}, seq=1)))
        sock.recv(10)
        sock.send(pack_message(Message(MessageType.OBSERVATION, {"state": np.zeros(2)}, seq=2)))
        refused = unpack_message(sock.recv(10))
        sock.close()
        openpi = SyncSocket(server.url)
        metadata = msgpack_numpy.unpackb(openpi.recv(10))
        complex_state = {b"__ndarray__": True, b"data": b"\0" * 16, b"dtype": "<c16", b"shape": [1]}
        openpi.send(msgpack.packb({"state": complex_state}))
        answer = openpi.recv(10)
        openpi.close()
    assert refused.type == MessageType.ERROR and refused.seq == 2
    assert "complex128 cannot travel to vla-eval" in refused.payload["error"]
    assert metadata["policy"]["name"] == "complex-out"
    assert isinstance(answer, str) and "complex128 is refused" in answer


def test_png_images_from_seq_s_client_reach_a_seq_policy_exactly(tmp_path):
    from seq.serving import vlaeval

    image = np.random.default_rng(5).integers(0, 255, (32, 40, 3), dtype=np.uint8)
    frame = vlaeval.pack_message("observation", {"image": image}, 1, png=True)
    assert np.array_equal(vlaeval.unpack_message(frame)["payload"]["image"], image)
    deploy_peers(tmp_path)
    with serve("image-stats", port=0) as server:
        handle = connect(server.url, protocol="vla-eval", image_encoding="png")
        handle.begin_episode(None)
        actions = handle.act({"image": image}, seed=0, instruction="look")
        handle.close()
    assert actions.tolist() == [[float(image.astype(np.int64).sum()), 32.0, 1.0]]


def test_openpi_s_chunk_broker_runs_against_a_seq_server(tmp_path):
    from openpi_client.action_chunk_broker import ActionChunkBroker
    from openpi_client.websocket_client_policy import WebsocketClientPolicy

    deploy_peers(tmp_path)
    with serve("dict-line", port=0, params={"chunk": 3}) as server:
        client = WebsocketClientPolicy(host=server.url)
        broker = ActionChunkBroker(client, action_horizon=3)
        state = np.array([0.2, 1.0])
        actions = [broker.infer({"state": state, "prompt": "near"})["actions"] for _ in range(6)]
        client._ws.close()
        assert server.stats()["requests"] == 2
    assert all(np.array_equal(action, line_step(state)) for action in actions)
