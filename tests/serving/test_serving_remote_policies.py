"""Every external server is a policy of its own: recorded under the name the user gives, or one
derived from its greeting and URL, with the URL and the greeting in the eval's manifest."""

from __future__ import annotations

import json

import pytest
from conftest import refused_in_one_line, run_cli
from peer_helpers import deploy_peers, suite_server
from serving_helpers import OpenPiReferenceServer, line_step

import seq
from seq.serving.remote import derived_name

vla_eval = pytest.importorskip("vla_eval.api")


def _openpi(obs):
    return {"actions": line_step(obs["state"])[None]}


def test_two_servers_evaluated_by_url_are_two_policies(tmp_path):
    deploy_peers(tmp_path)
    first, second = suite_server({"easy": 1, "hard": 1}), suite_server({"easy": 1, "hard": 1})
    with vla_eval.serve_background(first) as a, vla_eval.serve_background(second) as b:
        ids = [
            seq.eval.run(benchmark="line", policy_url=url, policy_protocol="vla-eval", envs=1).eval_id
            for url in (a.url, b.url)
        ]
        listed = json.loads(run_cli("eval", "ls", "--json").stdout)
    policies = {row["id"]: row["policy"] for row in listed}
    assert policies[ids[0]] != policies[ids[1]]
    assert policies[ids[0]] == f"suite-server-127.0.0.1-{a.port}@v1"
    manifest = seq.eval.report(ids[1]).manifest
    server = manifest.arms[0].server
    assert server["url"] == b.url and server["protocol"] == "vla-eval"
    assert server["metadata"]["model_server"] == "SuiteServer"


def test_a_server_is_recorded_under_the_name_the_user_gives(tmp_path):
    deploy_peers(tmp_path)
    with OpenPiReferenceServer(_openpi, {"robot": "line"}) as server:
        named = seq.eval.run(
            benchmark="line", policy_url=server.url, policy_protocol="openpi", policy_name="line-pi0", envs=1
        )
        again = seq.eval.run(
            benchmark="line", policy_url=server.url, policy_protocol="openpi", policy_name="line-pi0", envs=1
        )
        unnamed = seq.eval.run(benchmark="line", policy_url=server.url, policy_protocol="openpi", envs=1)
    assert named.policy == again.policy == "line-pi0@v1"  # the same greeting: the same version
    assert unnamed.policy == f"openpi-server-127.0.0.1-{server.port}@v1"
    assert named.manifest.arms[0].server["metadata"] == {"robot": "line"}
    assert all(e.status == "ok" for e in named.episodes)


def test_a_seq_server_is_recorded_as_the_policy_it_serves_over_any_protocol(tmp_path):
    deploy_peers(tmp_path)
    with seq.serve("dict-line", port=0) as server:
        reports = [
            seq.eval.run(benchmark="line", policy_url=server.url, policy_protocol=protocol, envs=1)
            for protocol in ("seq", "vla-eval", "openpi")
        ]
    assert {report.policy for report in reports} == {"dict-line@v1"}


def test_names_are_derived_from_the_greeting_and_where_the_server_runs():
    assert derived_name("ws://gpu-3:8000", "vla-eval", {"model_server": "CogACTModelServer"}) == (
        "cog-act-model-server-gpu-3-8000"
    )
    assert derived_name("wss://host.example/pi05", "openpi", {}) == "openpi-server-host.example-pi05"
    assert derived_name("ws://10.0.0.2:9000", "openpi", {"name": "pi0 droid"}) == "pi0-droid-10.0.0.2-9000"


def test_a_bad_policy_name_is_refused_with_exit_2(tmp_path):
    deploy_peers(tmp_path)
    with OpenPiReferenceServer(_openpi, {}) as server:
        base = (
            "eval",
            "run",
            "--benchmark",
            "line",
            "--policy-url",
            server.url,
            "--policy-protocol",
            "openpi",
        )
        refused_in_one_line(run_cli(*base, "--policy-name", "pi0@v2"), "--policy-name", "no '@'")
        refused_in_one_line(run_cli(*base, "--policy-name", "dict-line"), "deployed from code")
        wrong = (
            "eval",
            "run",
            "--benchmark",
            "line",
            "--policy-url",
            server.url,
            "--policy-protocol",
            "vla-eval",
        )
        refused_in_one_line(run_cli(*wrong), "is not a vla-eval model server")
    refused_in_one_line(
        run_cli("eval", "run", "dict-line", "--benchmark", "line", "--policy-name", "x"), "--policy-url"
    )
    refused_in_one_line(
        run_cli("eval", "run", "dict-line", "--benchmark", "line", "--image-encoding", "jpeg"),
        "--image-encoding jpeg is for a served policy",
    )
    refused_in_one_line(
        run_cli("eval", "run", "dict-line", "--benchmark", "line", "--serve", "--image-encoding", "png"),
        "--image-encoding png: a seq server is sent images raw or jpeg",
    )


def test_images_reach_a_vla_eval_server_as_the_eval_s_image_encoding_says(tmp_path):
    deploy_peers(tmp_path)
    with seq.serve("image-stats", port=0) as server:
        exact = {}
        for encoding in ("png", "jpeg", "raw"):
            report = seq.eval.run(
                benchmark="camera",
                policy_url=server.url,
                policy_protocol="vla-eval",
                image_encoding=encoding,
                envs=1,
            )
            assert report.manifest.arms[0].image_encoding == encoding
            exact[encoding] = report.metric("exact").value
    assert exact == {"png": 1.0, "jpeg": 0.0, "raw": 1.0}  # JPEG is lossy
