"""What a new user's review of `seq grid` found (#23), on the tiny coin benchmark (tests/grid/coin.py):
an interrupted run never passes the gate, `--json` stays JSON with a managed server, floors and
tasks are checked in the config's words, resume takes this config's run, the suite column and the
run folder say what they are."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import default_ctrl_c, refused_in_one_line, run_cli

import seq
from seq.grid.summary import read_tsv_cells

COIN = Path(__file__).with_name("coin.py")

GRID = """
policies: [coin-player]
families:
  coin:
    variations:
      heads: {tasks: [heads]}
seeds: [0, 1]
workers: 1
output_dir: runs
"""
HEADS = "default@coin-player/coin/heads"


@pytest.fixture(autouse=True)
def coin(seq_home: Path) -> None:
    seq.deploy(str(COIN))


def _config(tmp_path: Path, text: str, name: str = "grid.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_an_interrupted_grid_is_partial_and_never_passes_the_gate(tmp_path: Path) -> None:
    path = _config(tmp_path, GRID.replace("heads: {tasks: [heads]}", "heads: {tasks: [heads]}\n"
                                          "      sleepy: {tasks: [sleepy]}"))  # fmt: skip
    grid = subprocess.Popen(
        [sys.executable, "-c", "from seq.cli import main; main()", "grid", "run", str(path), "--gate"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=default_ctrl_c, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    said = []
    try:
        assert grid.stderr is not None
        for line in grid.stderr:  # Ctrl-C once the first cell is done, while the slow one runs
            said.append(line)
            if f"{HEADS}: success" in line:
                os.killpg(grid.pid, signal.SIGINT)
                break
        said.append(grid.communicate(timeout=120)[1])
    finally:
        if grid.poll() is None:
            os.killpg(grid.pid, signal.SIGKILL)
    assert grid.returncode == 130, "".join(said)  # canceled: neither a gate FAIL (1) nor bad input (2)
    (run_dir,) = (tmp_path / "runs").iterdir()
    data = json.loads((run_dir / "summary.json").read_text())
    assert [cell["key"] for cell in data["cells"]] == [HEADS]
    assert (data["complete"], data["n_cells"]) == (False, 2)
    assert data["gate"]["gated"] and not data["gate"]["passed"]
    assert "1 of 2 cells not run" in data["gate"]["reasons"]
    (listed,) = json.loads(run_cli("grid", "ls", "--json").stdout)
    assert not listed["complete"] and not listed["gate"]["passed"]
    shown = run_cli("grid", "show", run_dir.name).stdout
    assert "partial: 1 of 2 cells not run" in shown and "gate FAIL" in shown and "gate PASS" not in shown
    finished = seq.grid.run(path, gate=True, resume=True)  # the resume runs the rest: now it may pass
    assert finished.passed and finished.complete and finished.run_dir == run_dir
    assert json.loads((run_dir / "summary.json").read_text())["complete"]


def test_json_stays_json_when_a_managed_server_prints_a_banner(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    serve = (f"echo managed-banner; exec {sys.executable} -c 'from seq.cli import main; main()' "
             f"policy serve coin-player --port {port}")  # fmt: skip
    url = f"ws://127.0.0.1:{port}"
    served = f"policies:\n  - {{id: served, policy: coin-player, url: '{url}', start_cmd: \"{serve}\"}}"
    path = _config(tmp_path, GRID.replace("policies: [coin-player]", served))
    result = run_cli("grid", "run", str(path), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["n_success"] == 2  # stdout is the JSON alone
    assert "managed-banner" in result.stderr


def test_a_floor_that_matches_no_cell_or_is_no_rate_is_refused(tmp_path: Path) -> None:
    path = _config(tmp_path, GRID + "floors: {'clen@*/*/*': 0.99}\n")
    refused_in_one_line(
        run_cli("grid", "run", str(path), "--gate"),
        "grid.yaml",
        "'floors.clen@*/*/*'",
        "matches no cell",
        HEADS,
    )
    assert not (tmp_path / "runs").exists()
    path.write_text(GRID + "floors: {'default@*/*/*': 1.5}\n")
    refused_in_one_line(
        run_cli("grid", "run", str(path), "--gate"),
        "grid.yaml", "'floors.default@*/*/*'", "expected a rate in [0, 1], got 1.5",
    )  # fmt: skip
    path.write_text(GRID + "floors: {'default@*': 0.5}\n")
    assert seq.grid.run(path, gate=True).passed  # a pattern that matches is a floor as before


def test_resume_takes_the_latest_run_of_this_config_not_of_another_in_the_same_folder(tmp_path: Path) -> None:
    mine = _config(tmp_path, GRID, "mine.yaml")
    other = _config(tmp_path, GRID.replace("seeds: [0, 1]", "seeds: [0, 1, 2]"), "other.yaml")
    first = seq.grid.run(mine)
    later = seq.grid.run(other)  # newer, in the same output dir
    assert later.run_dir != first.run_dir and later.run_dir.parent == first.run_dir.parent
    said: list[str] = []
    resumed = seq.grid.run(mine, resume=True, say=said.append)
    assert resumed.run_dir == first.run_dir and f"resuming {first.run_dir}" in said
    assert any("1 cell(s) done already, skipped" in line for line in said)
    fresh = _config(tmp_path, GRID, "fresh.yaml")
    said.clear()
    started = seq.grid.run(fresh, resume=True, say=said.append)
    expected = f"--resume: {tmp_path / 'runs'} holds no run of {fresh}; starting a fresh one"
    assert expected in said and started.run_dir not in (first.run_dir, later.run_dir)


def test_the_suite_column_is_the_suite_that_ran_and_the_run_folder_is_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config(tmp_path, GRID)
    monkeypatch.chdir(tmp_path)
    summary = seq.grid.run("grid.yaml")  # a relative config and output dir, as a user types them
    assert summary.run_dir.is_absolute()
    (row,) = read_tsv_cells(summary.run_dir / "summary.tsv")
    ran = seq.eval.report(summary.cells[0].eval_id).arguments.suites  # the benchmark's default here
    assert ran == [row["suite"]] and row["variation"] == "heads" and row["suite"] != "heads"
    shown = run_cli("grid", "show", summary.run_dir.name).stdout.splitlines()
    assert shown[0] == str(summary.run_dir)


def test_a_bad_task_is_named_by_its_config_key_not_by_a_flag(tmp_path: Path) -> None:
    path = _config(tmp_path, GRID.replace("tasks: [heads]", "tasks: [haeds]"))
    result = run_cli("grid", "run", str(path))
    refused_in_one_line(result, "grid.yaml", "key 'families.coin.variations.heads.tasks': haeds", "'heads'")
    assert "--tasks" not in result.stderr
    suites = """
suites:
  - {name: sure, benchmark: coin, policy: coin-player}
tasks: [tials]
output_dir: runs
"""
    result = run_cli("grid", "run", str(_config(tmp_path, suites)))
    refused_in_one_line(result, "grid.yaml", "key 'tasks': tials")
