"""examples/lift_warp.py, robosuite's Lift completed on MuJoCo Warp, against robosuite's own Lift:
the same policy on the same seeds, paired (`seq benchmark compare`), the port's worlds batched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import run_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lift_warp.py"


@pytest.fixture
def workspace(tmp_path: Path, shared_images: Path) -> dict[str, str]:
    """A home where lift-warp is deployed, its scene (robosuite's Lift, seeds 0-1) in its volume."""
    env = {"SEQ_HOME": str(tmp_path / "home"), "SEQ_IMAGES": str(shared_images)}
    scene = tmp_path / "volume" / "scene"
    exported = run_cli("benchmark", "export", "robosuite", "--tasks", "Lift", "--seeds", "0-1",
                       "-o", str(scene), env=env, timeout=900)
    assert exported.returncode == 0, exported.stderr[-3000:]
    for mjb in scene.rglob("*.mjb"):  # only robosuite's MuJoCo reads it
        mjb.unlink()
    put = run_cli("volume", "put", "lift-warp-scene", str(scene.parent), "--kind", "dataset", env=env)
    assert put.returncode == 0, put.stderr
    shutil.copy(EXAMPLE, tmp_path / "lift_warp.py")
    deployed = run_cli("deploy", str(tmp_path / "lift_warp.py"), env=env, timeout=900)
    assert deployed.returncode == 0, deployed.stderr[-3000:]
    return env


def test_lift_on_warp_compares_with_robosuites_lift(workspace: dict[str, str]) -> None:
    result = run_cli("benchmark", "compare", "robosuite", "lift-warp", "--policy", "robosuite-scripted",
                     "--tasks", "Lift", "--seeds", "0-1", "--envs", "1", "--envs-per-worker", "2", "--serve",
                     "--max-steps", "80", env=workspace, timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line.strip() for line in result.stdout.splitlines()]
    success = lines.index(next(line for line in lines if line.endswith("· all · success · pairs 2 ⚠")))
    row = " · ".join(lines[success + 1: success + 4])  # one line or three, as the terminal is wide
    assert "A [95%]: 1.00 [0.34, 1.00] · B [95%]: 1.00 [0.34, 1.00]" in row  # both lift both cubes
    assert "both/A only/B only/neither: 2/0/0/0 · B − A [95%]: 0.00 [-0.66, 0.66]" in row
    assert "p: 1 (McNemar exact)" in row and "verdict: undecided" in row  # 2 pairs decide nothing
