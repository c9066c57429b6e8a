"""The policy server and `RemotePolicy`: served evals equal inline ones; health, metadata, errors."""

from __future__ import annotations

import json
import threading
import urllib.request

import numpy as np
import pytest
from serving_helpers import deploy_all, policy_module, rows, run_episodes

import seq
from seq.record.store import Store
from seq.registry.deploy import load_version, resolve
from seq.serving import RemotePolicy, RemotePolicyError, serve
from seq.serving.codec import SUBPROTOCOL, pack, unpack
from seq.serving.inline import ActRequest, InlinePolicy
from seq.serving.transport import SyncSocket


def _inline(name: str, **params):
    cls = load_version(resolve("policy", name, Store()))
    spec = seq.authoring.policy.policy_spec_of(cls)
    values = {p.name: p.default for p in spec.parameters.values()} | params
    return InlinePolicy(cls(), values)


def _get(url: str) -> tuple[int, dict]:
    with urllib.request.urlopen(url.replace("ws://", "http://"), timeout=10) as response:
        return response.status, json.loads(response.read())


@pytest.mark.parametrize(
    ("benchmark", "policy", "params", "steps_per_query"),
    [
        ("line", "line-controller", {"noise": 0.05}, None),
        ("line", "line-controller", {"noise": 0.05, "chunk": 4}, 2),
        ("line", "batched-line", {"noise": 0.05, "chunk": 3}, None),
        ("box-line", "random", {}, None),
    ],
)
def test_a_served_eval_gives_the_rows_of_an_inline_eval(tmp_path, benchmark, policy, params, steps_per_query):
    deploy_all(tmp_path)
    inline = run_episodes(benchmark, _inline(policy, **params), steps_per_query)
    with serve(policy, port=0) as server, RemotePolicy(server.url, parameters=params) as remote:
        served = run_episodes(benchmark, remote, steps_per_query)
    assert all(r.status == "ok" for r in served), [r.error for r in served]
    assert rows(served) == rows(inline)
    assert sum(r.queries for r in served) > len(served)  # several acts per episode, not one


def test_health_stats_and_the_hello_describe_the_policy(tmp_path):
    deploy_all(tmp_path)
    with serve("line-controller", port=0, params={"noise": 0.2}, max_batch_size=4) as server:
        assert server.url.startswith("ws://127.0.0.1:")
        assert _get(server.url + "/health") == (200, {"status": "ok"})  # exactly vla-eval's
        assert _get(server.url + "/healthz")[0] == 200
        assert _get(server.url + "/metadata")[1]["policy"]["label"] == "line-controller@v1"
        with RemotePolicy(server.url) as remote:
            remote.begin_episode(None)
            remote.act(np.zeros(2), seed=1, instruction="near")
            meta = remote.metadata
            assert remote.parameters["noise"].default == 0.0
        assert meta["policy"]["label"] == "line-controller@v1" and meta["protocol"] == "seq"
        assert meta["protocol_version"] == 1 and meta["batched"] is False
        assert meta["parameters"]["noise"] == {"type": "float", "default": 0.0, "value": 0.2}
        assert meta["capabilities"]["max_batch_size"] == 4
        status, stats = _get(server.url + "/stats")
        assert status == 200 and stats["requests"] == 1 and stats["protocols"]["seq"] == 1
        assert server.stats()["batch_size_histogram"] == {1: 1}


def test_a_remote_policy_describes_the_served_policy_from_the_hello_it_fetched_once(tmp_path):
    deploy_all(tmp_path)
    with serve("line-controller", port=0) as server:
        remote = RemotePolicy(server.url, retries=0)
        with pytest.raises(RuntimeError, match=r"call fetch_metadata\(\)"):
            _ = remote.label  # nothing fetched yet, and reading does not connect to fetch it
        assert server.stats()["connections_total"] == 0
        hello = remote.fetch_metadata()
        described = (remote.label, remote.plans, remote.parameters["noise"].default)
        assert server.stats()["connections_total"] == 1
        remote.close()
    assert hello["policy"]["label"] == "line-controller@v1"
    assert described == ("line-controller@v1", False, 0.0)
    # the server is gone: reading them again is reading the hello kept, not a connection
    assert (remote.label, remote.plans, remote.parameters["noise"].default) == described


def test_server_parameters_are_defaults_a_client_may_override(tmp_path):
    deploy_all(tmp_path)
    obs = np.array([0.0, 1.0])
    with serve("line-controller", port=0, params={"chunk": "3"}) as server:
        with RemotePolicy(server.url) as remote:
            remote.begin_episode(None)
            assert remote.act(obs, seed=0, instruction="near").shape == (3, 1)
        with RemotePolicy(server.url, parameters={"chunk": 2}) as remote:
            remote.begin_episode(None)
            assert remote.act(obs, seed=0, instruction="near").shape == (2, 1)
        with RemotePolicy(server.url, parameters={"bogus": 1}) as remote:
            with pytest.raises(RemotePolicyError, match="declares no parameter 'bogus'"):
                remote.begin_episode(None)


def test_an_eval_against_a_server_uses_the_values_the_server_was_started_with(tmp_path):
    """`seq policy serve POLICY --param chunk=3`, then an eval naming no value: the server's own
    value is used and recorded, not the policy's default sent back over it."""
    deploy_all(tmp_path)
    with serve("line-controller", port=0, params={"chunk": "3"}) as server:
        report = seq.eval.run(benchmark="line", policy_url=server.url, tasks=["near"], seeds=[0], envs=1)
        chosen = seq.eval.run(
            benchmark="line", policy_url=server.url, tasks=["near"], seeds=[0], envs=1, params={"chunk": 1}
        )
    (arm,) = report.manifest.arms
    assert arm.parameters["policy"]["chunk"] == 3
    (episode,) = report.episodes
    assert episode.queries == -(-episode.steps // 3)  # a chunk of 3 for each query
    assert chosen.manifest.arms[0].parameters["policy"]["chunk"] == 1
    assert chosen.episodes[0].queries == chosen.episodes[0].steps


def test_a_policy_exception_is_an_error_reply_with_its_traceback_and_the_episode_an_error(tmp_path):
    deploy_all(tmp_path)
    with serve("flaky", port=0) as server, RemotePolicy(server.url) as remote:
        remote.begin_episode(None)
        with pytest.raises(RemotePolicyError, match="boom from the policy") as raised:
            remote.act(np.zeros(2), seed=0, instruction="boom")
        assert raised.value.kind == "policy" and "Traceback" in raised.value.remote_traceback
        assert 'raise ValueError("boom from the policy")' in str(raised.value)  # the server's traceback
        with pytest.raises(RemotePolicyError, match="actions must be numbers"):
            remote.act(np.zeros(2), seed=0, instruction="strings")
        assert remote.act(np.zeros(2), seed=0, instruction="fine").tolist() == [[0.0]]
        assert server.stats()["errors"] == 2

    with serve("flaky", port=0) as server, RemotePolicy(server.url) as remote:
        results = {r.task: r for r in run_episodes("line", remote)}
    assert results["far"].status == "error" and results["far"].ended_by == "error"
    assert (
        "boom from the policy" in results["far"].error
        and "Traceback on the policy server" in results["far"].error
    )
    assert results["near"].status == "ok"


def test_several_episodes_acts_travel_in_one_message_and_an_error_stays_with_its_own(tmp_path):
    deploy_all(tmp_path)
    with serve("flaky", port=0) as server, RemotePolicy(server.url) as remote:
        for slot in range(3):
            remote.begin_episode(None, slot=slot)
        requests = [
            ActRequest(np.zeros(2), slot, instruction, slot)
            for slot, instruction in enumerate(["a", "boom", "b"])
        ]
        first, failed, last = remote.act_many(requests)
        assert first.tolist() == last.tolist() == [[0.0]]
        assert isinstance(failed, RemotePolicyError) and "boom from the policy" in str(failed)
        assert server.stats()["requests"] == 3 and server.stats()["errors"] == 1
        with pytest.raises(RemotePolicyError, match="seed must be an integer") as refused:
            remote.act_many([requests[0], ActRequest(np.zeros(2), "x", None, 1)])  # type: ignore[arg-type]
        assert refused.value.kind == "bad_request"
        assert remote.act(np.zeros(2), seed=0, instruction="fine").tolist() == [[0.0]]  # still usable


def test_a_malformed_frame_gets_an_error_reply_and_the_connection_stays_usable(tmp_path):
    deploy_all(tmp_path)
    with serve("line-controller", port=0) as server:
        sock = SyncSocket(server.url, subprotocols=[SUBPROTOCOL])
        hello = unpack(sock.recv(10))
        assert hello["type"] == "hello" and hello["payload"]["protocol"] == "seq"
        for bad in (b"\xc1\xc1 not msgpack", "some text", pack([1, 2]), pack({"type": "fly", "id": 3})):
            sock.send(bad)
            reply = unpack(sock.recv(10))
            assert reply["type"] == "error" and reply["kind"] == "bad_request", reply
        sock.send(
            pack({"type": "act", "id": 4, "obs": np.array([0.0, 1.0]), "seed": "x", "instruction": None})
        )
        assert unpack(sock.recv(10))["kind"] == "bad_request"
        sock.send(
            pack({"type": "act", "id": 5, "obs": np.array([0.0, 1.0]), "seed": 1, "instruction": "near"})
        )
        reply = unpack(sock.recv(10))
        assert reply["type"] == "action" and reply["id"] == 5 and reply["actions"].shape == (1, 1)
        sock.close()


def test_an_oversized_frame_is_refused_without_taking_the_server_down(tmp_path):
    deploy_all(tmp_path)
    big = np.zeros(4096)  # 32 KiB, over a 16 KiB limit
    with serve("dict-line", port=0, max_message_bytes=16 * 1024) as server:
        with RemotePolicy(server.url) as remote:
            remote.begin_episode(None)
            with pytest.raises(seq.serving.MessageTooLarge, match="over the server's limit of 16384"):
                remote.act({"state": np.zeros(2), "big": big}, seed=0, instruction=None)
            assert remote.act({"state": np.array([0.0, 1.0])}, seed=0, instruction=None).shape == (1, 1)
        sock = SyncSocket(server.url, subprotocols=[SUBPROTOCOL])
        sock.recv(10)
        sock.send(pack({"type": "act", "id": 1, "obs": big, "seed": 0, "instruction": None}))
        with pytest.raises(ConnectionError, match="1009 .message too big"):
            sock.recv(10)
        sock.close()
        assert _get(server.url + "/health")[0] == 200


def test_inference_runs_off_the_event_loop_so_health_checks_answer_meanwhile(tmp_path):
    deploy_all(tmp_path)
    module = policy_module("gated")
    module.GATE.clear()
    with serve("gated", port=0) as server, RemotePolicy(server.url) as remote:
        remote.begin_episode(None)
        acting = threading.Thread(
            target=remote.act, args=(np.zeros(1),), kwargs={"seed": 0, "instruction": None}
        )
        acting.start()
        assert module.ENTERED.wait(10)
        assert _get(server.url + "/health")[0] == 200  # answered while the policy is computing
        with RemotePolicy(server.url) as other:  # and a new connection is accepted
            assert other.fetch_metadata()["policy"]["label"] == "gated@v1"
        assert acting.is_alive()
        module.GATE.set()
        acting.join(10)
        assert not acting.is_alive()


def test_bad_input_to_serve_is_one_sentence(tmp_path):
    deploy_all(tmp_path)
    with pytest.raises(seq.SeqInputError, match="unknown policy 'nope'"):
        serve("nope", port=0)
    with pytest.raises(seq.SeqInputError, match="max_batch_size must be an integer of at least 1"):
        serve("line-controller", port=0, max_batch_size=0)
    with pytest.raises(seq.SeqInputError, match="declares no parameter 'bogus'"):
        serve("line-controller", port=0, params={"bogus": 1})
    with pytest.raises(seq.SeqInputError, match="expects float"):
        serve("line-controller", port=0, params={"noise": "loud"})
    with serve("line-controller", port=0) as server:
        with pytest.raises(seq.SeqInputError, match=f"cannot listen on 127.0.0.1:{server.port}"):
            serve("line-controller", port=server.port)


def test_images_travel_raw_by_default_and_as_jpeg_when_asked(tmp_path):
    deploy_all(tmp_path)
    yy, xx = np.mgrid[0:96, 0:128]
    image = np.stack([xx, yy, (xx + yy) // 2], axis=-1).astype(np.uint8)
    exact = [float(image.astype(np.int64).sum()), 96.0, 1.0]
    with serve("image-stats", port=0) as server:
        with RemotePolicy(server.url) as remote:
            remote.begin_episode(None)
            assert remote.act({"image": image}, seed=0, instruction=None)[0].tolist() == exact
        with RemotePolicy(server.url, image_encoding="jpeg", jpeg_quality=90) as remote:
            remote.begin_episode(None)
            total, height, itemsize = remote.act({"image": image}, seed=0, instruction=None)[0]
    assert (height, itemsize) == (96.0, 1.0) and total != exact[0]
    assert abs(total - exact[0]) / image.size < 2.0  # lossy, but close: under 2 levels per value
    with pytest.raises(seq.SeqInputError, match="image_encoding must be 'raw' or 'jpeg'"):
        RemotePolicy("ws://127.0.0.1:1", image_encoding="png")
