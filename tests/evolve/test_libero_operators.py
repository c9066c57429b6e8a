"""Evolve's operators on LIBERO, in LIBERO's own image: the benchmark declares object pose,
horizon and distractor; their candidates run (physics only) with the scripted policy, and traces
carry LIBERO's contacts, instruction and the goal's progress (`grasp_success`, `obj_to_target`),
so the failed-recovery detector judges LIBERO. A few short episodes: LIBERO steps ~28 times a
second here."""

from __future__ import annotations

import numpy as np
import pytest

import seq
from seq.authoring.conditions import Condition
from seq.capture.trace import read_trace
from seq.errors import SeqInputError
from seq.evolve.clusters import FailureCluster
from seq.evolve.detectors import Baseline, detect, unavailable
from seq.evolve.operators import OPERATORS, supported
from seq.evolve.scene import words as scene_words
from seq.evolve.versions import register
from seq.record.store import Store
from seq.registry.deploy import resolve
from seq.shelf.libero import Libero
from seq.shelf.libero_tasks import SUITES
from seq.shelf.libero_variants import CLEARANCE, DISTRACTOR

SPATIAL_TASK = SUITES["libero_spatial"][2][0]  # the bowl from the table's centre onto the plate
BOWL = "akita_black_bowl_1"


def _candidates() -> list[Condition]:
    operators = supported(Libero)
    assert set(operators) == {"pose", "horizon", "distractor"}
    seed = Condition(task=SPATIAL_TASK, seed=3, max_steps=130, suite="libero_spatial")
    cluster = FailureCluster("k1", "timeout")
    pose = OPERATORS["pose"].mutate(seed, cluster, operators["pose"])
    assert pose and all(set(c.extra) == {"obj_dx", "obj_dy"} for c in pose)
    horizon = OPERATORS["horizon"].mutate(seed, cluster, {**operators["horizon"], "seed_steps": 60})
    assert [c.max_steps for c in horizon] == [60, 48]
    distractor = OPERATORS["distractor"].mutate(seed, cluster, operators["distractor"])
    # one in the way (half-way to the plate), one beside the bowl at an angle the condition seeds
    assert [c.extra["distractor"] for c in distractor] == ["libero_mug_yellow", "milk"]
    assert distractor[0].extra["distractor_along"] == 0.5
    again = OPERATORS["distractor"].mutate(seed, cluster, operators["distractor"])
    elsewhere = Condition(task=SPATIAL_TASK, seed=4)
    other = OPERATORS["distractor"].mutate(elsewhere, cluster, operators["distractor"])
    assert again[1].extra == distractor[1].extra != other[1].extra
    assert OPERATORS["distractor"].mutate(distractor[0], cluster, operators["distractor"]) == []
    return [seed, pose[0], horizon[-1], distractor[0], distractor[1]]


def _clear(boxes: dict, name: str) -> float:
    """How far (on the table's plane) `name`'s box stands from the nearest other object's."""
    mine = np.asarray(boxes[name])
    gaps = []
    for other, box in boxes.items():
        if other == name:
            continue
        box = np.asarray(box)
        apart = np.maximum(np.maximum(box[:2] - mine[3:5], mine[:2] - box[3:5]), 0.0)
        gaps.append(float(apart.max()))
    return min(gaps)


def test_pose_horizon_and_distractor_candidates_run_on_libero():
    store = Store()
    base, moved, short, in_the_way, beside = _candidates()
    suites = {"evolved": [base, moved, short, in_the_way, beside]}
    staged = register("libero-evolve-test", resolve("benchmark", "libero", store), suites, {}, store)
    report = seq.eval.run("libero-scripted", benchmark=staged.label, suites=["evolved"], trials=1,
                          traces=True, envs=1, store=store)  # fmt: skip
    assert {e.status for e in report.episodes} == {"ok"}
    runs = [(e, read_trace(e.artifacts["trace"])) for e in report.episodes]
    by_key = {_key(t): (e, t) for e, t in runs}
    (episode, trace) = by_key[base.key]
    assert episode.metrics["success"] == 1.0 and episode.steps < 130
    assert trace.header["instruction"] == Libero().instruction(base)
    assert trace.header["geom_body"] and any(len(f) for _, f in trace.contacts)
    assert not detect(trace) and "instruction_mismatch" not in unavailable(trace)
    # the goal's progress, from the sim: the bowl held, then brought onto the plate
    held = np.array([info["grasp_success"] for info in trace.infos])
    distance = np.array([info["obj_to_target"] for info in trace.infos])
    assert held.sum() >= 5 and distance[0] > 0.1 and distance[-1] < 0.05
    _, moved_trace = by_key[moved.key]
    start = np.asarray(trace.observations[0]["objects"][BOWL][:2])
    shifted = np.asarray(moved_trace.observations[0]["objects"][BOWL][:2])
    offset = np.array([moved.extra["obj_dx"], moved.extra["obj_dy"]])
    assert np.allclose(shifted - start, offset, atol=0.01)
    short_episode, _ = by_key[short.key]
    assert short_episode.steps == 48 and short_episode.metrics["success"] == 0.0
    for condition in (in_the_way, beside):
        distracted, scene = by_key[condition.key]
        first = scene.observations[0]
        # in the scene, clear of every other object, every other body where the init state put it
        assert any(body.startswith(DISTRACTOR) for body in scene.header["geom_body"])
        assert _clear(first["object_boxes"], DISTRACTOR) >= CLEARANCE - 0.005
        for name, pose in trace.observations[0]["objects"].items():
            assert np.allclose(first["objects"][name][:3], pose[:3], atol=0.005), name
        assert distracted.status == "ok" and "distractor_interaction" not in unavailable(scene)
    # the mug half-way from the bowl to the plate stands between them
    way = by_key[in_the_way.key][1].observations[0]["object_boxes"]
    bowl, plate, mug = (np.asarray(way[n]) for n in (BOWL, "plate_1", DISTRACTOR))
    centre = (mug[:2] + mug[3:5]) / 2
    ends = [(b[:2] + b[3:5]) / 2 for b in (bowl, plate)]
    assert np.linalg.norm(centre - (ends[0] + ends[1]) / 2) < 0.15


def _key(trace) -> str:
    """The condition key of a trace's header (task, extra, seed)."""
    header = trace.header
    return Condition(task=header["task"], seed=header["seed"], variation=header.get("variation"),
                     extra=header.get("extra") or {}).key  # fmt: skip


LET_GO = """
import numpy as np

import seq
from seq.shelf.libero_scripted import scripted_action


@seq.policy(name="libero-let-go")
class LetGo(seq.Policy):
    \"\"\"libero-scripted that opens its hand when the object, lifted, comes within 20 cm of the
    basket, and then gives up: the object lost on the way and never taken again.\"\"\"

    benchmark_parameters = {"obs_mode": "state"}
    inputs = {"state": (8,), "objects": None, "object_boxes": None, "goal": None}

    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None):
        ((_, name, region),) = obs["goal"]
        target = next(k for k in obs["object_boxes"] if region.startswith(k))
        box, goal = np.asarray(obs["object_boxes"][name]), np.asarray(obs["object_boxes"][target])
        gap = np.linalg.norm((box[:2] + box[3:5]) / 2 - (goal[:2] + goal[3:5]) / 2)
        lifted = box[2] > 0.03
        if lifted and gap < 0.2:
            return np.array([0, 0, 0, 0, 0, 0, -1], dtype=np.float32)
        if not lifted and gap < 0.3:
            return np.array([0, 0, 0.3, 0, 0, 0, -1], dtype=np.float32)
        return scripted_action(obs).astype(np.float32)
"""


def _policy_from(tmp_path, name: str, text: str):
    import importlib.util
    import sys

    (tmp_path / f"{name}.py").write_text(text)
    spec = importlib.util.spec_from_file_location(name, tmp_path / f"{name}.py")
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_object_let_go_on_the_way_is_a_failed_recovery(tmp_path):
    """The soup carried towards the basket and dropped 20 cm short, never taken again: the
    episode's trace shows the grasp lost (LIBERO's own contacts between the finger pads and the
    soup) and the distance to the basket, and the failed-recovery detector names it."""
    module = _policy_from(tmp_path, "let_go", LET_GO)
    task = SUITES["libero_object"][0][0]
    report = seq.eval.run(module.LetGo, benchmark="libero", suites=["libero_object"],
                          tasks=[task], seeds=[0], max_steps=160, traces=True, envs=1)  # fmt: skip
    (episode,) = report.episodes
    trace = read_trace(episode.artifacts["trace"])
    assert episode.metrics["success"] == 0.0
    held = np.array([info["grasp_success"] for info in trace.infos])
    distance = np.array([info["obj_to_target"] for info in trace.infos])
    assert held.sum() >= 5 and not held[-5:].any()
    assert distance.min() < distance[0] - 0.2 and distance[-1] > 0.05
    base = Baseline(grasps=True)  # the task's successes grasp (the scripted policy's do)
    found = {f.type: f for f in detect(trace, base)}
    recovery = found["failed_recovery"]
    assert recovery.evidence["lost"] == "grasp" and recovery.evidence["held_steps"] >= 5
    assert recovery.step <= trace.steps - 5
    assert {"drop", "final_pose_error", "timeout"} <= set(found)


WRONG_OBJECT = """
import numpy as np

import seq
from seq.evolve.scene import words
from seq.shelf.libero_scripted import scripted_action


@seq.policy(name="libero-wrong-object")
class WrongObject(seq.Policy):
    \"\"\"libero-scripted sent to an object the goal does not name: it moves the wrong one.\"\"\"

    benchmark_parameters = {"obs_mode": "state"}
    inputs = {"state": (8,), "objects": None, "object_boxes": None, "goal": None}

    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None):
        ((predicate, name, target),) = obs["goal"]
        other = next(o for o in sorted(obs["objects"]) if not words(o) & (words(name) | words(target)))
        return scripted_action({**obs, "goal": [[predicate, other, target]]}).astype(np.float32)
"""


def test_the_wrong_object_is_an_instruction_mismatch_and_a_distractor_touched(tmp_path):
    """Told to put the alphabet soup in the basket, a policy that takes another object fails
    with both: LIBERO's other objects are the scene's distractors."""
    module = _policy_from(tmp_path, "wrong_object", WRONG_OBJECT)
    task = SUITES["libero_object"][0][0]
    report = seq.eval.run(module.WrongObject, benchmark="libero", suites=["libero_object"],
                          tasks=[task], seeds=[0], max_steps=100, traces=True, envs=1)  # fmt: skip
    (episode,) = report.episodes
    trace = read_trace(episode.artifacts["trace"])
    assert episode.metrics["success"] == 0.0 and "alphabet soup" in trace.header["instruction"]
    found = {f.type: f for f in detect(trace)}
    mismatch, touched = found["instruction_mismatch"], found["distractor_interaction"]
    assert not scene_words(mismatch.evidence["touched"]) & scene_words(trace.header["instruction"])
    assert touched.evidence["distractor"] == mismatch.evidence["touched"]
    assert any(b.startswith(("gripper", "robot")) for b in touched.evidence["touched_by"])
    assert list(found).index("instruction_mismatch") == 0  # the most specific names the failure


def test_a_key_libero_does_not_take_is_refused():
    store = Store()
    odd = Condition(task=SPATIAL_TASK, seed=3, max_steps=20, suite="libero_spatial", extra={"friction": 0.5})
    staged = register("libero-evolve-odd", resolve("benchmark", "libero", store), {"odd": [odd]}, {}, store)
    with pytest.raises(SeqInputError, match="libero: conditions take .* not friction"):
        seq.eval.run("libero-scripted", benchmark=staged.label, suites=["odd"], trials=1, envs=1, store=store)
