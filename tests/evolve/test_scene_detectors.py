"""Distractor injection on MetaWorld and the detectors that read the scene: real episodes of the
expert (the reference) and of the noisy expert on conditions with a distractor in the way."""

from __future__ import annotations

import os

import pytest

import seq
from seq.authoring.conditions import Condition
from seq.capture.trace import read_trace
from seq.evolve.clusters import FailureCluster
from seq.evolve.detectors import DETECTORS, Baseline, baselines, detect, unavailable
from seq.evolve.gates import novelty
from seq.evolve.operators import OPERATORS, supported
from seq.evolve.versions import register
from seq.record.store import Store
from seq.registry.deploy import resolve

pytest.importorskip("metaworld")

IN_THE_WAY = {"distractor": "box", "distractor_along": 0.5}


@pytest.fixture(scope="module")
def episodes(tmp_path_factory):
    """(policy, episode, trace) of the expert and the noisy expert (0.3) on push and pick-place
    with a box half-way from the object to its goal."""
    old = os.environ.get("SEQ_HOME")
    os.environ["SEQ_HOME"] = str(tmp_path_factory.mktemp("home"))
    try:
        store = Store()
        conditions = [
            Condition(task=task, seed=seed, max_steps=150, suite="distractor", extra=IN_THE_WAY)
            for task in ("push-v3", "pick-place-v3")
            for seed in (0, 1)
        ]
        staged = register("metaworld-distractor", resolve("benchmark", "metaworld", store),
                          {"distractor": conditions}, {"label": "test"}, store)  # fmt: skip
        out = []
        for policy, params in (("metaworld-expert", None), ("noisy-expert", {"noise": 0.3})):
            report = seq.eval.run(policy, benchmark=staged.label, suites=["distractor"], trials=3,
                                  params=params, traces=True, envs=1, store=store)  # fmt: skip
            out += [(policy, e, read_trace(e.artifacts["trace"])) for e in report.episodes]
    finally:
        if old is None:
            del os.environ["SEQ_HOME"]
        else:
            os.environ["SEQ_HOME"] = old
    return out


def _found(episodes, kind):
    base = baselines([t for _, _, t in episodes])
    return [
        (policy, episode, failure)
        for policy, episode, trace in episodes
        for failure in detect(trace, base.get(trace.header["task"]))
        if failure.type == kind
    ]


def test_the_distractor_is_in_the_scene_and_the_reference_still_succeeds(episodes):
    for policy, episode, trace in episodes:
        assert "seq_distractor" in trace.header["geom_body"]
        assert trace.header["extra"]["distractor"] == "box"
        if policy == "metaworld-expert":
            assert episode.metrics["success"] == 1.0
    touched = [t for _, _, t in episodes if DETECTORS["distractor_interaction"](t, _base())]
    assert touched, "the gripper pushes the box in the way on some episodes"


def _base() -> Baseline:
    return Baseline(grasps=True)


def test_distractor_interaction_is_detected_on_failures_only(episodes):
    found = _found(episodes, "distractor_interaction")
    assert found and {p for p, _, _ in found} == {"noisy-expert"}
    for _, episode, failure in found:
        assert episode.metrics["success"] == 0.0
        assert failure.evidence["distractor"] == "seq_distractor" and failure.evidence["contact_steps"] >= 1
        assert any(b.startswith(("left", "right", "obj", "hand")) for b in failure.evidence["touched_by"])
        assert 0 < failure.step <= episode.steps


def test_failed_recovery_is_a_lost_grasp_never_regained(episodes):
    found = _found(episodes, "failed_recovery")
    assert found and all(e.metrics["success"] == 0.0 for _, e, _ in found)
    assert any(f.evidence["lost"] == "grasp" and f.evidence["held_steps"] >= 5 for *_, f in found)
    for _, episode, trace in episodes:  # a success regained whatever it lost
        if episode.metrics["success"] == 1.0:
            assert DETECTORS["failed_recovery"](trace, _base()) is None


def test_instruction_mismatch_needs_an_instruction_and_says_so(episodes):
    _, _, trace = next(x for x in episodes if x[0] == "noisy-expert" and x[1].metrics["success"] == 0)
    assert (
        unavailable(trace)["instruction_mismatch"]
        == "the benchmark exposes no instruction for this condition"
    )
    assert "distractor_interaction" not in unavailable(trace)
    assert all(f.type != "instruction_mismatch" for f in detect(trace, _base()))
    trace.header["instruction"] = "pick up the red cube"
    assert "no body of the scene is named" in unavailable(trace)["instruction_mismatch"]


def test_instruction_mismatch_when_the_robot_handles_another_object(episodes):
    """Told to push the distractor, the policy pushed the task's own object (`obj`) first."""
    failed = [(e, t) for p, e, t in episodes if e.metrics["success"] == 0 and e.task == "push-v3"]
    assert failed
    episode, trace = failed[0]
    trace.header["instruction"] = "push the distractor box to the back of the table"
    assert "instruction_mismatch" not in unavailable(trace)
    (failure,) = [f for f in detect(trace, _base()) if f.type == "instruction_mismatch"]
    assert failure.evidence["touched"] == "obj" and failure.evidence["named_touched"] in (
        [],
        ["seq_distractor"],
    )
    for _, success, trace in episodes:  # the instruction its task is: no mismatch
        if success.metrics["success"] == 1.0 and success.task == "push-v3":
            trace.header["instruction"] = "push the obj puck to the goal"
            assert DETECTORS["instruction_mismatch"](trace, _base()) is None


def test_the_distractor_operator_is_seeded_and_novel():
    from seq.shelf.metaworld import MetaWorld

    how = supported(MetaWorld)["distractor"]
    seed = Condition(task="push-v3", seed=3, max_steps=500, suite="mt10")
    cluster = FailureCluster("k1", "stall")
    made = OPERATORS["distractor"].mutate(seed, cluster, how)
    assert made == OPERATORS["distractor"].mutate(seed, cluster, how)
    assert {c.extra["distractor"] for c in made} == {"box", "cylinder"}
    assert all(novelty(c, [seed], 500) >= 0.1 for c in made)
    assert OPERATORS["distractor"].mutate(made[0], cluster, how) == []
