"""Batching across connections, replicas, and what a client does when the server goes away."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from serving_helpers import deploy_all, policy_module

from seq.serving import RemotePolicy, ServerUnreachable, serve, transport
from seq.serving.inline import ActRequest


def _acts(url: str, client: int, count: int, out: dict, errors: list) -> None:
    try:
        with RemotePolicy(url, parameters={"noise": 0.1}, timeout_s=30) as remote:
            remote.begin_episode(None)
            out[client] = [
                remote.act(np.array([0.01 * client, 1.0]), seed=1000 * client + i, instruction="near")
                for i in range(count)
            ]
    except Exception as error:  # reported by the test
        errors.append(error)


def _expected(client: int, count: int) -> list[np.ndarray]:
    step = np.clip(1.0 - 0.01 * client, -0.1, 0.1)
    return [
        np.array([[step + np.random.default_rng(1000 * client + i).normal(0.0, 0.1)]]) for i in range(count)
    ]


def test_eight_clients_give_a_batched_policy_batches_and_each_its_own_answers(tmp_path):
    deploy_all(tmp_path)
    out: dict[int, list] = {}
    errors: list = []
    with serve("batched-line", port=0, max_batch_size=8, max_wait_ms=200) as server:
        threads = [threading.Thread(target=_acts, args=(server.url, c, 25, out, errors)) for c in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        stats = server.stats()
    assert not errors, errors
    histogram = stats["batch_size_histogram"]
    assert stats["requests"] == 8 * 25 and sum(size * n for size, n in histogram.items()) == 200
    assert max(histogram) > 1 and max(histogram) <= 8, histogram
    assert stats["mean_batch_size"] > 1.5, histogram
    for client in range(8):
        np.testing.assert_array_equal(np.concatenate(out[client]), np.concatenate(_expected(client, 25)))


def test_a_message_of_several_acts_still_waits_for_the_other_connections(tmp_path):
    """Two acts from one connection are as many requests as there are connections, but the batch
    waits for the other connection's, which can still come."""
    deploy_all(tmp_path)
    requests = [ActRequest(np.array([0.0, 1.0]), seed, "near", slot) for slot, seed in enumerate((1, 2))]
    answers: dict[str, list] = {}
    with serve("batched-line", port=0, max_batch_size=4, max_wait_ms=10_000) as server:
        with RemotePolicy(server.url) as first, RemotePolicy(server.url) as second:
            for remote in (first, second):
                for request in requests:
                    remote.begin_episode(None, slot=request.slot)
            waiting = threading.Thread(target=lambda: answers.setdefault("first", first.act_many(requests)))
            waiting.start()
            deadline = time.monotonic() + 10
            while server.stats()["queued"] < 2:
                assert time.monotonic() < deadline, server.stats()
                time.sleep(0.01)
            assert server.stats()["queued"] == 2  # held for the second connection (the histogram proves it)
            answers["second"] = second.act_many(requests)
            waiting.join(10)
        histogram = server.stats()["batch_size_histogram"]
    assert histogram == {4: 1}
    assert [a.tolist() for a in answers["first"]] == [a.tolist() for a in answers["second"]]


def test_a_policy_that_is_not_batched_is_called_one_request_at_a_time(tmp_path):
    deploy_all(tmp_path)
    out: dict[int, list] = {}
    errors: list = []
    with serve("line-controller", port=0, max_batch_size=8) as server:
        threads = [threading.Thread(target=_acts, args=(server.url, c, 10, out, errors)) for c in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    assert not errors, errors  # a list of observations would have made line-controller raise
    for client in range(4):
        np.testing.assert_array_equal(np.concatenate(out[client]), np.concatenate(_expected(client, 10)))


def test_a_lone_client_is_not_kept_waiting_for_a_batch_that_cannot_fill(tmp_path):
    deploy_all(tmp_path)
    with serve("batched-line", port=0, max_batch_size=8, max_wait_ms=600_000) as server:
        with RemotePolicy(server.url, timeout_s=20) as remote:  # raises if the server waited 10 minutes
            remote.begin_episode(None)
            for seed in range(5):
                remote.act(np.array([0.0, 1.0]), seed=seed, instruction="near")
        assert server.stats()["batch_size_histogram"] == {1: 5}


def test_replicas_compute_at_the_same_time(tmp_path):
    deploy_all(tmp_path)
    module = policy_module("gated")
    module.GATE.clear()
    module.INSIDE.clear()
    with serve("gated", port=0, replicas=2) as server:
        remotes = [RemotePolicy(server.url, timeout_s=30) for _ in range(2)]
        for remote in remotes:
            remote.begin_episode(None)
        threads = [
            threading.Thread(target=r.act, args=(np.zeros(1),), kwargs={"seed": 0, "instruction": None})
            for r in remotes
        ]
        for thread in threads:
            thread.start()
        for _ in range(200):  # both replicas inside infer while the gate is closed
            if len(set(module.INSIDE)) == 2:
                break
            threading.Event().wait(0.05)
        assert len(set(module.INSIDE)) == 2
        module.GATE.set()
        for thread in threads:
            thread.join(10)
        for remote in remotes:
            remote.close()
        assert server.stats()["requests"] == 2


def test_the_client_reconnects_with_backoff_and_raises_server_unreachable(monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr(transport.time, "sleep", waits.append)
    remote = RemotePolicy("ws://127.0.0.1:9", retries=3, backoff_s=0.5, open_timeout_s=2)
    with pytest.raises(ServerUnreachable, match="ws://127.0.0.1:9 is unreachable after 4 attempts") as raised:
        remote.begin_episode(None)
    assert raised.value.reason == "server_unreachable"
    assert waits == [0.5, 1.0, 2.0]


SERVER = """
import sys
import seq.serving
handle = seq.serving.serve("line-controller", port=int(sys.argv[1]))
print(handle.url, flush=True)
handle.wait()
"""


def _start_server(port: int) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(port)], stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    url = process.stdout.readline().strip()
    assert url.startswith("ws://"), url
    return process, url


def test_a_server_killed_mid_episode_is_server_unreachable_and_the_next_episode_reconnects(tmp_path):
    from serving_helpers import rows, run_episodes

    deploy_all(tmp_path)
    process, url = _start_server(0)
    port = int(url.rsplit(":", 1)[1])
    remote = RemotePolicy(url, retries=1, backoff_s=0.05, timeout_s=30)
    try:
        remote.begin_episode(None)
        remote.act(np.array([0.0, 1.0]), seed=0, instruction="near")
        process.kill()
        process.wait(10)
        with pytest.raises(ServerUnreachable, match="went away during an act"):
            remote.act(np.array([0.0, 1.0]), seed=1, instruction="near")
        with pytest.raises(ServerUnreachable, match="not connected"):
            remote.act(np.array([0.0, 1.0]), seed=2, instruction="near")
        failed = run_episodes("line", remote)[:1]
        assert failed[0].status == "error" and failed[0].failure == "infrastructure"
        assert failed[0].ended_by == "server_unreachable" and "is unreachable" in failed[0].error
        process, _ = _start_server(port)
        assert [r.status for r in run_episodes("line", remote)] == ["ok"] * 6
        assert rows(run_episodes("line", remote)) == rows(run_episodes("line", remote))
    finally:
        remote.close()
        process.kill()
        process.wait(10)


def test_a_server_closed_between_or_during_episodes_is_noticed(tmp_path):
    deploy_all(tmp_path)
    obs = np.array([0.0, 1.0])
    server = serve("line-controller", port=0)
    port = server.port
    remote = RemotePolicy(server.url, retries=2, backoff_s=0.05)
    remote.begin_episode(None)
    remote.act(obs, seed=0, instruction="near")
    server.close()
    with pytest.raises(ServerUnreachable, match="1001"):
        remote.act(obs, seed=1, instruction="near")
    with serve("line-controller", port=port):
        remote.begin_episode(None)  # reconnects
        remote.act(obs, seed=2, instruction="near")
    with serve("line-controller", port=port):  # the server restarted between two episodes
        remote.begin_episode(None)
        assert remote.act(obs, seed=3, instruction="near").shape == (1, 1)
    remote.close()
