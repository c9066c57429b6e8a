"""scaffold and convert: a MuJoCo Warp benchmark skeleton from an export, which registers and runs
an eval in the port image as it stands (its TODOs leave success at 0)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from conftest import run_cli

pytest.importorskip("metaworld")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, shared_images: Path) -> dict[str, str]:
    return {"SEQ_HOME": str(tmp_path_factory.mktemp("scaffold-home")), "SEQ_IMAGES": str(shared_images)}


def test_convert_writes_a_skeleton_that_runs_an_eval(tmp_path: Path, workspace: dict[str, str]) -> None:
    out = tmp_path / "reach-warp"
    result = run_cli("benchmark", "convert", "metaworld", "--tasks", "reach-v3", "--seeds", "0-1",
                     "--envs", "2", "--name", "reach-warp", "-o", str(out), env=workspace, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "exported 2 start(s) of metaworld" in result.stdout
    assert "default ccd_iterations changed: [50] -> [35]; the scene sets its own" in result.stdout
    assert "TODO: the controller, the observation, the success check" in result.stdout
    source = (out / "benchmark.py").read_text()
    ast.parse(source)
    assert source.count("# TODO") == 4  # controller, action space, observation, success
    assert "ccd_iterations = [50.0]" in source  # the changed default, pinned
    assert json.loads((out / "scene" / "export.json").read_text())["benchmark"] == "metaworld"
    assert not list((out / "scene").rglob("*.mjb"))  # only the benchmark's MuJoCo reads an MJB
    deployed = run_cli("deploy", str(out / "benchmark.py"), env=workspace)
    assert deployed.returncode == 0, deployed.stderr
    ran = run_cli("eval", "run", "random", "--benchmark", "reach-warp", "--max-steps", "5", "--json",
                  env=workspace, timeout=900)
    assert ran.returncode == 0, ran.stderr[-3000:]
    report = json.loads(ran.stdout)
    assert (report["status"], report["done"], report["total"], report["problems"]) == ("completed", 2, 2, [])
