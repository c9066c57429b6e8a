"""Which episodes an eval records, and the names recordings are saved under (no simulator)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import seq
from seq.authoring.benchmark import spec_of
from seq.capture.observers import observer_specs
from seq.engine.plan import plan
from seq.record.artifacts import export_name, export_videos
from seq.record.episode import EpisodeResult


@seq.benchmark(name="two-tasks", conditions=seq.conditions(tasks=["a", "b"], seeds=[3, 1, 2]), max_steps=5)
class TwoTasks(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return None

    @seq.check
    def check(self, env):
        return seq.Step(done=True)


def _items(arms=()):
    return plan(spec_of(TwoTasks), arms=arms)


def test_first_records_the_lowest_seed_of_each_task_and_arm(tmp_path: Path):
    (video,) = observer_specs(spec_of(TwoTasks), _items(("x", "y")), "first", False, tmp_path)
    assert video["kind"] == "video" and video["fps"] == 20 and video["camera"] is None
    assert sorted(video["items"]) == ["x/a|seed=1", "x/b|seed=1", "y/a|seed=1", "y/b|seed=1"]
    assert video["directory"] == str(tmp_path / "videos")


def test_all_none_and_trajectories(tmp_path: Path):
    (video,) = observer_specs(spec_of(TwoTasks), _items(), "all", False, tmp_path)
    assert video["items"] is None
    assert observer_specs(spec_of(TwoTasks), _items(), "none", False, tmp_path) == []
    assert observer_specs(spec_of(TwoTasks), _items(), None, True, tmp_path) == [
        {"kind": "trajectory", "directory": str(tmp_path / "trajectories")}
    ]
    with pytest.raises(seq.SeqInputError, match="--record must be one of all, first, none"):
        observer_specs(spec_of(TwoTasks), _items(), "some", False, tmp_path)


def test_a_declared_render_records_by_default_unless_it_says_none(tmp_path: Path):
    spec = spec_of(TwoTasks)
    declared = SimpleNamespace(**{**vars(spec), "declared": {"render": {"camera": "top", "fps": 10}}})
    (video,) = observer_specs(declared, _items(), None, False, tmp_path)
    assert (video["camera"], video["fps"], len(video["items"])) == ("top", 10, 2)
    quiet = SimpleNamespace(
        **{**vars(spec), "declared": {"render": {"camera": "top", "fps": 10, "record": "none"}}}
    )
    assert observer_specs(quiet, _items(), None, False, tmp_path) == []
    (asked,) = observer_specs(quiet, _items(), "first", False, tmp_path)
    assert asked["camera"] == "top" and "record" not in asked


def test_export_names_say_task_seed_arm_and_outcome(tmp_path: Path, seq_home: Path):
    ok = EpisodeResult("a|seed=1", "a", 1, metrics={"success": 1.0})
    failed = EpisodeResult("x/a|seed=2", "a", 2, arm="x", metrics={"success": 0.0})
    broken = EpisodeResult("b|seed=1", "b", 1, trial=2, status="error")
    assert export_name(ok, ".mp4") == "a_seed1_success.mp4"
    assert export_name(failed, ".mp4") == "a_seed2_x_fail.mp4"
    assert export_name(broken, ".mp4") == "b_seed1_trial2_error.mp4"
    source = seq_home / "artifacts" / "ev-names" / "videos" / "v.mp4"
    source.parent.mkdir(parents=True)
    source.write_bytes(b"mp4")
    twin = EpisodeResult(
        "a|seed=1|trial=0", "a", 1, metrics={"success": 1.0}, artifacts={"video": str(source)}
    )
    ok.artifacts = {"video": str(source)}
    report = SimpleNamespace(eval_id="ev-names", episodes=[ok, twin, failed])  # `failed` recorded nothing
    written = export_videos(report, tmp_path / "out")
    assert [p.name for p in written] == ["a_seed1_success.mp4", "a_seed1_success-2.mp4"]
    assert written[0].read_bytes() == b"mp4"
