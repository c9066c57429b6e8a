"""`seq grid run --json` prints strict JSON: a NaN figure (a NaN reward) is `null`, not `NaN`."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

NAN_REWARD = """
import seq


class Env:
    def reset(self, seed=None):
        return [0.0], {}

    def step(self, action):
        return [0.0], float("nan"), True, False, {}


@seq.benchmark(name="nan-coin", conditions=seq.conditions(tasks=["t"], seeds=range(2)), max_steps=2)
class NanCoin(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return Env()

    @seq.check
    def check(self, env):
        return seq.Step(done=True, metrics={"success": 1.0})


@seq.policy(name="nan-player")
class Player(seq.Policy):
    @seq.infer
    def infer(self, obs, **_):
        return [0.0]
"""

GRID = """
policies: [nan-player]
families:
  nan-coin:
    variations:
      only: {tasks: [t]}
seeds: [0, 1]
workers: 1
output_dir: runs
"""


def test_a_nan_reward_is_null_in_the_json(tmp_path: Path) -> None:
    bench = tmp_path / "nan_coin.py"
    bench.write_text(NAN_REWARD)
    assert run_cli("deploy", str(bench)).returncode == 0
    config = tmp_path / "grid.yaml"
    config.write_text(GRID)
    ran = run_cli("grid", "run", str(config), "--json")
    assert ran.returncode == 0, ran.stderr

    def refuse(constant: str) -> None:
        raise AssertionError(f"the JSON holds {constant}")

    summary = json.loads(ran.stdout, parse_constant=refuse)
    (cell,) = summary["cells"]
    assert cell["avg_reward"] is None and cell["success_rate"] == 1.0
