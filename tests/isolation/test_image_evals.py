"""Benchmarks that declare images run from a seq install that has none of their packages; the same
eval with and without an image gives the same rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import seq

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "metaworld_in_an_image.py"


def _rows(eval_id: str) -> list[tuple]:
    return sorted(
        (e.task, e.seed, e.status, e.steps, e.metrics["success"], round(e.metrics["return"], 9))
        for e in seq.Store().episodes(eval_id)
    )


def test_metaworld_in_an_image_gives_the_rows_of_metaworld_here():
    pytest.importorskip("metaworld")
    seq.deploy(EXAMPLE)
    options = {"tasks": ["reach-v3", "door-open-v3"], "seeds": [0, 1], "envs": 2}
    here = seq.eval.run("metaworld-expert", benchmark="metaworld", **options)
    isolated = seq.eval.run("metaworld-expert", benchmark="metaworld-in-an-image", **options)
    assert _rows(here.eval_id) == _rows(isolated.eval_id)
    manifest = seq.Store().get_eval(isolated.eval_id).manifest
    assert manifest.image.key and manifest.environment.packages["metaworld"] == "3.1.1"


def test_two_images_with_conflicting_pins_run_one_after_the_other_from_a_bare_seq(tmp_path, seq_home):
    """MetaWorld (numpy 2) and robosuite (numpy < 2) from a virtual environment holding seq alone."""
    from uv import find_uv_bin

    bare = tmp_path / "bare"
    uv = find_uv_bin()
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(bare)], check=True)
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(bare / "bin" / "python"), "-e", str(ROOT)], check=True
    )
    environment = {**os.environ, "SEQ_HOME": str(seq_home), "COLUMNS": "200"}

    def seq_cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(bare / "bin" / "seq"), *args], capture_output=True, text=True, env=environment, timeout=900
        )

    for package in ("metaworld", "robosuite", "mujoco"):
        probe = subprocess.run([str(bare / "bin" / "python"), "-c", f"import {package}"], capture_output=True)
        assert probe.returncode != 0, f"{package} is installed in the bare environment"
    assert seq_cli("deploy", str(EXAMPLE)).returncode == 0
    runs = {
        "metaworld": seq_cli(
            "eval", "run", "metaworld-expert", "--benchmark", "metaworld-in-an-image",
            "--tasks", "reach-v3", "--seeds", "0,1", "--envs", "2", "--json",
        ),
        "robosuite": seq_cli(
            "eval", "run", "robosuite-scripted", "--benchmark", "robosuite",
            "--tasks", "Lift", "--seeds", "0", "--max-steps", "80", "--envs", "1", "--json",
        ),
    }  # fmt: skip
    packages = {}
    for name, run in runs.items():
        assert run.returncode == 0, run.stderr
        report = json.loads(run.stdout)
        episodes = seq.Store().episodes(report["eval_id"])
        assert episodes and all(e.status == "ok" and e.metrics["success"] == 1.0 for e in episodes)
        packages[name] = seq.Store().get_eval(report["eval_id"]).manifest.environment.packages
    assert packages["metaworld"]["mujoco"] == "3.3.0" and packages["robosuite"]["robosuite"] == "1.5.2"
    assert packages["metaworld"]["numpy"].startswith("2.") and packages["robosuite"]["numpy"].startswith("1.")
