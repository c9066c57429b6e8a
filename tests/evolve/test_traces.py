"""Traces of real MetaWorld episodes: written beside the rows, read back, mined for failures."""

from __future__ import annotations

import pytest

import seq
from seq.capture.trace import read_trace
from seq.evolve.clusters import FailedEpisode, cluster, features
from seq.evolve.detectors import TYPES, baselines, detect

pytest.importorskip("metaworld")


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    import os

    home = tmp_path_factory.mktemp("home")
    old = os.environ.get("SEQ_HOME")
    os.environ["SEQ_HOME"] = str(home)
    try:
        report = seq.eval.run(
            "noisy-expert",
            benchmark="metaworld",
            tasks=["pick-place-v3", "push-v3"],
            seeds=[0, 1],
            trials=4,
            params={"noise": 0.3},
            traces=True,
            envs=1,
        )
    finally:
        if old is None:
            del os.environ["SEQ_HOME"]
        else:
            os.environ["SEQ_HOME"] = old
    return report


def test_every_episode_has_a_trace_that_reads_back(traced):
    for episode in traced.episodes:
        trace = read_trace(episode.artifacts["trace"])
        assert trace.steps == episode.steps == len(trace.infos) == len(trace.contacts)
        assert len(trace.observations) == trace.steps + 1
        assert trace.actions[0].shape == (4,) and trace.observations[0].shape == (39,)
        assert trace.end["metrics"]["success"] == episode.metrics["success"]
        assert "obj_to_target" in trace.infos[-1]
        assert trace.header["geom_body"] and any(len(forces) for _, forces in trace.contacts)


def test_a_cut_off_trace_reads_up_to_its_last_whole_frame(traced, tmp_path):
    path = traced.episodes[0].artifacts["trace"]
    data = open(path, "rb").read()
    cut = tmp_path / "cut.trace"
    cut.write_bytes(data[: len(data) // 2])
    trace = read_trace(cut)
    assert 0 < trace.steps < traced.episodes[0].steps and trace.end is None


def test_failures_are_typed_and_successes_have_none(traced):
    traces = [read_trace(e.artifacts["trace"]) for e in traced.episodes]
    base = baselines(traces)
    failed = []
    for episode, trace in zip(traced.episodes, traces, strict=True):
        found = detect(trace, base.get(trace.header["task"]))
        assert bool(found) == (episode.metrics["success"] < 1)
        for failure in found:
            assert failure.type in TYPES and 0 <= failure.step <= trace.steps
        if found:
            failed.append(
                FailedEpisode(
                    episode.item_id,
                    {"task": episode.task, "seed": episode.seed},
                    episode.trial,
                    found,
                    features(trace, found),
                )
            )
    assert failed, "noise 0.3 fails some pick-place and push episodes"
    clusters = cluster(failed + failed)  # each twice: every failure has a neighbour
    assert {c.type for c in clusters} == {f.primary.type for f in failed}
