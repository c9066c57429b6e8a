"""`seq policy serve`: serves until Ctrl-C, says where, and refuses bad input with exit code 2."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import numpy as np
from conftest import default_ctrl_c
from serving_helpers import deploy_all

from seq.serving import RemotePolicy


def _policy_cli(*args: str) -> subprocess.Popen:
    environment = {key: value for key, value in os.environ.items() if key != "SEQ_SERVER_TOKEN"}
    return subprocess.Popen(
        [sys.executable, "-c", "from seq.cli import main; main()", "policy", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**environment, "COLUMNS": "200"},
        preexec_fn=default_ctrl_c,
    )


def test_seq_policy_serve_serves_until_ctrl_c(tmp_path):
    deploy_all(tmp_path)
    process = _policy_cli(
        "serve", "line-controller", "--port", "0", "--param", "chunk=2", "--max-batch-size", "4"
    )
    try:
        first = process.stdout.readline()
        assert first.startswith("serving line-controller@v1 at ws://127.0.0.1:"), (
            first + process.stderr.read()
        )
        url = first.split(" at ")[1].strip()
        assert "one request at a time" in process.stdout.readline()
        with RemotePolicy(url) as remote:
            remote.begin_episode(None)
            assert remote.act(np.array([0.0, 1.0]), seed=0, instruction="near").shape == (2, 1)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert "stopped: 1 requests in 1 batches" in out
    assert "connection open" not in err, err  # websockets' INFO chatter is not seq's progress


def test_bad_input_is_one_sentence_and_exit_code_2(tmp_path):
    deploy_all(tmp_path)
    for args, expected in (
        (("serve", "nope", "--port", "0"), "unknown policy 'nope'"),
        (("serve", "line-controller", "--port", "0", "--param", "loud=1"), "declares no parameter 'loud'"),
        (("serve", "line-controller", "--port", "0", "--replicas", "0"), "replicas must be an integer"),
        (("serve", "line-controller", "--port", "0", "--host", "0.0.0.0"), "(not loopback) needs a token"),
    ):
        process = _policy_cli(*args)
        out, err = process.communicate(timeout=60)
        assert process.returncode == 2, (args, out, err)
        assert err.startswith("seq: error: ") and expected in err and err.count("\n") == 1, err
        assert "Traceback" not in err
