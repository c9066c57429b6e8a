"""`--engine ray`: the same plan, dispatcher and episode loop on Ray actors give the same rows."""

from __future__ import annotations

import re

import pytest

import seq

pytest.importorskip("ray")


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _rows(report):
    return [
        (e.item_id, e.status, e.steps, {k: v for k, v in e.metrics.items() if k != "duration_s"}, e.error)
        for e in report.episodes
    ]


LOCAL_DEATH = re.compile(
    r"^the worker process died \(exit code 7\) while running this episode; it was replaced\.$"
)
RAY_DEATH = re.compile(r"^the Ray actor died \(.+\) while running this episode; it was replaced\.$")


def test_ray_and_local_give_the_same_rows_and_record_errors(toy_file):
    seq.deploy(toy_file)
    local = seq.eval.run("line-controller", benchmark="line-errors", envs=2)
    on_ray = seq.eval.run("line-controller", benchmark="line-errors", envs=2, engine="ray")
    # a timeout included; the crashed worker or actor leaves its item without a result, saying why
    assert (on_ray.status, on_ray.done) == (local.status, local.done) == ("incomplete", 5)
    assert _rows(on_ray) == _rows(local)
    (ray_death,), (local_death,) = on_ray.unfinished, local.unfinished
    assert ray_death.task == local_death.task == "crash"
    assert LOCAL_DEATH.match(local_death.reason) and RAY_DEATH.match(ray_death.reason), ray_death


def test_a_served_policy_runs_in_a_ray_actor_with_the_same_rows(toy_file):
    seq.deploy(toy_file)
    params = {"noise": "0.05", "chunk": "2"}
    local = seq.eval.run("line-controller", benchmark="line", envs=2, params=params)
    served = seq.eval.run(
        "line-controller", benchmark="line", envs=2, params=params, engine="ray", serve=True
    )
    assert _rows(served) == _rows(local)


def test_a_served_eval_left_to_run_side_by_side_resumes_on_ray(toy_file):
    from seq.engine.prepare import start_eval
    from seq.engine.request import EvalRequest
    from seq.record.store import Store

    seq.deploy(toy_file)
    local = seq.eval.run("line-controller", benchmark="line", envs=1)
    with seq.serve("line-controller", port=0) as server:
        stored = start_eval(EvalRequest(benchmark="line", policy_url=server.url, envs=1), Store())
        assert stored.arguments.envs_per_worker == 6  # seq's own count, never asked for
        resumed = seq.eval.run(resume=stored.id, engine="ray")
    assert resumed.status == "completed" and _rows(resumed) == _rows(local)
    assert resumed.manifest.envs_per_worker == 1  # Ray's actors ran one episode at a time
