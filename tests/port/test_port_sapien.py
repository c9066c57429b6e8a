"""The port tools on SAPIEN: ManiSkill's PickCube exported through its own reset in ManiSkill's
image (SAPIEN's CPU PhysX), checked for the GPU PhysX, and replayed with each start written back
into a fresh system (the CPU PhysX here: the same calls a GPU system takes); a benchmark on raw
SAPIEN whose reset computes an arm's passive force and whose bowl is a triangle mesh. Skipped
where the machine lacks a Vulkan driver new enough for SAPIEN (`bash tools/install_vulkan.sh`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from seq.port.target import load_benchmark

pytestmark = pytest.mark.skipif(
    not Path("/usr/share/vulkan/icd.d").is_dir()
    or not any(Path("/usr/share/vulkan/icd.d").glob("lvp_icd*.json")),
    reason="SAPIEN needs Mesa 25's Vulkan driver: run `bash tools/install_vulkan.sh` (as root)",
)

# a benchmark on SAPIEN itself: a one-joint arm held up by its passive force, a bowl of triangles
RAW_SAPIEN = """
import numpy as np
import seq
from seq.shelf.maniskill import IMAGE


class ArmEnv:
    def __init__(self):
        import gymnasium
        import sapien
        import sapien.physx as physx

        self.scene = sapien.Scene()
        self.scene.set_timestep(0.01)
        self.scene.add_ground(0)
        builder = self.scene.create_articulation_builder()
        base = builder.create_link_builder()
        base.add_box_collision(half_size=[0.05, 0.05, 0.05])
        arm = builder.create_link_builder(base)
        arm.add_box_collision(half_size=[0.02, 0.02, 0.1])
        arm.set_joint_properties("revolute", limits=[[-1, 1]], pose_in_parent=sapien.Pose([0, 0, 0.1]),
                                 pose_in_child=sapien.Pose([0, 0, -0.1]))
        self.arm = builder.build(fix_root_link=True)
        self.arm.active_joints[0].set_drive_properties(100.0, 10.0)
        vertices = np.array([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]], dtype=np.float32)
        triangles = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], dtype=np.uint32)
        bowl = physx.PhysxRigidDynamicComponent()
        bowl.attach(physx.PhysxCollisionShapeTriangleMesh(vertices, triangles, np.ones(3),
                                                         physx.PhysxMaterial(0.5, 0.5, 0.0)))
        entity = sapien.Entity()
        entity.name = "bowl"
        entity.add_component(bowl)
        self.scene.add_entity(entity)
        self.bowl = entity
        self.action_space = gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def reset(self, seed=None):
        self.bowl.set_pose(__import__("sapien").Pose([0.3 + 0.01 * seed, 0, 0.2]))
        self.arm.set_qpos(np.zeros(1))
        self.arm.set_qf(self.arm.compute_passive_force())
        return {}, {}

    def step(self, action):
        self.arm.active_joints[0].set_drive_target(float(action[0]))
        self.scene.step()
        return {}, 0.0, False, False, {}


@seq.benchmark(name="raw-arm", conditions=seq.conditions(tasks=["hold"], seeds=range(2)), image=IMAGE)
class RawArm(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return ArmEnv()

    @seq.check
    def check(self, env):
        return seq.Step(done=False, metrics={"success": 0.0})
"""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, shared_images: Path) -> dict[str, str]:
    return {"SEQ_HOME": str(tmp_path_factory.mktemp("sapien-home")), "SEQ_IMAGES": str(shared_images)}


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory, workspace: dict[str, str]) -> Path:
    out = tmp_path_factory.mktemp("pick") / "scene"
    result = run_cli(
        "benchmark",
        "export",
        "maniskill",
        "--tasks",
        "PickCube-v1",
        "--seeds",
        "0-1",
        "--steps",
        "40",
        "-o",
        str(out),
        env=workspace,
        timeout=1200,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "exported 2 start(s) of maniskill on SAPIEN 3.0.3" in result.stdout
    assert "s0: PickCube-v1 (2 start(s))" in result.stdout
    return out


def test_each_start_holds_bodies_articulations_and_drive_targets(scene: Path) -> None:
    manifest = json.loads((scene / "export.json").read_text())
    assert manifest["engine"] == "sapien" and manifest["makes"]["PickCube-v1"]["id"] == "PickCube-v1"
    build = json.loads((scene / "scenes" / "s0" / "build.json").read_text())
    cube = next(body for body in build["bodies"] if body["name"].endswith("cube"))
    assert cube["kind"] == "dynamic" and cube["shapes"][0]["type"] == "Box"
    assert cube["shapes"][0]["half_size"] == pytest.approx([0.02] * 3)
    assert [a["dof"] for a in build["articulations"]] == [9]  # the Panda: 7 joints and 2 fingers
    cubes = []
    for start in manifest["starts"]:
        with np.load(scene / start["file"]) as arrays:
            assert arrays["articulation0.qpos"].shape == arrays["articulation0.drive_target"].shape == (9,)
            assert arrays["actions"].shape == (40, 8) and arrays["ref.env_state"].shape[0] == 40
            cubes.append(arrays["body.pose"])
    assert not np.allclose(cubes[0], cubes[1])  # each seed draws its cube's place


def test_check_model_counts_gpu_systems_and_names_the_calls_without_a_gpu_form(scene: Path) -> None:
    result = run_cli("benchmark", "check-model", str(scene))
    assert result.returncode == 1, result.stderr
    assert "PickCube-v1: 1 GPU system(s) (one per build its starts use)" in result.stdout
    assert "PhysxCpuSystem.get_contacts: " in result.stdout  # its success check asks contacts
    assert "triangle mesh" not in result.stdout


def test_each_start_written_back_replays_the_reference(
    scene: Path, workspace: dict[str, str], tmp_path: Path
) -> None:
    result = run_cli("benchmark", "compare", "--replay", str(scene), "--json", env=workspace, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    replay = json.loads(result.stdout)
    assert replay["backend"] == "cpu" and len(replay["starts"]) == 2
    assert all(start["apart"] is None and start["largest"] < 1e-4 for start in replay["starts"])
    moved = tmp_path / "moved"  # the same export with seed 0's cube 5 cm off where it started
    shutil.copytree(scene, moved)
    start = json.loads((moved / "export.json").read_text())["starts"][0]
    with np.load(moved / start["file"]) as arrays:
        saved = {key: arrays[key] for key in arrays.files}
    cube_x = next(i for i, value in enumerate(saved["env_state"]) if value == saved["body.pose"][0][0])
    saved["env_state"][cube_x] += 0.05
    np.savez(moved / start["file"], **saved)
    result = run_cli("benchmark", "compare", "--replay", str(moved), "--json", env=workspace, timeout=900)
    assert result.returncode == 1, result.stderr[-3000:]
    apart = json.loads(result.stdout)["starts"][0]["apart"]
    assert apart["step"] == 1 and apart["gap"] > 0.04 and "cube" in apart["object"]


def test_scaffold_writes_a_gpu_skeleton_that_imports(scene: Path, tmp_path: Path) -> None:
    out = tmp_path / "skeleton"
    result = run_cli("benchmark", "scaffold", str(scene), "--envs", "16", "-o", str(out))
    assert result.returncode == 0, result.stderr
    _, spec = load_benchmark(str(out / "benchmark.py"))
    assert spec.name == "maniskill-gpu" and spec.batched
    assert "mani-skill==3.0.1" in (out / "benchmark.py").read_text()


def test_a_passive_force_and_a_moving_triangle_mesh_are_named(
    workspace: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "raw_arm.py").write_text(RAW_SAPIEN)
    out = tmp_path / "scene"
    result = run_cli(
        "benchmark",
        "export",
        str(tmp_path / "raw_arm.py"),
        "--steps",
        "10",
        "-o",
        str(out),
        env=workspace,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    result = run_cli("benchmark", "check-model", str(out))
    assert result.returncode == 1, result.stderr
    assert "body bowl: a triangle mesh on a moving body, which the GPU PhysX refuses" in result.stdout
    assert (
        "PhysxArticulation.compute_passive_force: 2 call(s) in reset, 0 in stepping, 2 start(s) of hold"
        in result.stdout
    )
    assert "hold: 1 GPU system(s)" in result.stdout
