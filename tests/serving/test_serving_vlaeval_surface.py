"""vla-eval's server surface, as vla-eval's own server tests check it, against a `seq` server:
`/health` exactly `{"status": "ok"}`, `/config` read and set while serving, the backpressure
warnings at vla-eval's thresholds (its own `Connection` as the clients), and its protocol's
details (errors answer the frame's `seq`, name an unknown type, and stay one line)."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request

import msgpack
import numpy as np
import pytest
from serving_helpers import deploy_all

from seq.serving import backpressure, batcher, serve
from seq.serving.transport import SyncSocket

anyio = pytest.importorskip("anyio")
pytest.importorskip("vla_eval.connection")


def _http(url: str, method: str = "GET") -> tuple[int, str | None, dict]:
    request = urllib.request.Request(url.replace("ws://", "http://"), method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("Content-Type"), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type"), json.loads(error.read())


def _vla_eval_clients(url: str, count: int) -> list[dict]:
    """`count` vla-eval clients (its own `Connection`) at once: an episode and one act each, the
    acts sent together once every client has connected."""
    from vla_eval.connection import Connection

    actions: list[dict] = []

    async def one(client: int, connected: list, go: anyio.Event) -> None:
        async with Connection(url) as conn:
            await conn.start_episode({"task": {"name": f"test_{client}"}})
            connected.append(client)
            if len(connected) == count:
                go.set()
            await go.wait()
            actions.append(await conn.act({"value": 1.0}))
            await conn.end_episode({"metrics": {"success": True}})

    async def all_of_them() -> None:
        connected: list = []
        go = anyio.Event()
        async with anyio.create_task_group() as group:
            for client in range(count):
                group.start_soon(one, client, connected, go)

    anyio.run(all_of_them)
    return actions


def test_health_is_exactly_vla_eval_s_and_config_tunes_the_running_server(tmp_path):
    deploy_all(tmp_path)
    with serve("slow", port=0, params={"delay_ms": 1.0}, max_batch_size=1) as server:
        assert _http(server.url + "/health") == (200, "application/json", {"status": "ok"})
        assert _http(server.url + "/metadata")[2]["policy"]["label"] == "slow@v1"
        status, _, body = _http(server.url + "/config")
        defaults = {"max_batch_size": 1, "max_wait_time": 0.01}
        assert (status, body) == (200, {"applied": {}, "config": defaults})

        status, _, body = _http(server.url + "/config?max_batch_size=8")
        assert status == 200 and body["applied"] == {"max_batch_size": 8}
        assert _http(server.url + "/config")[2]["config"]["max_batch_size"] == 8  # it persists
        assert server.metadata["capabilities"]["max_batch_size"] == 8

        for query in ("bad_key=1", "max_batch_size=abc", "max_batch_size=0", "max_wait_time=-1"):
            status, _, body = _http(server.url + "/config?" + query)
            assert status == 422 and len(body["errors"]) == 1, (query, body)
        assert body["errors"] == [
            "bad value for max_wait_time: max_wait_time must be a number of seconds of 0 or more, got '-1'"
        ]

        status, _, body = _http(server.url + "/config?max_batch_size=4&bad_key=1")  # valid keys apply
        assert status == 200 and body["applied"] == {"max_batch_size": 4}
        assert body["config"]["max_batch_size"] == 4
        assert body["errors"] == ["unknown key: bad_key"]
        status, _, body = _http(server.url + "/config?max_wait_time=0.5", method="POST")  # vla-eval reads it
        assert status == 200 and body["config"] == {"max_batch_size": 4, "max_wait_time": 0.5}

        (action,) = _vla_eval_clients(server.url, 1)  # the websocket still serves after a change
        np.testing.assert_array_equal(action["actions"], np.zeros(7, dtype=np.float32))


def test_a_token_guards_config_but_not_health(tmp_path):
    deploy_all(tmp_path)
    with serve("slow", port=0, token="s3cret") as server:
        assert _http(server.url + "/health")[0] == 200
        with pytest.raises(urllib.error.HTTPError, match="401"):
            urllib.request.urlopen(server.url.replace("ws://", "http://") + "/config?max_batch_size=2")
        status, _, body = _http(server.url + "/config?max_batch_size=2&token=s3cret")
        assert status == 200 and body["applied"] == {"max_batch_size": 2} and "errors" not in body


def test_backpressure_is_warned_of_at_vla_eval_s_threshold(tmp_path, caplog, monkeypatch):
    """vla-eval's `test_backpressure_warning_logged`: 5 clients at once on a policy taking 0.3 s
    an act, checked every 0.1 s."""
    monkeypatch.setattr(backpressure, "BACKPRESSURE_CHECK_INTERVAL_S", 0.1)
    monkeypatch.setattr(backpressure, "BACKPRESSURE_COOLDOWN_S", 0.0)
    deploy_all(tmp_path)
    caplog.set_level(logging.WARNING, logger="seq.serving")
    with serve("slow", port=0) as server:
        assert len(_vla_eval_clients(server.url, 1)) == 1  # the server learns its policy is slow
        assert len(_vla_eval_clients(server.url, 5)) == 5
        stats = server.stats()
    warnings = [r.getMessage() for r in caplog.records if "Backpressure detected" in r.getMessage()]
    assert warnings and "observations in-flight for inference" in warnings[0], caplog.text
    assert stats["in_flight"] == 0 and stats["in_flight_peak"] >= backpressure.BACKPRESSURE_THRESHOLD


def test_a_worker_s_side_by_side_acts_are_one_client_waiting(tmp_path, caplog, monkeypatch):
    """A seq worker sends its episodes' acts in one message: that is one client waiting, not a
    backlog (counted per act, every side-by-side eval warned)."""
    from seq.serving import codec

    monkeypatch.setattr(backpressure, "BACKPRESSURE_CHECK_INTERVAL_S", 0.01)
    monkeypatch.setattr(backpressure, "BACKPRESSURE_COOLDOWN_S", 0.0)
    deploy_all(tmp_path)
    caplog.set_level(logging.WARNING, logger="seq.serving")
    with serve("slow", port=0, params={"delay_ms": 5.0}) as server:
        sock = SyncSocket(server.url, subprotocols=[codec.SUBPROTOCOL])
        sock.recv(10)
        for number in range(3):
            acts = [{"episode": slot, "obs": 0.0, "seed": slot} for slot in range(10)]
            sock.send(codec.pack({"type": "act_batch", "id": number, "acts": acts}))
            assert len(codec.unpack(sock.recv(30))["results"]) == 10
        sock.close()
        assert server.stats()["in_flight_peak"] == 10
    assert "Backpressure detected" not in caplog.text


def test_a_deep_batch_queue_is_warned_of_as_vla_eval_warns(tmp_path, caplog, monkeypatch):
    """vla-eval's `test_batch_queue_depth_warning`: batches of 2 taking 0.3 s; 10 clients at once
    leave more than twice that waiting when a batch is taken."""
    monkeypatch.setattr(batcher, "QUEUE_DEPTH_COOLDOWN_S", 0.0)
    deploy_all(tmp_path)
    caplog.set_level(logging.WARNING, logger="seq.serving")
    with serve("cost-model", port=0, params={"c_ms": 300.0, "d_ms": 0.0}, max_batch_size=2) as server:
        assert len(_vla_eval_clients(server.url, 1)) == 1  # the server learns its policy is slow
        assert len(_vla_eval_clients(server.url, 10)) == 10
        stats = server.stats()
    warnings = [r.getMessage() for r in caplog.records if "Batch queue depth" in r.getMessage()]
    assert warnings and warnings[0].endswith(
        "exceeds 2x max_batch_size (2). Consider increasing max_batch_size or reducing shard count."
    ), caplog.text
    assert stats["queued_peak"] > 4 and stats["queued"] == 0


def test_vla_eval_errors_answer_the_frame_s_seq_and_stay_short(tmp_path, caplog):
    deploy_all(tmp_path)
    complex_obs = {"__ndarray__": True, "data": b"\0" * 8, "dtype": "<c8", "shape": [1]}
    caplog.set_level(logging.ERROR, logger="seq.serving")
    with serve("flaky", port=0) as server:
        start = {"type": "episode_start", "payload": {"task": {"name": "boom"}}, "seq": 2, "timestamp": 0.0}
        bad = {"type": "observation", "payload": {"state": complex_obs}, "seq": 3, "timestamp": 0.0}
        odd = {"type": "telemetry", "payload": {}, "seq": 4, "timestamp": 0.0}
        failing = {"type": "observation", "payload": {"task_description": "boom"}, "seq": 5, "timestamp": 0.0}
        sock = SyncSocket(server.url)
        sock.send(msgpack.packb({"type": "hello", "payload": {}, "seq": 1, "timestamp": 0.0}))
        sock.recv(30)
        sock.send(msgpack.packb(start))  # episode_start is not answered when it succeeds
        replies = []
        for frame in (bad, odd, failing):
            sock.send(msgpack.packb(frame))
            replies.append(msgpack.unpackb(sock.recv(30)))
        sock.close()
    assert [(r["type"], r["seq"]) for r in replies] == [("error", 3), ("error", 4), ("error", 5)]
    assert "complex64" in replies[0]["payload"]["error"]
    assert replies[1]["payload"]["error"].startswith("bad_request: unknown message type 'telemetry'")
    failed = replies[2]["payload"]["error"]
    assert failed == "observation_failed: ValueError: boom from the policy"  # one line, as vla-eval's
    assert "Traceback" in caplog.text and "boom from the policy" in caplog.text  # kept in the log
