"""Several episodes per worker (`envs_per_worker`): the same rows, acts asked for together."""

from __future__ import annotations

import textwrap

import pytest
from conftest import refused_in_one_line, run_cli

import seq

BATCHED = textwrap.dedent('''
    """A batched line controller, and a policy that fails on one task."""
    import numpy as np

    import seq

    CALLS = []  # the size of each batched call


    @seq.policy(name="batched-line")
    class BatchedLine(seq.Policy):
        @seq.infer(batched=True)
        def infer(self, obs, *, seed=None, instruction=None, noise: float = 0.0, chunk: int = 1):
            CALLS.append(len(obs))
            out = []
            for o, s in zip(obs, seed):
                rng = np.random.default_rng(s)
                step = np.clip(o[1] - o[0], -0.1, 0.1)
                actions = np.array([[step + rng.normal(0.0, noise)] for _ in range(chunk)])
                out.append(actions if chunk > 1 else actions[0])
            return out


    @seq.policy(name="far-fails")
    class FarFails(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            if instruction == "far":
                raise ValueError("no policy reaches that far")
            return np.clip(obs[1:2] - obs[0:1], -0.1, 0.1)
''')


def _rows(report):
    return [
        (
            e.item_id,
            e.status,
            e.steps,
            e.queries,
            e.ended_by,
            {k: v for k, v in e.metrics.items() if k != "duration_s"},
        )
        for e in report.episodes
    ]


@pytest.fixture
def deployed(toy_file, tmp_path):
    (tmp_path / "batched_line.py").write_text(BATCHED)
    seq.deploy(toy_file)
    seq.deploy(tmp_path / "batched_line.py")


def test_served_episodes_side_by_side_give_the_rows_of_one_at_a_time(deployed):
    params = {"noise": "0.05", "chunk": "3", "eval.steps_per_query": "2"}
    alone = seq.eval.run("line-controller", benchmark="line", envs=2, params=params, trials=2)
    together = seq.eval.run(
        "line-controller", benchmark="line", envs=2, envs_per_worker=3, params=params, trials=2, serve=True
    )
    assert together.status == "completed" and _rows(together) == _rows(alone)
    assert together.manifest.envs_per_worker == 3
    assert together.arguments.serve.max_batch_size == 6  # one per episode running at once


def test_one_worker_sends_its_episodes_acts_in_one_message(deployed):
    with seq.serve("batched-line", port=0, max_batch_size=8) as server:
        report = seq.eval.run(benchmark="line", policy_url=server.url, envs=1, envs_per_worker=4, trials=2)
        histogram = server.stats()["batch_size_histogram"]
    alone = seq.eval.run("batched-line", benchmark="line", envs=1, trials=2)
    assert _rows(report) == _rows(alone)
    # one connection: a batch larger than one can only come from several acts in one message
    assert max(histogram) == 4


def test_a_batched_policy_inline_gets_one_call_per_round(deployed):
    alone = seq.eval.run("batched-line", benchmark="line", envs=1, params={"chunk": "2"})
    together = seq.eval.run(
        "batched-line", benchmark="line", envs=1, envs_per_worker=6, params={"chunk": "2"}
    )
    assert _rows(together) == _rows(alone)


def test_a_policy_error_fails_only_its_own_episode(deployed):
    with seq.serve("far-fails", port=0) as server:
        report = seq.eval.run(benchmark="line", policy_url=server.url, envs=1, envs_per_worker=6)
    near = [e for e in report.episodes if e.task == "near"]
    far = [e for e in report.episodes if e.task == "far"]
    assert len(near) == len(far) == 3
    assert all(e.status == "ok" and e.metrics["success"] == 1.0 for e in near)
    assert all(e.status == "error" and "no policy reaches that far" in e.error for e in far)


def test_a_hung_episode_costs_the_episodes_beside_it_and_the_eval_goes_on(deployed):
    report = seq.eval.run("batched-line", benchmark="line-wedge", envs=1, envs_per_worker=3)
    by_task = {e.task: e for e in report.episodes}
    assert by_task["wedge"].status == "timed_out" and by_task["wedge"].ended_by == "watchdog"
    # the others either finished before the watchdog fired, or were killed with it: then they are
    # the infrastructure's failure, left without a result for --resume
    killed = {entry.task: entry for entry in report.unfinished}
    assert set(killed) | {e.task for e in report.episodes if e.status == "ok"} == {"near", "far"}
    assert all("wedge|seed=0, which hung beside it" in entry.reason for entry in killed.values())
    assert report.status == ("incomplete" if killed else "completed")
    resumed = seq.eval.run(resume=report.eval_id)
    assert resumed.status == "completed" and len(resumed.episodes) == 3
    assert {e.task for e in resumed.episodes if e.status == "ok"} == {"near", "far"}


@pytest.mark.parametrize(
    ("options", "fragments"),
    [
        (["line-controller", "--envs-per-worker", "4"], ["takes one observation at a time", "--serve"]),
        (["batched-line", "--envs-per-worker", "0"], ["--envs-per-worker must be a positive integer"]),
        (
            ["--policy-url", "ws://127.0.0.1:9", "--policy-protocol", "vla-eval", "--envs-per-worker", "2"],
            ["vla-eval server does not take"],
        ),
    ],
)
def test_what_cannot_run_side_by_side_is_refused_in_one_line(deployed, options, fragments):
    refused_in_one_line(run_cli("eval", "run", "--benchmark", "line", *options), *fragments)
    assert seq.eval.ls() == []  # refused before anything was stored


def test_a_policy_object_in_this_process_is_refused(deployed):
    from seq.registry.deploy import load_version, resolve

    policy = load_version(resolve("policy", "batched-line", seq.Store()))()
    with pytest.raises(seq.SeqInputError, match="policy object in this process"):
        seq.eval.run(policy, benchmark="line", envs_per_worker=2)


def test_each_episode_side_by_side_keeps_its_own_trajectory(deployed):
    from seq.capture.trajectory import read_trajectory

    def steps(report):
        by_item = {}
        for episode in report.episodes:
            trajectory = read_trajectory(episode.artifacts["trajectory"])
            by_item[episode.item_id] = (trajectory.actions, trajectory.act_seeds, trajectory.observations)
        return by_item

    params = {"noise": "0.05"}
    alone = seq.eval.run("batched-line", benchmark="line", envs=1, params=params, trajectories=True)
    together = seq.eval.run(
        "batched-line", benchmark="line", envs=1, envs_per_worker=4, params=params, trajectories=True
    )
    assert steps(together) == steps(alone) and len(steps(alone)) == 6
