"""The acceptance grid on MetaWorld: 2 modes (noisy-expert noise=0.0 / 1.0) × 2 variations (task
groups) × 2 policies (noisy-expert, metaworld-expert), from one command; its summary checked
against the record; the gate at 0.5 and 0.99; a kill mid-way and `--resume`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli

import seq
from seq.grid.results import TIMINGS
from seq.grid.summary import read_tsv_cells

pytest.importorskip("metaworld")

GRID = """
policies: [noisy-expert, metaworld-expert]
modes:
  clean: {params: {noise: 0.0}}
  noisy: {params: {noise: 1.0}}
families:
  metaworld:
    variations:
      reach: {tasks: [reach-v3]}
      push: {tasks: [push-v3]}
seeds: [0, 1]
max_steps: 120
workers: 2
output_dir: OUT
"""


def _config(tmp_path: Path, output: str) -> Path:
    path = tmp_path / f"{output}.yaml"
    path.write_text(GRID.replace("OUT", output))
    return path


def _run_dir(tmp_path: Path, output: str) -> Path:
    (run_dir,) = (tmp_path / output).iterdir()
    return run_dir


def _recomputed(cell: dict) -> tuple[int, int]:
    """(successes, trials) of a cell, read from its eval's record."""
    report = seq.eval.report(cell["eval_id"])
    mine = [e for e in report.episodes if e.arm in (cell["arm"], "")]
    return sum(e.metrics["success"] >= 0.5 for e in mine), len(mine)


def _measured(run_dir: Path) -> list[dict]:
    cells = json.loads((run_dir / "summary.json").read_text())["cells"]
    return [{k: v for k, v in cell.items() if k not in TIMINGS} for cell in cells]


def test_the_metaworld_grid_runs_from_one_command_and_gates(tmp_path: Path) -> None:
    path = _config(tmp_path, "full")
    passed = run_cli("grid", "run", str(path), "--gate", "--threshold", "0.5")
    assert passed.returncode == 0, passed.stderr
    # 8 cells of 2 trials, but metaworld-expert's clean and noisy cells share one arm: 12 episodes
    assert "gate PASS: success_rate=" in passed.stdout and "threshold=0.50 n=12" in passed.stdout
    run_dir = _run_dir(tmp_path, "full")
    data = json.loads((run_dir / "summary.json").read_text())
    assert len(data["cells"]) == 8 and len(data["evals"]) == 2  # a variation's cells are arms of one eval
    rows = read_tsv_cells(run_dir / "summary.tsv")
    assert len(rows) == 8
    for cell, row in zip(data["cells"], rows, strict=True):
        wins, n = _recomputed(cell)
        assert (int(row["n_success"]), int(row["n_trials"])) == (wins, n) == (cell["n_success"], 2)
        assert float(row["success_rate"]) == pytest.approx(wins / n)
        assert data["matrix"]["success_rate"][f"{cell['mode']}@{cell['policy']}"][
            f"metaworld/{cell['variation']}"
        ] == pytest.approx(wins / n)
    tsv = (run_dir / "summary.tsv").read_text()
    pivot = tsv.split("success_rate_pivot\n")[1].split("\n\n")[0].splitlines()
    assert pivot[0] == "mode@policy\tmetaworld/reach\tmetaworld/push"
    assert sorted(line.split("\t")[0] for line in pivot[1:]) == sorted(
        f"{m}@{p}" for m in ("clean", "noisy") for p in ("noisy-expert", "metaworld-expert")
    )
    # the modes are the policy's parameters, recorded on each arm
    arms = {arm.name: arm.params for arm in seq.eval.report(data["evals"][0]).manifest.arms}
    assert arms["clean@noisy-expert"] == {"noise": "0.0"} and arms["noisy@noisy-expert"] == {"noise": "1.0"}
    assert (run_dir / "aaa_done_flag.txt").is_file() and (run_dir / "clean" / "aaa_done_flag.txt").is_file()
    episodes = [e for eval_id in data["evals"] for e in seq.eval.report(eval_id).episodes]
    assert (data["n_trials"], data["n_cell_trials"]) == (len(episodes), 16) == (12, 16)
    total_wins = sum(e.metrics["success"] >= 0.5 for e in episodes)
    assert data["success_rate"] == pytest.approx(total_wins / 12) and 0.5 <= data["success_rate"] < 0.99
    # the same run judged at 0.99: every cell is persisted, so --resume runs nothing and re-gates
    failed = run_cli("grid", "run", str(path), "--gate", "--threshold", "0.99", "--resume")
    assert failed.returncode == 1, failed.stderr
    assert "gate FAIL: success_rate=" in failed.stdout and "threshold=0.99 n=12" in failed.stdout
    assert "continuing" not in failed.stderr and failed.stderr.count("done already, skipped") == 2


def test_a_grid_killed_mid_way_resumes_only_its_unfinished_cells(tmp_path: Path) -> None:
    uninterrupted = seq.grid.run(_config(tmp_path, "whole"))
    assert uninterrupted.ok
    path = _config(tmp_path, "killed")
    grid = subprocess.Popen(
        [sys.executable, "-c", "from seq.cli import main; main()", "grid", "run", str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 240
    # kill it once the first eval is persisted and the second has started (its state file is
    # written as it starts): no sleep that a fast machine outruns
    while not (list((tmp_path / "killed").glob("*/*/*/metaworld/reach/cell_result.json"))
               and len(list((tmp_path / "killed").glob("*/evals/*.json"))) == 2):  # fmt: skip
        assert grid.poll() is None, grid.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.killpg(grid.pid, signal.SIGKILL)
    grid.wait()
    run_dir = _run_dir(tmp_path, "killed")
    assert not (run_dir / "aaa_done_flag.txt").exists()
    done_before = {c.parent.name for c in run_dir.glob("*/*/*/*/cell_result.json")}
    assert done_before == {"reach"}
    reach_eval = json.loads(next(run_dir.glob("*/*/*/reach/cell_result.json")).read_text())["eval_id"]
    reach_episodes = len(seq.eval.report(reach_eval).episodes)
    resumed = run_cli("grid", "run", str(path), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "metaworld/reach: 4 cell(s) done already, skipped" in resumed.stderr
    assert len(seq.eval.report(reach_eval).episodes) == reach_episodes  # nothing of it ran again
    assert _measured(run_dir) == _measured(uninterrupted.run_dir)
    assert (run_dir / "aaa_done_flag.txt").is_file()


def test_recordings_are_hard_linked_into_videos_with_descriptive_names(tmp_path: Path) -> None:
    path = tmp_path / "video.yaml"
    path.write_text(
        "policies: [metaworld-expert]\nfamilies: {metaworld: {variations: {reach: {tasks: [reach-v3]}}}}\n"
        "seeds: [0]\nmax_steps: 20\nworkers: 1\nrecord: first\noutput_dir: runs\n"
    )
    summary = seq.grid.run(path)
    (video,) = (summary.run_dir / "videos").iterdir()
    assert video.name == "default__metaworld-expert__metaworld__reach__reach-v3__seed0__trial0__fail.mp4"
    (episode,) = seq.eval.report(summary.cells[0].eval_id).episodes
    assert os.path.samefile(video, episode.artifacts["video"])  # a link, not a copy
