"""Both directions of both peers' protocols, against the real packages (the `interop` extra):
openpi (`openpi-client`) and vla-evaluation-harness (`vla-eval`)."""

from __future__ import annotations

import numpy as np
import pytest
from serving_helpers import (
    LineStepBenchmark,
    OpenPiReferenceServer,
    deploy_all,
    line_step,
    rows,
    run_episodes,
)

from seq.serving import RemotePolicyError, connect, serve
from seq.serving.inline import InlinePolicy

openpi_client = pytest.importorskip("openpi_client.websocket_client_policy")
vla_eval = pytest.importorskip("vla_eval.api")


def _dict_line_inline():
    from seq.record.store import Store
    from seq.registry.deploy import load_version, resolve

    return InlinePolicy(load_version(resolve("policy", "dict-line", Store()))(), {"chunk": 1})


def test_an_openpi_client_uses_a_seq_server(tmp_path):
    deploy_all(tmp_path)
    with serve("dict-line", port=0) as server:
        client = openpi_client.WebsocketClientPolicy(host=server.url)
        metadata = client.get_server_metadata()  # the metadata itself, as openpi's server sends it
        assert metadata["policy"]["label"] == "dict-line@v1" and metadata == server.metadata
        state = np.array([0.2, 1.0])
        answer = client.infer({"state": state, "prompt": "near"})
        np.testing.assert_array_equal(answer["actions"], line_step(state)[None])
        assert "infer_ms" in answer["server_timing"]
        client._ws.close()
        assert server.stats()["protocols"]["openpi"] == 1

    with serve("flaky", port=0) as server:
        client = openpi_client.WebsocketClientPolicy(host=server.url)
        with pytest.raises(RuntimeError, match="boom from the policy"):
            client.infer({"state": np.zeros(2), "prompt": "boom"})
        assert client.infer({"state": np.zeros(2), "prompt": "ok"})["actions"].shape == (1, 1)  # still usable
        client._ws.close()


def test_seq_evaluates_an_openpi_server(tmp_path):
    deploy_all(tmp_path)
    prompts = []

    def infer(obs):
        prompts.append(obs["prompt"])
        if obs["prompt"] == "far" and len(prompts) > 50:
            raise ValueError("the openpi policy failed")
        return {"actions": line_step(obs["state"])[None]}

    with OpenPiReferenceServer(infer, {"robot": "line"}) as server:
        handle = connect(server.url, protocol="openpi")
        served = run_episodes("line", handle)
        assert handle.metadata == {"robot": "line"}
        handle.close()
    inline = run_episodes("line", _dict_line_inline())
    near = [r for r in served if r.task == "near"]
    assert rows(near) == rows([r for r in inline if r.task == "near"])
    assert set(prompts) == {"near", "far"}
    failed = [r for r in served if r.status == "error"]
    assert failed and "the openpi policy failed" in failed[0].error  # its traceback, from the text frame


class _LineModel:
    """A vla-eval PredictModelServer running the line controller."""

    def __new__(cls, **kwargs):
        from vla_eval.model_servers.predict import PredictModelServer

        class LineModel(PredictModelServer):
            def predict(self, obs, ctx):
                return {"actions": line_step(obs["state"])}

        return LineModel(**kwargs)


def test_seq_evaluates_a_vla_eval_model_server(tmp_path):
    deploy_all(tmp_path)
    with vla_eval.serve_background(_LineModel()) as server:
        handle = connect(server.url, protocol="vla-eval")
        served = run_episodes("line", handle)
        assert "model_server" in handle.metadata
        handle.close()
    inline = run_episodes("line", _dict_line_inline())
    assert all(r.status == "ok" for r in served), [r.error for r in served]
    assert [(r.item_id, r.steps, r.metrics["success"]) for r in served] == [
        (r.item_id, r.steps, r.metrics["success"]) for r in inline
    ]  # vla-eval casts actions to float32, so distances differ in the last bits


def test_vla_eval_run_uses_a_seq_server_as_its_model_server(tmp_path):
    deploy_all(tmp_path)
    config = {
        "benchmarks": [
            {"benchmark": "serving_helpers:LineStepBenchmark", "episodes_per_task": 1, "max_steps": 40}
        ],
        "output_dir": str(tmp_path / "vla-results"),
    }
    with serve("dict-line", port=0, params={"chunk": 3}) as server:
        (result,) = vla_eval.run(config, server_url=server.url, no_save=True, docker=False)
        stats = server.stats()
    assert result["mean_success"] == 1.0 and not result.get("partial"), result
    assert result["server_info"]["policy"]["label"] == "dict-line@v1"
    episodes = [e for task in result["tasks"] for e in task["episodes"]]
    steps = sum(e["steps"] for e in episodes)
    assert len(episodes) == 2 and stats["protocols"]["vla-eval"] == 1
    assert stats["requests"] < steps  # chunks of 3 are answered one action per observation
    assert LineStepBenchmark().get_tasks()[0]["name"] == "near"


def test_a_vla_eval_frame_that_is_malformed_gets_an_error_and_the_connection_stays(tmp_path):
    from vla_eval.protocol.messages import Message, MessageType, pack_message, unpack_message

    from seq.serving.transport import SyncSocket

    deploy_all(tmp_path)
    with serve("dict-line", port=0) as server:
        sock = SyncSocket(server.url)
        sock.send(pack_message(Message(MessageType.HELLO, {"harness_version": "0.8.0"}, seq=1)))
        hello = unpack_message(sock.recv(10))
        assert hello.type == MessageType.HELLO and hello.seq == 1  # the client's seq, echoed
        sock.send(b"\xc1 garbage")
        assert unpack_message(sock.recv(10)).type == MessageType.ERROR
        sock.send(pack_message(Message(MessageType.EPISODE_START, {"task": {"name": "near"}}, seq=2)))
        sock.send(pack_message(Message(MessageType.OBSERVATION, {"state": np.array([0.0, 1.0])}, seq=3)))
        reply = unpack_message(sock.recv(10))
        assert reply.type == MessageType.ACTION and reply.seq == 3
        assert reply.payload["actions"].dtype == np.float32 and reply.payload["actions"].tolist() == [
            np.float32(0.1)
        ]
        sock.close()


def test_peer_protocols_refuse_what_they_cannot_carry():
    from seq.errors import SeqInputError

    with pytest.raises(SeqInputError, match="takes no parameters"):
        connect("ws://127.0.0.1:1", protocol="openpi", parameters={"noise": 1.0})
    with pytest.raises(SeqInputError, match="protocol must be one of"):
        connect("ws://127.0.0.1:1", protocol="grpc")
    with pytest.raises(RemotePolicyError, match="not a seq policy server"):
        with OpenPiReferenceServer(lambda obs: obs, {}) as server:
            connect(server.url).begin_episode(None)


def test_png_images_from_a_vla_eval_client_reach_the_policy_exactly(tmp_path):
    from vla_eval.protocol.messages import Message, MessageType, pack_message, unpack_message

    from seq.serving.transport import SyncSocket

    deploy_all(tmp_path)
    image = np.random.default_rng(3).integers(0, 255, (64, 48, 3), dtype=np.uint8)
    with serve("image-stats", port=0) as server:
        sock = SyncSocket(server.url)
        sock.send(pack_message(Message(MessageType.HELLO, {}, seq=1)))
        assert unpack_message(sock.recv(10)).type == MessageType.HELLO
        sock.send(pack_message(Message(MessageType.EPISODE_START, {"task": {"name": "look"}}, seq=2)))
        sock.send(pack_message(Message(MessageType.OBSERVATION, {"image": image}, seq=3)))  # PNG: the default
        reply = unpack_message(sock.recv(10))
        sock.close()
    assert reply.type == MessageType.ACTION, reply.payload
    assert reply.payload["actions"].tolist() == [float(image.astype(np.int64).sum()), 64.0, 1.0]


def test_seq_eval_run_drives_openpi_and_vla_eval_servers_from_its_workers(tmp_path):
    import seq

    deploy_all(tmp_path)
    inline = seq.eval.run("dict-line", benchmark="line", envs=2)
    expected = [(e.item_id, e.steps, e.metrics["success"]) for e in inline.episodes]
    with OpenPiReferenceServer(lambda obs: {"actions": line_step(obs["state"])[None]}, {}) as server:
        openpi = seq.eval.run(benchmark="line", policy_url=server.url, policy_protocol="openpi", envs=2)
    with vla_eval.serve_background(_LineModel()) as server:
        vla = seq.eval.run(benchmark="line", policy_url=server.url, policy_protocol="vla-eval", envs=2)
    for report in (openpi, vla):
        assert all(e.status == "ok" for e in report.episodes), [e.error for e in report.episodes]
        assert [(e.item_id, e.steps, e.metrics["success"]) for e in report.episodes] == expected
