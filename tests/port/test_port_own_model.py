"""A benchmark on a raw MjModel of its own (no gymnasium, no robosuite), named as FILE:Class:
export, check-model clean (exit 0), and a replay that agrees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from scenes import BALL, LEDGE, PILE


@pytest.fixture
def workspace(shared_images: Path, tmp_path: Path) -> dict[str, str]:
    return {"SEQ_HOME": str(tmp_path / "home"), "SEQ_IMAGES": str(shared_images)}


def test_a_raw_mujoco_benchmark_ports_clean(tmp_path: Path, workspace: dict[str, str]) -> None:
    source = tmp_path / "ball_bench.py"
    source.write_text(BALL)
    out = tmp_path / "scene"
    exported = run_cli("benchmark", "export", f"{source}:Ball", "--out", str(out), "--steps", "100",
                       env=workspace)
    assert exported.returncode == 0, exported.stderr
    assert "drop: seeds change ball_free" in exported.stdout
    assert json.loads((out / "export.json").read_text())["varies"]["drop"]["joints"] == ["ball_free"]
    checked = run_cli("benchmark", "check-model", str(out), env=workspace, timeout=900)
    assert checked.returncode == 0, checked.stdout + checked.stderr  # the scene pins ccd_iterations
    assert "clean" in checked.stdout
    replay = run_cli("benchmark", "compare", "--replay", str(out), "--json", env=workspace, timeout=900)
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert [start["port"] for start in json.loads(replay.stdout)["starts"]] == [None, None, None]
    again = run_cli("benchmark", "export", f"{source}:Ball", "--out", str(out), "--seeds", "0",
                    "--steps", "10", env=workspace)
    assert again.returncode == 0, again.stderr
    assert f"{out}: replacing the export there (3 starts)" in again.stderr


def test_a_model_whose_own_pose_piles_its_objects_up_replays(
    tmp_path: Path, workspace: dict[str, str]
) -> None:
    """Warp's contact buffer is sized from the starts, which hold none here, while the model's own
    pose (all sixteen boxes at the origin) holds hundreds: the worlds are made at a start."""
    source = tmp_path / "pile_bench.py"
    source.write_text(PILE)
    out = tmp_path / "scene"
    exported = run_cli("benchmark", "export", str(source), "--out", str(out), "--steps", "20", env=workspace)
    assert exported.returncode == 0, exported.stderr
    assert "contacts at a start: at most 0" in exported.stdout
    replay = run_cli("benchmark", "compare", "--replay", str(out), "--json", env=workspace, timeout=900)
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert [start["port"] for start in json.loads(replay.stdout)["starts"]] == [None, None]


def test_a_body_welded_to_the_world_that_a_seed_moves_moves_its_geoms_in_every_world(
    tmp_path: Path, workspace: dict[str, str]
) -> None:
    """MuJoCo Warp places geoms welded to the world once, when its data is made: a start that
    moves such a body (the ledge, 0.5 m per seed) must move its geoms in its own world, or the
    ball that rests on it falls through the air on the port and not on the benchmark."""
    source = tmp_path / "ledge_bench.py"
    source.write_text(LEDGE)
    out = tmp_path / "scene"
    exported = run_cli("benchmark", "export", f"{source}:Ledge", "--out", str(out), "--steps", "100",
                       env=workspace)
    assert exported.returncode == 0, exported.stderr
    assert "body ledge" in exported.stdout
    replay = run_cli("benchmark", "compare", "--replay", str(out), "--json", env=workspace, timeout=900)
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert [start["port"] for start in json.loads(replay.stdout)["starts"]] == [None, None, None]
