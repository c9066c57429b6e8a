"""The port tools on a MetaWorld task: export on MetaWorld's MuJoCo 3.3.0, check-model and
compare --replay in the port environment (MuJoCo Warp 4.0.0 on Warp's CPU device).

The port image is built once per run (shared SEQ_IMAGES) and Warp's compiled kernels stay in its
own cache, so only the first run on a machine pays the ~2 minute kernel compile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from scenes import heavier

pytest.importorskip("metaworld")

HEAVY_LINK = "right_l3"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, shared_images: Path) -> dict[str, str]:
    home = tmp_path_factory.mktemp("port-home")
    return {"SEQ_HOME": str(home), "SEQ_IMAGES": str(shared_images)}


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory, workspace: dict[str, str]) -> Path:
    out = tmp_path_factory.mktemp("export") / "scene"
    result = run_cli("benchmark", "export", "metaworld", "--tasks", "reach-v3", "--seeds", "0-2",
                     "-o", str(out), env=workspace)
    assert result.returncode == 0, result.stderr
    assert "exported 3 start(s) of metaworld on MuJoCo 3.3.0" in result.stdout
    return out


def test_export_writes_every_start_and_what_seeds_change(scene: Path) -> None:
    manifest = json.loads((scene / "export.json").read_text())
    assert manifest["mujoco"] == "3.3.0" and manifest["steps"] == 200
    assert [s["seed"] for s in manifest["starts"]] == [0, 1, 2]
    assert all((scene / s["file"]).is_file() and s["contacts"] >= 1 for s in manifest["starts"])
    assert (scene / "scenes" / "s0" / "scene.xml").is_file()
    # the object's start and the goal site move from seed to seed; the arm does not
    assert manifest["varies"]["reach-v3"]["joints"] == ["objjoint"]
    assert manifest["varies"]["reach-v3"]["model_fields"] == ["site_pos"]


def test_check_model_names_a_heavier_body_and_the_changed_default(
    scene: Path, workspace: dict[str, str], tmp_path: Path
) -> None:
    clean = run_cli("benchmark", "check-model", str(scene), "--json", env=workspace)
    checked = json.loads(clean.stdout)["scenes"][0]
    assert checked["fields"] == [] and checked["unsupported"] is None
    # MuJoCo 3.3.0 -> 4.0.0 changed ccd_iterations' default from 50 to 35; MetaWorld does not set
    # it, and the exported scene writes every option out, so it compiles as it did
    assert [o["option"] for o in checked["defaults"]] == ["ccd_iterations"]
    assert checked["options"] == [] and clean.returncode == 0
    heavy = heavier(scene, tmp_path / "heavy", HEAVY_LINK, 1.5)
    result = run_cli("benchmark", "check-model", str(heavy), env=workspace)
    assert result.returncode == 1
    assert f"body {HEAVY_LINK}: body_mass [2.5097] -> [3.76455]" in result.stdout


def test_the_unmodified_scene_agrees_over_200_steps_from_every_start(
    scene: Path, workspace: dict[str, str]
) -> None:
    result = run_cli("benchmark", "compare", "--replay", str(scene), "--json", env=workspace)
    assert result.returncode == 0, result.stderr
    replay = json.loads(result.stdout)
    assert replay["steps"] == 200 and len(replay["starts"]) == 3
    for start in replay["starts"]:
        assert start["port"] is None and start["max_port"] < 1e-3
        # a gap between MuJoCo 3.3.0 and 4.0.0 that Warp shares is the version's, not the port's
        if start["version"] is not None:
            assert start["warp_vs_reference"] is not None
    text = run_cli("benchmark", "compare", "--replay", str(scene), "--conditions", "1", env=workspace)
    assert text.returncode == 0 and "reach-v3 seed 0: agrees" in text.stdout


def test_a_link_half_again_as_heavy_is_caught_within_50_steps_naming_it(
    scene: Path, workspace: dict[str, str], tmp_path: Path
) -> None:
    heavy = heavier(scene, tmp_path / "heavy", HEAVY_LINK, 1.5)
    result = run_cli("benchmark", "compare", "--replay", str(scene), str(heavy), "--steps", "50",
                     "--json", env=workspace)
    assert result.returncode == 1, result.stderr
    for start in json.loads(result.stdout)["starts"]:
        assert start["port"] is not None and start["port"]["step"] <= 50
        assert start["port"]["body"] == HEAVY_LINK
    assert json.loads(result.stdout)["port_scene_changes"] == {
        "s0": [f"body {HEAVY_LINK}: body_mass, body_inertia"]
    }
