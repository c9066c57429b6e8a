"""The port tools on robosuite's Lift: export in robosuite's own image (MuJoCo 3.3.0, numpy < 2),
check-model and compare --replay in the port environment (MuJoCo Warp 4.0.0, Warp's CPU device).
Lift draws its cube's size each episode: those numbers are kept per start and set before each run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli
from scenes import heavier

HEAVY_LINK = "robot0_link4"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, shared_images: Path) -> dict[str, str]:
    return {"SEQ_HOME": str(tmp_path_factory.mktemp("lift-home")), "SEQ_IMAGES": str(shared_images)}


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory, workspace: dict[str, str]) -> Path:
    out = tmp_path_factory.mktemp("lift") / "scene"
    result = run_cli("benchmark", "export", "robosuite", "--tasks", "Lift", "--seeds", "0-4", "-o", str(out),
                     env=workspace, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_each_start_keeps_its_own_cube(scene: Path) -> None:
    manifest = json.loads((scene / "export.json").read_text())
    assert len(manifest["scenes"]) == 1 and len(manifest["starts"]) == 5
    assert {"geom cube_g0", "body cube_main"} <= set(manifest["varies"]["Lift"]["objects"])
    sizes = []
    for start in manifest["starts"]:
        with np.load(scene / start["file"]) as arrays:
            rows = list(arrays["rows.geom_size"]) if "rows.geom_size" in arrays.files else []
            sizes.append(tuple(arrays["model.geom_size"][0]) if rows else None)
    assert len({size for size in sizes if size is not None}) >= 4  # the cube's size is drawn per seed


def test_lift_agrees_over_200_steps_or_names_why(scene: Path, workspace: dict[str, str]) -> None:
    result = run_cli("benchmark", "compare", "--replay", str(scene), "--json", env=workspace, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    for start in json.loads(result.stdout)["starts"]:
        if start["port"] is not None:  # only where MuJoCo 3.3.0 and 4.0.0 part as well
            assert start["sensitive"] and start["version"]["joint"] == start["port"]["joint"]
        assert start["max_port"] < 2e-3


def test_a_link_half_again_as_heavy_is_caught_within_50_steps(
    scene: Path, workspace: dict[str, str], tmp_path: Path
) -> None:
    heavy = heavier(scene, tmp_path / "heavy", HEAVY_LINK, 1.5)
    result = run_cli("benchmark", "compare", "--replay", str(scene), str(heavy), "--steps", "50", "--json",
                     env=workspace, timeout=900)
    assert result.returncode == 1, result.stderr[-3000:]
    replay = json.loads(result.stdout)
    assert replay["port_scene_changes"] == {"s0": [f"body {HEAVY_LINK}: body_mass, body_inertia"]}
    caught = [start["port"] for start in replay["starts"] if start["port"] is not None]
    assert len(caught) == len(replay["starts"]) and all(gap["step"] <= 50 for gap in caught)
    assert any(gap["joint_body"] == HEAVY_LINK for gap in caught)
    check = run_cli("benchmark", "check-model", str(heavy), env=workspace)
    assert check.returncode == 1 and f"body {HEAVY_LINK}: body_mass" in check.stdout
