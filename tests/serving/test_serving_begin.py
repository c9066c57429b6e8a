"""`@seq.begin`: a policy is told each episode's start — inline, served over seq's protocol, and
through vla-eval's own client — with its task, suite, instruction and seed."""

from __future__ import annotations

import numpy as np
import pytest
from peer_helpers import deploy_peers
from serving_helpers import rows, run_episodes

import seq
from seq.errors import SeqInputError
from seq.serving import RemotePolicy, serve
from seq.serving.inline import InlinePolicy


def _policy(name: str):
    from seq.record.store import Store
    from seq.registry.deploy import load_version, resolve

    return load_version(resolve("policy", name, Store()))


LINE_STARTS = [
    {"task": task, "suite": suite, "instruction": task, "seed": seed}
    for task, suite in (("near", "easy"), ("far", "hard"))
    for seed in range(3)
]


def test_the_hook_runs_before_each_inline_and_each_served_episode(tmp_path):
    deploy_peers(tmp_path)
    inline_policy = _policy("begin-line")()
    inline = run_episodes("line", InlinePolicy(inline_policy, {}))
    assert inline_policy.begun == LINE_STARTS
    assert all(r.status == "ok" for r in inline), [r.error for r in inline]

    served_policy = _policy("begin-line")()
    with serve(served_policy, port=0) as server, RemotePolicy(server.url) as remote:
        served = run_episodes("line", remote)
    assert served_policy.begun == LINE_STARTS
    assert rows(served) == rows(inline)


def test_the_hook_is_called_with_the_keywords_it_declares(tmp_path):
    deploy_peers(tmp_path)
    cls = _policy("task-only")
    run_episodes("line", InlinePolicy(cls(), {}))
    assert cls.tasks == ["near"] * 3 + ["far"] * 3


def test_a_hook_that_raises_fails_its_episode_inline_and_served(tmp_path):
    deploy_peers(tmp_path)
    inline = run_episodes("line", InlinePolicy(_policy("refuses-far")(), {}))
    with serve("refuses-far", port=0) as server, RemotePolicy(server.url) as remote:
        served = run_episodes("line", remote)
    for results in (inline, served):
        assert [r.status for r in results] == ["ok"] * 3 + ["error"] * 3
        assert all("no far episodes here" in r.error for r in results[3:])
    assert "Traceback on the policy server" in served[3].error


def test_vla_eval_s_episode_start_reaches_the_hook(tmp_path):
    vla_eval = pytest.importorskip("vla_eval.api")
    deploy_peers(tmp_path)
    policy = _policy("begin-line")()
    config = {
        "benchmarks": [
            {"benchmark": "serving_helpers:LineStepBenchmark", "episodes_per_task": 1, "max_steps": 40}
        ],
        "output_dir": str(tmp_path / "vla-results"),
    }
    with serve(policy, port=0) as server:
        (result,) = vla_eval.run(config, server_url=server.url, no_save=True, docker=False)
    assert result["mean_success"] == 1.0
    assert policy.begun == [
        {"task": "near", "suite": None, "instruction": None, "seed": 0},
        {"task": "near", "suite": None, "instruction": None, "seed": 1},
    ]


def test_an_eval_s_workers_call_the_hook_inline_and_served(tmp_path):
    deploy_peers(tmp_path)
    inline = seq.eval.run("begin-line", benchmark="line", envs=2)
    served = seq.eval.run("begin-line", benchmark="line", envs=2, serve=True)
    for report in (inline, served):  # infer raises when no episode began
        assert all(e.status == "ok" for e in report.episodes), [e.error for e in report.episodes]
    assert [e.steps for e in inline.episodes] == [e.steps for e in served.episodes]


def test_a_hook_that_declares_another_keyword_is_refused_when_declared():
    with pytest.raises(SeqInputError, match=r"@seq.begin takes the keywords task, suite, instruction, seed"):

        @seq.policy(name="bad-begin")
        class BadBegin(seq.Policy):
            @seq.begin
            def begin(self, episode_index):
                pass

            @seq.infer
            def infer(self, obs, *, seed=None, instruction=None):
                return np.zeros(1)


@pytest.mark.parametrize(
    "conventions, message",
    [
        ({"actions": {}}, "keys 'action' and/or 'observation'"),
        ({"action": {"position": {"dims": -1, "format": "delta_xyz"}}}, "dims must be a non-negative"),
        ({"action": {"position": {"dims": 3}}}, "format must be a non-empty string"),
        ({"action": {"position": {"dims": 3, "format": "x", "range": (1,)}}}, "range must be two numbers"),
        ({"action": {"position": {"dims": 3, "format": "x", "unit": "m"}}}, "unknown keys unit"),
    ],
)
def test_conventions_that_vla_eval_could_not_read_are_refused_when_declared(conventions, message):
    declared = conventions
    with pytest.raises(SeqInputError, match=message):

        @seq.policy(name="bad-conventions")
        class BadConventions(seq.Policy):
            conventions = declared

            @seq.infer
            def infer(self, obs, *, seed=None, instruction=None):
                return np.zeros(1)
