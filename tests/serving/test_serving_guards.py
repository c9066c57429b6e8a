"""A server's guards: its token, the handshake and idle timeouts, and a client's own frame limit."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import numpy as np
import pytest
from serving_helpers import deploy_all

import seq
from seq.serving import RemotePolicy, connect, serve
from seq.serving.remote_errors import ServerRefusedToken, ServerUnreachable
from seq.serving.transport import ConnectionLost, SyncSocket

TOKEN = "s3cret-token"
STATE = np.array([0.0, 1.0])


@pytest.fixture(autouse=True)
def no_token_in_the_environment(monkeypatch):
    monkeypatch.delenv("SEQ_SERVER_TOKEN", raising=False)


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url.replace("ws://", "http://"), timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def _act(remote: RemotePolicy) -> list:
    remote.begin_episode(None)
    return remote.act(STATE, seed=0, instruction="near").tolist()


def test_a_server_with_a_token_answers_only_clients_that_present_it(tmp_path, monkeypatch):
    deploy_all(tmp_path)
    with serve("line-controller", port=0, token=TOKEN) as server:
        with pytest.raises(ServerRefusedToken, match="needs a token: give --policy-token TOKEN"):
            _act(RemotePolicy(server.url, retries=3))
        with pytest.raises(ServerRefusedToken, match="refused the token it was given"):
            _act(RemotePolicy(server.url, token="wrong"))
        with RemotePolicy(server.url, token=TOKEN) as remote:
            assert _act(remote) == [[0.1]]
        with RemotePolicy(f"{server.url}/?token={TOKEN}") as remote:  # for clients without headers
            assert _act(remote) == [[0.1]]
        monkeypatch.setenv("SEQ_SERVER_TOKEN", TOKEN)
        with RemotePolicy(server.url) as remote:
            assert _act(remote) == [[0.1]]
        assert _status(server.url + "/health") == 200  # a health check needs no token
        assert _status(server.url + "/stats") == 401
        assert _status(f"{server.url}/stats?token={TOKEN}") == 200
        assert server.stats()["requests"] == 3


def test_openpi_clients_present_the_token_as_their_api_key(tmp_path):
    websocket_client_policy = pytest.importorskip("openpi_client.websocket_client_policy")
    deploy_all(tmp_path)
    with serve("dict-line", port=0, token=TOKEN) as server:
        with pytest.raises(ServerRefusedToken):
            connect(server.url, protocol="openpi", retries=0).begin_episode(None)
        client = websocket_client_policy.WebsocketClientPolicy(host=server.url, api_key=TOKEN)
        assert client.infer({"state": STATE, "prompt": "near"})["actions"].tolist() == [[0.1]]
        client._ws.close()


def test_serving_off_loopback_needs_a_token(tmp_path):
    deploy_all(tmp_path)
    with pytest.raises(seq.SeqInputError, match=r"binding to 0\.0\.0\.0 \(not loopback\) needs a token"):
        serve("line-controller", host="0.0.0.0", port=0)
    with serve("line-controller", host="0.0.0.0", port=0, token=TOKEN) as server:
        local = server.url.replace("0.0.0.0", "127.0.0.1")
        with RemotePolicy(local, token=TOKEN) as remote:
            assert _act(remote) == [[0.1]]


def _eval_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from seq.cli import main; main()", "eval", "run", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        timeout=300,
    )


def test_seq_eval_run_without_the_right_token_exits_2_with_one_sentence(tmp_path):
    deploy_all(tmp_path)
    with serve("line-controller", port=0, token=TOKEN) as server:
        common = ("--benchmark", "line", "--tasks", "near", "--seeds", "0", "--policy-url", server.url)
        for extra, expected in (
            ((), "needs a token: give --policy-token TOKEN or set SEQ_SERVER_TOKEN."),
            (("--policy-token", "wrong"), "refused the token it was given"),
        ):
            done = _eval_cli(*common, *extra)
            assert done.returncode == 2, done.stdout + done.stderr
            assert done.stderr.startswith("seq: error: --policy-url ws://") and expected in done.stderr
            assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
        done = _eval_cli(*common, "--policy-token", TOKEN, "--no-save", "--json")
        assert done.returncode == 0, done.stderr


def test_a_silent_connection_is_dropped_and_an_idle_one_closed(tmp_path):
    deploy_all(tmp_path)
    with serve("line-controller", port=0, handshake_timeout_s=0.3, idle_timeout_s=0.5) as server:
        raw = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        raw.sendall(b"GET / HTTP/1.1\r\n")  # a handshake that never ends
        assert raw.recv(1024) == b""  # dropped, not held
        raw.close()
        idle = SyncSocket(server.url)
        with pytest.raises(ConnectionLost, match="1001.*idle for 0.5 s"):
            for _ in range(3):  # a greeting may come first (an openpi client is sent one after 1 s)
                idle.recv(10)
        with RemotePolicy(server.url) as remote:
            assert _act(remote) == [[0.1]]
            with pytest.raises(ConnectionLost, match="idle"):
                remote._sock.recv(10)  # idle between two episodes
            assert _act(remote) == [[0.1]]  # the next episode connects again
        assert server.metadata["capabilities"]["idle_timeout_s"] == 0.5


def test_a_client_refuses_a_frame_over_its_own_limit(tmp_path):
    deploy_all(tmp_path)
    with serve("line-controller", port=0) as server:
        with pytest.raises(ServerUnreachable, match="over this client's limit of 256 bytes"):
            RemotePolicy(server.url, max_frame_bytes=256, retries=0).begin_episode(None)
