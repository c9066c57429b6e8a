"""Grid operations on a tiny benchmark (tests/grid/coin.py): error cells and the gate, resume of
error cells, the watchdog, URL preflight, managed servers, suites, `seq grid ls / show`."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest
from conftest import refused_in_one_line, run_cli

import seq

COIN = Path(__file__).with_name("coin.py")

GRID = """
policies: [coin-player]
families:
  coin:
    variations:
      heads: {tasks: [heads, tails]}
      boom: {tasks: [boom]}
seeds: [0, 1, 2, 3]
workers: 1
output_dir: runs
"""


@pytest.fixture(autouse=True)
def coin(seq_home: Path) -> None:
    seq.deploy(str(COIN))


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(text)
    return path


def _only_run(tmp_path: Path, output: str = "runs") -> Path:
    (run_dir,) = (tmp_path / output).iterdir()
    return run_dir


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_error_cell_fails_the_gate_even_when_the_pooled_rate_clears_it(tmp_path: Path) -> None:
    path = _config(tmp_path, GRID)
    result = run_cli("grid", "run", str(path), "--gate", "--threshold", "0.5")
    assert result.returncode == 1, result.stderr
    assert "gate FAIL: success_rate=0.667 [" in result.stdout and "threshold=0.50 n=12" in result.stdout
    assert "cell default@coin-player/coin/boom errored" in result.stdout
    expected = "error cell default@coin-player/coin/boom: 4 of 4 episodes errored: RuntimeError: this table"
    assert expected in result.stderr
    run_dir = _only_run(tmp_path)
    data = json.loads((run_dir / "summary.json").read_text())
    assert data["matrix"]["success_rate"] == {"default@coin-player": {"coin/heads": 1.0, "coin/boom": "ERR"}}
    assert data["success_rate"] > 0.5 and not data["gate"]["passed"]
    assert "ERR" in (run_dir / "summary.tsv").read_text().split("success_rate_pivot")[1]
    # the measured cell is persisted, the error cell is not: a resume runs it (and only it) again
    assert (run_dir / "default/coin-player/coin/heads/cell_result.json").is_file()
    assert not (run_dir / "default/coin-player/coin/boom/cell_result.json").exists()
    heads_eval = next(c["eval_id"] for c in data["cells"] if c["variation"] == "heads")
    before = len(seq.eval.report(heads_eval).episodes)
    again = run_cli("grid", "run", str(path), "--gate", "--threshold", "0.5", "--resume")
    assert again.returncode == 1
    assert "coin/heads: 1 cell(s) done already, skipped" in again.stderr
    assert "coin/boom: continuing eval" in again.stderr
    assert len(seq.eval.report(heads_eval).episodes) == before
    boom_eval = next(c["eval_id"] for c in data["cells"] if c["variation"] == "boom")
    assert seq.eval.report(boom_eval).reruns == 4  # every errored episode ran again, as a new attempt


def test_the_watchdog_records_a_slow_trial_as_timed_out_not_as_an_error(tmp_path: Path) -> None:
    path = _config(tmp_path, GRID.replace("boom: {tasks: [boom]}", "sleepy: {tasks: [sleepy]}")
                   .replace("seeds: [0, 1, 2, 3]", "seeds: [0]") + "timeout_s: 0.5\n")  # fmt: skip
    summary = seq.grid.run(path, gate=True, threshold=0.4)
    sleepy = next(cell for cell in summary.cells if cell.variation == "sleepy")
    assert (sleepy.n_timed_out, sleepy.n_trials, sleepy.n_success, sleepy.error) == (1, 1, 0, None)
    assert summary.passed and summary.n_trials == 3 and summary.n_success == 2


def test_an_unreachable_url_policy_fails_preflight_before_any_cell(tmp_path: Path) -> None:
    port = _free_port()  # nothing listens there
    remote = f"policies:\n  - coin-player\n  - {{id: remote, url: 'ws://127.0.0.1:{port}'}}"
    path = _config(tmp_path, GRID.replace("policies: [coin-player]", remote))
    result = run_cli("grid", "run", str(path), "--gate")
    refused_in_one_line(result, "grid.yaml", "policy 'remote'", f"ws://127.0.0.1:{port}")
    assert seq.eval.ls() == []  # no eval ran
    assert not (tmp_path / "runs").exists()


def test_a_managed_server_is_started_used_and_stopped(tmp_path: Path) -> None:
    port = _free_port()
    serve = f"{sys.executable} -c 'from seq.cli import main; main()' policy serve coin-player --port {port}"
    path = _config(tmp_path, GRID.replace("policies: [coin-player]", f"""
policies:
  - {{id: served, policy: coin-player, url: 'ws://127.0.0.1:{port}', start_cmd: "{serve}"}}
""").replace("      boom: {tasks: [boom]}\n", ""))  # fmt: skip
    summary = seq.grid.run(path)
    assert summary.ok and [cell.key for cell in summary.cells] == ["default@served/coin/heads"]
    assert summary.n_success == 8
    arm = seq.eval.report(summary.cells[0].eval_id).manifest.arms[0]
    assert arm.policy_url == f"ws://127.0.0.1:{port}"
    from seq.grid.preflight import probe

    assert probe(f"ws://127.0.0.1:{port}", timeout_s=1.0) is not None  # stopped with the grid


def test_suites_shape_runs_its_cells_as_arms_of_one_eval(tmp_path: Path) -> None:
    path = _config(
        tmp_path,
        """
suites:
  - {name: sure, benchmark: coin, policy: coin-player, mode: sure, params: {skill: 1.0}, tasks: [heads]}
  - {name: never, benchmark: coin, policy: coin-player, mode: never, params: {skill: 0.0}, tasks: [heads]}
seeds: [0, 1]
workers: 1
output_dir: suites_runs
""",
    )
    summary = seq.grid.run(path, gate=True, threshold=0.5)
    assert summary.passed and summary.success_rate == 0.5
    assert len({cell.eval_id for cell in summary.cells}) == 1
    report = seq.eval.report(summary.cells[0].eval_id)
    assert report.arms == ["sure@coin-player", "never@coin-player"]
    assert report.comparison("success").n == 2  # paired episode by episode


def test_ls_and_show_print_past_runs(tmp_path: Path) -> None:
    path = _config(tmp_path, GRID.replace("      boom: {tasks: [boom]}\n", ""))
    ran = run_cli("grid", "run", str(path), "--gate", "--json")
    assert ran.returncode == 0 and "gate PASS" in ran.stderr
    run_dir = Path(json.loads(ran.stdout)["run_dir"])  # with --json, stdout is the summary alone
    listed = json.loads(run_cli("grid", "ls", "--json").stdout)
    assert [row["run_dir"] for row in listed] == [str(run_dir.resolve())]
    assert listed[0]["complete"] and listed[0]["gate"]["passed"] and listed[0]["cells"] == 1
    shown = json.loads(run_cli("grid", "show", run_dir.name, "--json").stdout)
    assert shown == json.loads((run_dir / "summary.json").read_text())
    text = run_cli("grid", "show", str(run_dir))
    assert "default@coin-player" in text.stdout and "pooled success 1.00" in text.stdout
    refused_in_one_line(run_cli("grid", "show", "19990101"), "RUN 19990101", "no grid run")


def test_seq_devices_spreads_each_eval_of_the_grid_from_the_next_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEQ_DEVICES", "4,5,6")
    path = _config(tmp_path, GRID.replace("boom: {tasks: [boom]}", "tails: {tasks: [tails]}"))
    summary = seq.grid.run(path)
    devices = []
    for cell in summary.cells:
        episodes = seq.eval.report(cell.eval_id).episodes
        devices.append({episode.metrics["device"] for episode in episodes})
    assert devices == [{4.0}, {5.0}]  # one worker each: the second eval starts on the next device


def test_resume_refuses_a_changed_config_and_warns_on_a_changed_gate(tmp_path: Path) -> None:
    path = _config(tmp_path, GRID.replace("      boom: {tasks: [boom]}\n", ""))
    seq.grid.run(path)
    path.write_text(path.read_text().replace("seeds: [0, 1, 2, 3]", "seeds: [0, 1]"))
    refused_in_one_line(
        run_cli("grid", "run", str(path), "--resume"), "--resume", "grid.yaml", "changed", "seeds"
    )
    path.write_text(
        path.read_text().replace("seeds: [0, 1]", "seeds: [0, 1, 2, 3]") + "gate_threshold: 0.5\n"
    )
    said: list[str] = []
    summary = seq.grid.run(path, resume=True, gate=True, say=said.append)
    assert any("warning: gate_threshold changed" in line for line in said)
    assert summary.passed and summary.gate_threshold == 0.5


def test_the_stricter_gates_lower_bound_and_per_cell_floors(tmp_path: Path) -> None:
    text = GRID.replace("      boom: {tasks: [boom]}\n", "").replace("policies: [coin-player]", """
policies: [coin-player]
modes:
  sure: {params: {skill: 1.0}}
  never: {params: {skill: 0.0}}""")  # fmt: skip
    path = _config(tmp_path, text)
    rate = seq.grid.run(path, gate=True, threshold=0.5)
    assert rate.passed and rate.success_rate == 0.5  # 8 of 16
    bound = seq.grid.run(path, gate=True, threshold=0.5, gate_on="lower-bound", resume=True)
    assert not bound.passed and bound.success_low < 0.5
    assert (
        bound.gate_line().startswith("gate FAIL: success_rate=0.500 [")
        and "on lower-bound" in bound.gate_line()
    )
    path.write_text(text + "floors: {'never@*': 0.25}\n")
    floored = seq.grid.run(path, gate=True, threshold=0.5, resume=True)
    assert floored.reasons == ["cell never@coin-player/coin/heads: success_rate 0.000 < floor 0.25"]
