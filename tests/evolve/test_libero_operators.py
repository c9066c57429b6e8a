"""Evolve's operators on LIBERO, in LIBERO's own image: the benchmark declares object pose and
horizon; their candidates run (physics only) with the scripted policy, and traces carry LIBERO's
contacts and instruction. A few short episodes: LIBERO steps ~28 times a second here."""

from __future__ import annotations

import numpy as np
import pytest

import seq
from seq.authoring.conditions import Condition
from seq.capture.trace import read_trace
from seq.errors import SeqInputError
from seq.evolve.clusters import FailureCluster
from seq.evolve.detectors import detect, unavailable
from seq.evolve.operators import OPERATORS, supported
from seq.evolve.scene import words as scene_words
from seq.evolve.versions import register
from seq.record.store import Store
from seq.registry.deploy import resolve
from seq.shelf.libero import Libero
from seq.shelf.libero_tasks import SUITES

SPATIAL_TASK = SUITES["libero_spatial"][2][0]  # the bowl from the table's centre onto the plate
BOWL = "akita_black_bowl_1"


def _candidates() -> list[Condition]:
    operators = supported(Libero)
    assert set(operators) == {"pose", "horizon"}
    seed = Condition(task=SPATIAL_TASK, seed=3, max_steps=130, suite="libero_spatial")
    cluster = FailureCluster("k1", "timeout")
    pose = OPERATORS["pose"].mutate(seed, cluster, operators["pose"])
    assert pose and all(set(c.extra) == {"obj_dx", "obj_dy"} for c in pose)
    horizon = OPERATORS["horizon"].mutate(seed, cluster, {**operators["horizon"], "seed_steps": 60})
    assert [c.max_steps for c in horizon] == [60, 48]
    return [seed, pose[0], horizon[-1]]


def test_pose_and_horizon_candidates_run_on_libero():
    store = Store()
    base, moved, short = _candidates()
    staged = register("libero-evolve-test", resolve("benchmark", "libero", store),
                      {"evolved": [base, moved, short]}, {"label": "test"}, store)  # fmt: skip
    report = seq.eval.run("libero-scripted", benchmark=staged.label, suites=["evolved"], trials=1,
                          traces=True, envs=1, store=store)  # fmt: skip
    assert {e.status for e in report.episodes} == {"ok"}
    runs = [(e, read_trace(e.artifacts["trace"])) for e in report.episodes]
    by_extra = {"short" if "horizon" in t.header["extra"] else t.header["extra"].get("obj_dx", 0.0): (e, t)
                for e, t in runs}  # fmt: skip
    (episode, trace) = by_extra[0.0]
    assert episode.metrics["success"] == 1.0 and episode.steps < 130
    assert trace.header["instruction"] == Libero().instruction(base)
    assert trace.header["geom_body"] and any(len(f) for _, f in trace.contacts)
    assert not detect(trace) and "instruction_mismatch" not in unavailable(trace)
    _, moved_trace = by_extra[moved.extra["obj_dx"]]
    start = np.asarray(trace.observations[0]["objects"][BOWL][:2])
    shifted = np.asarray(moved_trace.observations[0]["objects"][BOWL][:2])
    offset = np.array([moved.extra["obj_dx"], moved.extra["obj_dy"]])
    assert np.allclose(shifted - start, offset, atol=0.01)
    short_episode, _ = by_extra["short"]
    assert short_episode.steps == 48 and short_episode.metrics["success"] == 0.0


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
    import importlib.util
    import sys

    (tmp_path / "wrong_object.py").write_text(WRONG_OBJECT)
    spec = importlib.util.spec_from_file_location("wrong_object", tmp_path / "wrong_object.py")
    module = sys.modules["wrong_object"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
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
