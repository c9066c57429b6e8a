"""The grid's pool: cells that share an arm share its episodes, and the pool counts each distinct
episode once; trials of one condition count as one condition's worth in the pooled interval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

import seq
from seq.stats import wilson_interval

COIN = Path(__file__).with_name("coin.py")

# coin-lucky declares no `skill`: both modes run it as one arm, so its two cells share 8 episodes
SHARED = """
policies: [coin-player, coin-lucky]
modes:
  sure: {params: {skill: 1.0}}
  half: {params: {skill: 0.5}}
families:
  coin:
    variations:
      heads: {tasks: [heads, tails]}
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


def test_cells_that_share_an_arm_pool_each_episode_once(tmp_path: Path) -> None:
    path = _config(tmp_path, SHARED)
    summary = seq.grid.run(path, gate=True, threshold=0.5)
    (eval_id,) = summary.summary["evals"]
    report = seq.eval.report(eval_id)
    assert len(report.arms) == 3 and len(report.episodes) == 24  # 3 arms × 8 conditions
    wins = sum(e.metrics["success"] for e in report.episodes)
    assert sum(cell.n_trials for cell in summary.cells) == 32  # 4 cells × 8
    assert (summary.n_trials, summary.n_success) == (24, wins)  # not 32, counting 8 twice
    assert summary.n_conditions == 8
    assert summary.success_rate == pytest.approx(wins / 24)
    data = json.loads((summary.run_dir / "summary.json").read_text())
    assert (data["n_trials"], data["n_conditions"], data["n_cell_trials"]) == (24, 8, 32)
    assert all("episodes" not in cell for cell in data["cells"])  # the cells' numbers, not their rows

    # the gate on the rate passes; on the lower bound it fails where counting the shared
    # episodes twice (32 trials) would have passed it
    counted_twice = sum(cell.n_success for cell in summary.cells)
    assert summary.passed and wilson_interval(counted_twice, 32).low >= 0.5 > summary.success_low
    bound = seq.grid.run(path, gate=True, threshold=0.5, gate_on="lower-bound", resume=True)
    assert (bound.n_trials, bound.n_success) == (24, wins)  # from the cells the run kept
    assert not bound.passed and bound.reasons == [
        f"the interval's lower bound {bound.success_low:.3f} < threshold 0.50"
    ]
    assert bound.summary["gate"]["reaches"] == {"rate": True, "lower-bound": False}
    assert bound.gate_line().endswith("threshold=0.50 on lower-bound n=24 in 8 conditions")

    pooled = (bound.run_dir / "summary.tsv").read_text().split("\npooled\n")[1].splitlines()
    row = dict(zip(pooled[0].split("\t"), pooled[1].split("\t"), strict=True))
    assert (row["n_trials"], row["n_conditions"], row["n_cell_trials"]) == ("24", "8", "32")
    shown = run_cli("grid", "show", str(bound.run_dir), env={"COLUMNS": "80"}).stdout
    assert "over 24 episodes (8 conditions) in 4 cells" in shown
    assert "their 32 trials are 24 episodes" in shown


def test_trials_of_a_condition_count_once_in_the_pooled_interval(tmp_path: Path) -> None:
    text = SHARED.replace("policies: [coin-player, coin-lucky]", "policies: [coin-lucky]")
    text = text.replace("  half: {params: {skill: 0.5}}\n", "").replace(
        "  sure: {params: {skill: 1.0}}\n", ""
    )
    path = _config(tmp_path, text.replace("modes:\n", "") + "trials: 3\n")
    summary = seq.grid.run(path, gate=True, threshold=0.8, gate_on="lower-bound")
    # 24 wins of 24 that are 8 conditions' copies: the interval of 8 wins of 8, not of 24
    assert summary.success_low == pytest.approx(wilson_interval(8, 8).low)
    assert (summary.n_trials, summary.n_conditions, summary.effective_n) == (24, 8, pytest.approx(8))
    assert wilson_interval(24, 24).low >= 0.8 > summary.success_low and not summary.passed
    assert summary.summary["interval"] == "wilson (clustered)"
    (cell,) = summary.cells  # the cell's own interval counts its conditions too
    assert (cell.n_trials, cell.n_conditions) == (24, 8)
    assert cell.success_low == pytest.approx(wilson_interval(8, 8).low)
    (task_row, *_) = cell.tasks
    assert task_row["n_conditions"] == 4 and task_row["success_low"] == pytest.approx(
        wilson_interval(4, 4).low
    )
    shown = run_cli("grid", "show", str(summary.run_dir)).stdout
    assert "the interval counts conditions: worth 8 independent episodes" in shown
