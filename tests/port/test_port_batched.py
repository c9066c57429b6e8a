"""A scaffolded benchmark runs batched: one worker steps its MuJoCo Warp worlds together (Warp's
CPU device here), each world's episode its own row, the same rows as one world at a time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from port.scenes import CENTRING, PUCK

import seq
from seq.record.episode import EpisodeResult

SUCCESS_TODO = ("        # TODO: the CPU version's success check, on this world's state.\n"
                "        return False\n")
SUCCESS = "        return bool(np.abs(self.worlds.qpos[self.world][:2]).max() < 0.02)\n"
METRICS = 'metrics={"success": float(success)}'
WITH_POSITION = 'metrics={"success": float(success), "x": float(env.worlds.qpos[env.world][0])}'


@pytest.fixture
def puck_warp(tmp_path: Path) -> Path:
    """The puck exported, scaffolded with 3 worlds, its success check written, deployed."""
    source = tmp_path / "puck_bench.py"
    source.write_text(PUCK)
    scene, out = tmp_path / "scene", tmp_path / "puck-warp"
    exported = run_cli("benchmark", "export", f"{source}:Puck", "--seeds", "0-2", "--steps", "20",
                       "-o", str(scene))
    assert exported.returncode == 0, exported.stderr
    scaffolded = run_cli("benchmark", "scaffold", str(scene), "--envs", "3", "-o", str(out),
                         "--name", "puck-warp")
    assert scaffolded.returncode == 0, scaffolded.stderr
    code = (out / "benchmark.py").read_text()
    assert SUCCESS_TODO in code and METRICS in code
    (out / "benchmark.py").write_text(code.replace(SUCCESS_TODO, SUCCESS).replace(METRICS, WITH_POSITION))
    (tmp_path / "centring.py").write_text(CENTRING)
    seq.deploy(out / "benchmark.py")
    seq.deploy(tmp_path / "centring.py")
    return out


def _rows(report: seq.Report) -> list[tuple]:
    return [(e.item_id, e.status, e.error, e.steps, e.queries, e.ended_by,
             {k: v for k, v in e.metrics.items() if k != "duration_s"}) for e in report.episodes]


def test_a_scaffold_steps_its_worlds_together_as_one_world_at_a_time(puck_warp: Path) -> None:
    run = {"benchmark": "puck-warp", "envs": 1, "trials": 2, "max_steps": 40}
    alone = seq.eval.run("centring", **run)
    together = seq.eval.run("centring", envs_per_worker=3, **run)
    assert together.status == "completed" and together.done == together.total == 6
    assert len(together.episodes) == 6  # each world's episode a row of its own
    assert _rows(together) == _rows(alone)
    by_seed: dict[int, list[dict]] = {}
    for episode in together.episodes:
        by_seed.setdefault(episode.seed, []).append(_rows_of(episode))
    assert all(first == second for first, second in by_seed.values())  # the same seed, the same row
    assert {e.ended_by for e in together.episodes} == {"check"}  # the pucks reach the centre
    assert len({e.metrics["x"] for e in together.episodes}) == 3


def _rows_of(episode: EpisodeResult) -> dict:
    return {"steps": episode.steps, **{k: v for k, v in episode.metrics.items() if k != "duration_s"}}


def test_a_scaffold_refuses_more_episodes_than_worlds(puck_warp: Path) -> None:
    ran = run_cli("eval", "run", "centring", "--benchmark", "puck-warp", "--envs", "1",
                  "--envs-per-worker", "4", "--trials", "2", "--max-steps", "2", "--json", timeout=600)
    report = json.loads(ran.stdout)
    errors = [e["error"] for e in report["episodes"] if e["status"] == "error"]
    assert errors and all("all 3 worlds hold an episode" in error for error in errors)
    assert len(errors) < 6  # the episodes that found a world free ran
