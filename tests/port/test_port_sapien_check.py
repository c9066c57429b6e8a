"""check-model and scaffold on a SAPIEN export, read from the export alone (no SAPIEN here): a
folder laid out as `seq benchmark export` writes one, with a triangle mesh on a moving body,
a task whose starts use two builds, and calls the GPU PhysX has no form of."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from seq.port.target import load_benchmark


def _body(name: str, kind: str, shape: str) -> dict:
    return {
        "name": name,
        "kind": kind,
        "mass": 1.0,
        "inertia": [1.0, 1.0, 1.0],
        "shapes": [
            {
                "type": shape,
                "static_friction": 0.3,
                "dynamic_friction": 0.3,
                "restitution": 0.0,
                "density": 1000.0,
                "collision_groups": [1, 1, 0, 0],
                "local_pose": [0] * 6 + [1],
            }
        ],
    }


def _build(bowl: str) -> dict:
    return {
        "bodies": [
            _body("table", "kinematic", "TriangleMesh"),
            _body("bowl", "dynamic", bowl),
            _body("ground", "static", "Plane"),
        ],
        "articulations": [{"name": "arm", "dof": 1, "links": ["base"], "joints": []}],
        "system": {"timestep": 0.01},
    }


@pytest.fixture
def scene(tmp_path: Path) -> Path:
    """Task Bowl: seeds 0 and 1 on a convex bowl, seed 2 on a triangle-mesh one (two builds);
    task Cube: one build; Bowl's reset computes the arm's passive force, every run asks contacts."""
    folder = tmp_path / "scene"
    for scene_id, bowl in (("s0", "ConvexMesh"), ("s1", "TriangleMesh")):
        (folder / "scenes" / scene_id).mkdir(parents=True)
        (folder / "scenes" / scene_id / "build.json").write_text(json.dumps(_build(bowl)))
    (folder / "starts").mkdir()
    starts = []
    for task, seed, scene_id in (("Bowl", 0, "s0"), ("Bowl", 1, "s0"), ("Bowl", 2, "s1"), ("Cube", 0, "s0")):
        file = f"starts/{task}__{seed}.npz"
        np.savez(folder / file, actions=np.zeros((5, 2)))
        calls = {
            "reset": {"PhysxArticulation.compute_passive_force": 1} if task == "Bowl" else {},
            "run": {"PhysxCpuSystem.get_contacts": 5},
        }
        starts.append(
            {
                "task": task,
                "seed": seed,
                "scene": scene_id,
                "file": file,
                "contacts": 0,
                "no_gpu_calls": calls,
            }
        )
    manifest = {
        "format": 1,
        "engine": "sapien",
        "benchmark": "bowls",
        "target": "bowls.py",
        "sapien": "3.0.3",
        "steps": 5,
        "scenes": [
            {"id": "s0", "path": "scenes/s0", "tasks": ["Bowl", "Cube"]},
            {"id": "s1", "path": "scenes/s1", "tasks": ["Bowl"]},
        ],
        "starts": starts,
        "makes": {},
    }
    (folder / "export.json").write_text(json.dumps(manifest))
    return folder


def test_check_model_names_what_the_gpu_physx_cannot_run(scene: Path) -> None:
    result = run_cli("benchmark", "check-model", str(scene))
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert "  body bowl: a triangle mesh on a moving body, which the GPU PhysX refuses" in "\n".join(lines)
    assert not any("body table" in line for line in lines)  # a kinematic body may keep its mesh
    assert "Bowl: 2 GPU system(s) (one per build its starts use)" in lines
    assert "Cube: 1 GPU system(s) (one per build its starts use)" in lines
    passive = next(line for line in lines if line.startswith("PhysxArticulation.compute_passive_force"))
    assert "3 call(s) in reset, 0 in stepping, 3 start(s) of Bowl" in passive
    contacts = next(line for line in lines if line.startswith("PhysxCpuSystem.get_contacts"))
    assert contacts.endswith("4 start(s) of Bowl, Cube") and "impulse queries" in result.stdout


def test_a_clean_sapien_scene_passes(scene: Path) -> None:
    manifest = json.loads((scene / "export.json").read_text())
    manifest["starts"] = [s for s in manifest["starts"] if s["scene"] == "s0"]
    manifest["scenes"] = manifest["scenes"][:1]
    for start in manifest["starts"]:
        start["no_gpu_calls"] = {"reset": {}, "run": {}}
    (scene / "export.json").write_text(json.dumps(manifest))
    result = run_cli("benchmark", "check-model", str(scene), "--json")
    assert result.returncode == 0, result.stdout
    check = json.loads(result.stdout)
    assert check["gpu_systems"] == {"Bowl": 1, "Cube": 1} and check["no_gpu_calls"] == []


def test_scaffold_writes_a_sapien_skeleton_that_imports(scene: Path, tmp_path: Path) -> None:
    out = tmp_path / "skeleton"
    result = run_cli("benchmark", "scaffold", str(scene), "--envs", "8", "-o", str(out))
    assert result.returncode == 0, result.stderr
    _, spec = load_benchmark(str(out / "benchmark.py"))
    assert spec.name == "bowls-gpu" and spec.batched and spec.declared["gpu"] == "any"
    assert {(c.task, c.seed) for c in spec.suites[spec.default_suite]} == {
        (task, seed) for task in ("Bowl", "Cube") for seed in (0, 1, 2)
    }
    text = (out / "benchmark.py").read_text()
    assert "Builds per task (one GPU system each): Bowl 2, Cube 1." in text
    assert "PhysxArticulation.compute_passive_force (Bowl)" in text
    assert (out / "scene" / "export.json").is_file() and "TODO" in (out / "README.md").read_text()


def test_scaffold_takes_the_sapien_check_convert_hands_it(scene: Path, tmp_path: Path) -> None:
    from seq.port import check_model
    from seq.port.scaffold import scaffold

    written = scaffold(scene, 4, tmp_path / "skeleton", check=check_model(scene))
    assert written["name"] == "bowls-gpu" and (tmp_path / "skeleton" / "benchmark.py").is_file()
