"""A policy server that dies mid-eval is the infrastructure's failure, not the policy's: the eval
ends `incomplete` with exit code 1, names each item left and why in one line, stops asking a
server that stays down (the circuit breaker), and `--resume` runs those items once it is back."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from fault_helpers import cli, free_port, kill, only_eval, rows, start_server, wait_until

import seq
from seq.engine.scheduler import CIRCUIT_AFTER

pytestmark = pytest.mark.slow  # servers killed and restarted, and the client's retries waited out


def test_a_vla_eval_server_killed_after_6_of_20_episodes_leaves_the_eval_incomplete_and_resumable(
    toy_file,
):
    """A server gone mid-eval: unhandled, every remaining episode waited out the retries, the eval
    ended `completed` with exit 0 and "success 1.00, n=4", and `--resume` ran nothing."""
    pytest.importorskip("vla_eval")
    assert run_cli("deploy", str(toy_file)).returncode == 0
    port = free_port()
    server = start_server(port, "vla-eval")
    url = f"ws://127.0.0.1:{port}"
    run = cli(
        "eval", "run", "--benchmark", "line", "--policy-url", url, "--policy-protocol", "vla-eval",
        "--seeds", "0-9", "--envs", "1", "--param", "delay=0.02",
    )  # fmt: skip
    try:
        wait_until(lambda: bool(seq.eval.ls()) and seq.eval.ls()[0]["done"] >= 6, "6 episodes")
        kill(server)
        stdout, stderr = run.communicate(timeout=300)
    finally:
        kill(server)
        if run.poll() is None:
            run.kill()
    eval_id = only_eval()
    report = seq.eval.report(eval_id)
    assert run.returncode == 1, stderr
    assert report.status == "incomplete" and report.total == 20 and 6 <= report.done < 20
    assert all(e.status == "ok" for e in report.episodes)  # no server failure counted as the policy's
    assert report.metric("success").n == report.done

    # the circuit breaker: after CIRCUIT_AFTER episodes could not reach it, the server was asked no more
    failed = [r for r in rows(eval_id) if r.failure == "infrastructure"]
    kinds = [r.ended_by for r in failed]
    assert kinds.count("server_lost") <= 1  # the episode running when it died, if any
    assert kinds.count("server_unreachable") == CIRCUIT_AFTER
    assert kinds.count("circuit_open") == 20 - report.done - CIRCUIT_AFTER - kinds.count("server_lost") > 0
    assert len(report.unfinished) == 20 - report.done == len(failed)

    # what the command printed: the status, and why items were left, one line per reason
    words = " ".join(stdout.split())
    assert f"incomplete, {report.done}/20 episodes" in words
    assert f"seq eval run --resume {eval_id} runs them again" in words
    reasons = {entry.reason for entry in report.unfinished}
    for reason in reasons:
        (line,) = [line for line in stdout.splitlines() if reason in line]
        shared = sum(entry.reason == reason for entry in report.unfinished)
        assert shared == 1 or f"{shared} work items (first " in line
    assert any(f"the policy server at {url}" in e.reason for e in report.unfinished)
    assert any("unreachable for 3 episodes in a row" in e.reason for e in report.unfinished)

    server = start_server(port, "vla-eval")  # back: --resume runs exactly the items left
    try:
        resumed = run_cli("eval", "run", "--resume", eval_id, "--json")
    finally:
        kill(server)
    assert resumed.returncode == 0, resumed.stderr
    report = seq.eval.report(eval_id)
    assert (report.status, report.done, report.total) == ("completed", 20, 20)
    assert all(e.status == "ok" for e in report.episodes) and report.unfinished == []
    assert {e.attempt for e in report.episodes if e.item_id in {r.item_id for r in failed}} == {2}
    assert len(rows(eval_id)) == 20 + len(failed)  # the failed attempts are kept


def _server_killed_mid_eval(toy_file, *options: str) -> tuple[str, str]:
    """`seq eval run` of 40 line episodes on 2 workers against a seq server killed once 2 episodes
    are done and never restarted; the eval's id and its JSON output (it must exit 1)."""
    assert run_cli("deploy", str(toy_file)).returncode == 0
    port = free_port()
    server = start_server(port, "seq")
    run = cli(
        "eval", "run", "--benchmark", "line", "--policy-url", f"ws://127.0.0.1:{port}",
        "--seeds", "0-19", "--envs", "2", "--param", "delay=0.02", "--json", *options,
    )  # fmt: skip
    try:
        wait_until(lambda: bool(seq.eval.ls()) and seq.eval.ls()[0]["done"] >= 2, "2 episodes")
        kill(server)
        stdout, stderr = run.communicate(timeout=300)
    finally:
        kill(server)
        if run.poll() is None:
            run.kill()
    assert run.returncode == 1, stderr
    return only_eval(), stdout


def test_a_seq_server_that_stays_down_is_asked_no_more_by_any_worker(toy_file):
    """Two workers, one episode each, a server killed and never restarted: the eval stops within
    one retry window per worker instead of one per remaining item, and says so."""
    eval_id, stdout = _server_killed_mid_eval(toy_file, "--envs-per-worker", "1")
    failed = [r for r in rows(eval_id) if r.failure == "infrastructure"]
    kinds = [r.ended_by for r in failed]
    # each worker waits out the retries once, then tries once per episode until the circuit opens
    # (the other worker may be trying already then): every other item is recorded as not run
    assert kinds.count("server_lost") <= 2
    assert CIRCUIT_AFTER <= kinds.count("server_unreachable") <= CIRCUIT_AFTER + 1
    report = seq.eval.report(eval_id)
    assert kinds.count("circuit_open") > 0
    assert report.status == "incomplete" and len(report.unfinished) == 40 - report.done == len(failed)
    assert json.loads(stdout)["status"] == "incomplete"


def test_a_seq_server_gone_costs_every_episode_in_flight_side_by_side_and_no_worker(toy_file):
    """Left to itself, each worker runs its 20 episodes side by side: a server killed mid-eval costs
    each episode in flight (the infrastructure's failure, to `--resume`), the episodes that ended
    before stay recorded, and no worker dies of it (an episode that ends well as the server goes
    asks it nothing more)."""
    eval_id, _ = _server_killed_mid_eval(toy_file)
    report = seq.eval.report(eval_id)
    assert report.manifest.envs_per_worker == 20
    failed = [r for r in rows(eval_id) if r.failure == "infrastructure"]
    assert failed and {r.ended_by for r in failed} <= {"server_lost", "server_unreachable", "circuit_open"}
    assert "worker_died" not in {r.ended_by for r in rows(eval_id)}
    assert report.status == "incomplete" and len(report.unfinished) == 40 - report.done == len(failed)
    assert report.done >= 2
