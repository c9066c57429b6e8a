"""Evals whose policy runs behind a server: `--serve`, `--policy-url`, and a server that dies."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from conftest import refused_in_one_line, run_cli

import seq


def _rows(report):
    return [
        (e.item_id, e.status, e.steps, e.queries, {k: v for k, v in e.metrics.items() if k != "duration_s"})
        for e in report.episodes
    ]


def test_served_and_inline_evals_give_identical_rows(toy_file):
    seq.deploy(toy_file)
    params = {"noise": "0.05", "chunk": "3", "eval.steps_per_query": "2"}
    inline = seq.eval.run("line-controller", benchmark="line", envs=2, params=params)
    served = seq.eval.run("line-controller", benchmark="line", envs=2, params=params, serve=True)
    assert served.status == "completed" and _rows(served) == _rows(inline)
    assert served.arguments.serve.max_batch_size == 2


def test_an_eval_uses_a_server_already_running(toy_file):
    seq.deploy(toy_file)
    inline = seq.eval.run("line-controller", benchmark="line", envs=2)
    with seq.serve("line-controller", port=0) as server:
        remote = seq.eval.run(benchmark="line", envs=2, policy_url=server.url)
        assert server.stats()["requests"] > 0
    assert remote.policy == inline.policy  # the server's hello names the same version
    assert _rows(remote) == _rows(inline)


def test_a_servers_param_stands_unless_the_eval_sets_it(toy_file):
    seq.deploy(toy_file)
    noisy = seq.eval.run("line-controller", benchmark="line", envs=1, params={"noise": "0.3"})
    quiet = seq.eval.run("line-controller", benchmark="line", envs=1)
    with seq.serve("line-controller", port=0, params={"noise": 0.3}) as server:
        served = seq.eval.run(benchmark="line", envs=1, policy_url=server.url)
        overridden = seq.eval.run(benchmark="line", envs=1, policy_url=server.url, params={"noise": "0"})
        planned = seq.eval.dry_run(benchmark="line", policy_url=server.url)
    assert planned["arms"][0]["parameters"]["policy.noise"] == {"value": 0.3, "from": "the server's"}
    assert _rows(served) == _rows(noisy) and _rows(overridden) == _rows(quiet)
    assert served.manifest.arms[0].parameters["policy"]["noise"] == 0.3  # what the policy used
    assert overridden.manifest.arms[0].parameters["policy"]["noise"] == 0.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _serve(port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from seq.cli import main; main()",
            "policy",
            "serve",
            "line-controller",
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server
        except OSError:
            time.sleep(0.1)
    raise AssertionError(server.communicate(timeout=5))


def _infrastructure_failures(eval_id: str) -> list[seq.EpisodeResult]:
    store = seq.Store()
    try:
        return [row for row in store.attempts(eval_id) if row.failure == "infrastructure"]
    finally:
        store.close()


@pytest.mark.parametrize("envs_per_worker", ["1", "3"])
def test_a_server_killed_mid_eval_leaves_the_episodes_in_flight_to_resume(toy_file, envs_per_worker):
    """The episodes a dead server cut short are the infrastructure's failure, not the policy's: the
    eval ends incomplete (exit code 1) and `--resume` runs exactly them once the server is back."""
    assert run_cli("deploy", str(toy_file)).returncode == 0
    port = _free_port()
    server = _serve(port)
    eval_process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from seq.cli import main; main()",
            "eval",
            "run",
            "--benchmark",
            "line",
            "--policy-url",
            f"ws://127.0.0.1:{port}",
            "--envs",
            "2",
            "--envs-per-worker",
            envs_per_worker,
            "--trials",
            "3",
            "--param",
            "delay=0.02",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while not seq.eval.ls() or seq.eval.ls()[0]["done"] < 3:
            assert eval_process.poll() is None, eval_process.communicate()
            time.sleep(0.05)
        eval_id = seq.eval.ls()[0]["id"]
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        # the server comes back only once the eval has seen it gone (an episode cut short, or one
        # that could not reach it): no timing decides whether the test tests anything
        while not _infrastructure_failures(eval_id):
            assert eval_process.poll() is None, eval_process.communicate()
            time.sleep(0.05)
        server = _serve(port)
        stdout, stderr = eval_process.communicate(timeout=180)
        assert eval_process.returncode == 1, stderr
        report = seq.eval.report(eval_id)
        assert (report.status, report.total) == ("incomplete", 18), stderr
        assert json.loads(stdout)["status"] == "incomplete"
        lost = _infrastructure_failures(eval_id)
        assert lost and {e.ended_by for e in lost} <= {"server_lost", "server_unreachable", "circuit_open"}
        assert len(report.unfinished) == 18 - report.done == len({e.item_id for e in lost}) < 18
        assert all(e.status == "ok" for e in report.episodes)  # none of it counted as the policy's

        resumed = run_cli("eval", "run", "--resume", eval_id)
        assert resumed.returncode == 0, resumed.stderr
    finally:
        if eval_process.poll() is None:
            eval_process.kill()
        os.killpg(server.pid, signal.SIGKILL)
    report = seq.eval.report(eval_id)
    assert (report.done, report.total, report.status) == (18, 18, "completed")
    assert len({e.item_id for e in report.episodes}) == 18 and all(e.status == "ok" for e in report.episodes)
    assert {e.item_id for e in report.episodes if e.attempt > 1} == {e.item_id for e in lost}


def test_a_policy_url_where_nothing_answers_is_refused_in_one_line(toy_file):
    assert run_cli("deploy", str(toy_file)).returncode == 0
    url = f"ws://127.0.0.1:{_free_port()}"
    refused_in_one_line(
        run_cli("eval", "run", "--benchmark", "line", "--policy-url", url),
        f"--policy-url {url}",
        "unreachable",
    )
