"""libero-warp, the shelf's libero ported to MuJoCo Warp with seq's port tools, against libero:
the export replayed on Warp, `libero-scripted` paired on both, and the port's first images
against LIBERO's (classic MuJoCo drawing the Warp state, Warp's CPU device)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

from seq.errors import SeqInputError

ROOT = Path(__file__).resolve().parents[2]
SUITE = "libero_spatial"
TASK = "pick_up_the_black_bowl_between_the_plate_and_the_ramekin_and_place_it_on_the_plate"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, shared_images: Path) -> dict[str, str]:
    """A home whose libero-warp-scene volume holds the first spatial task's seeds 0 and 1 (the
    second moves the stove and the cabinet: LIBERO places its fixtures per seed)."""
    root = tmp_path_factory.mktemp("libero-warp")
    env = {"SEQ_HOME": str(root / "home"), "SEQ_IMAGES": str(shared_images)}
    scene = root / "volume" / SUITE
    done = run_cli("benchmark", "export", "libero", "--suite", SUITE, "--tasks", TASK, "--seeds", "0-1",
                   "--steps", "40", "-o", str(scene), env=env, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    put = run_cli("volume", "put", "libero-warp-scene", str(scene.parent), env=env)
    assert put.returncode == 0, put.stderr
    return {**env, "SCENE": str(scene)}


def test_the_export_replays_on_warp(exported: dict[str, str]) -> None:
    env = {key: value for key, value in exported.items() if key != "SCENE"}
    result = run_cli("benchmark", "compare", "--replay", exported["SCENE"], "--json", env=env, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    starts = json.loads(result.stdout)["starts"]
    assert [start["seed"] for start in starts] == [0, 1]
    for start in starts:  # Warp agrees with classic MuJoCo on both
        assert start["task"] == TASK and start["port"] is None and start["max_port"] < 1e-3


def test_libero_scripted_succeeds_on_both_paired(exported: dict[str, str]) -> None:
    env = {key: value for key, value in exported.items() if key != "SCENE"}
    result = run_cli("benchmark", "compare", "libero", "libero-warp", "--policy", "libero-scripted",
                     "--tasks", TASK, "--seeds", "0", "--envs", "1", "--envs-per-worker", "1", "--serve",
                     env=env, timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    text = " ".join(result.stdout.split())
    assert "completed, 2/2 episodes" in text
    assert "both/A only/B only/neither: 1/0/0/0" in text


def test_its_first_images_are_libero_s(exported: dict[str, str]) -> None:
    env = {key: value for key, value in exported.items() if key != "SCENE"}
    bench = subprocess.run([sys.executable, str(ROOT / "bench" / "libero_warp.py"), exported["SCENE"],
                            "--starts", "2", "--worlds", "1", "--steps", "2"],
                           capture_output=True, text=True, timeout=1800, env={**os.environ, **env})
    assert bench.returncode == 0, bench.stderr[-3000:]
    for camera in ("agentview", "wrist"):
        found = re.search(rf"{camera}\s+mean\s+[\d.]+ dB, lowest\s+([\d.]+) dB", bench.stdout)
        assert found and float(found.group(1)) > 40, bench.stdout


def test_a_seed_not_exported_names_the_command_that_exports_it(exported: dict[str, str]) -> None:
    env = {key: value for key, value in exported.items() if key != "SCENE"}
    result = run_cli("eval", "run", "libero-scripted", "--benchmark", "libero-warp", "--tasks", TASK,
                     "--seeds", "3", "--serve", env=env, timeout=900)
    assert result.returncode == 2, result.stderr[-3000:]
    said = result.stdout + result.stderr
    assert "no exported start of" in said
    assert f"seq benchmark export libero --suite {SUITE} --tasks {TASK} --seeds 3" in said


def test_an_export_of_another_benchmark_is_refused(exported: dict[str, str], tmp_path: Path) -> None:
    from seq.shelf.libero_warp import exported_starts

    scene, other = Path(exported["SCENE"]), tmp_path / "volume" / "other"
    other.mkdir(parents=True)
    for part in ("scenes", "starts"):  # hard links: an export folder holds no symbolic link
        shutil.copytree(scene / part, other / part, copy_function=os.link)
    manifest = json.loads((scene / "export.json").read_text())
    (other / "export.json").write_text(json.dumps({**manifest, "benchmark": "robosuite"}))
    with pytest.raises(SeqInputError, match="benchmark: expected an export of libero, got 'robosuite'"):
        exported_starts(other.parent)  # a volume's root: export folders one level down
