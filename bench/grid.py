"""A grid against the same cells run as separate `seq eval run` commands, back to back.

    python bench/grid.py [--seeds 0-1] [--max-steps 150] [--workers 2] [--repeats 1]

The 2 × 2 × 2 MetaWorld grid of examples/grid_metaworld.yaml (modes noise=0.0 / noise=1.0 of
noisy-expert, variations reach-v3 / push-v3, policies noisy-expert and metaworld-expert), timed
side by side in one run, each in a fresh SEQ_HOME:

1. `seq grid run CONFIG`: one eval per variation, its cells as arms (paired episodes, shared
   workers and env caches; metaworld-expert declares no `noise`, so its two cells share one arm);
2. the 8 cells as 8 `seq eval run` commands, one after the other (a shell loop's way).

Prints both wall times, the ratio (goal: the grid >= 1.3x faster) and checks that both measured
the same successes per cell.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SEQ = [sys.executable, "-c", "from seq.cli import main; main()"]
MODES = {"clean": "0.0", "noisy": "1.0"}
VARIATIONS = {"reach": "reach-v3", "push": "push-v3"}
POLICIES = ("noisy-expert", "metaworld-expert")
EPISODES: dict[str, int] = {}  # episodes each way ran (the last repeat)


def _config(seeds: str, max_steps: int, workers: int, output: Path) -> str:
    first, _, last = seeds.partition("-")
    seed_list = list(range(int(first), int(last or first) + 1))
    return f"""
policies: [{", ".join(POLICIES)}]
modes:
{chr(10).join(f"  {m}: {{params: {{noise: {v}}}}}" for m, v in MODES.items())}
families:
  metaworld:
    variations:
{chr(10).join(f"      {name}: {{tasks: [{task}]}}" for name, task in VARIATIONS.items())}
seeds: {seed_list}
max_steps: {max_steps}
workers: {workers}
output_dir: {output}
"""


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    return time.perf_counter() - start, done.stdout


def run_grid(args: argparse.Namespace, scratch: Path) -> tuple[float, dict[str, int]]:
    env = {**os.environ, "SEQ_HOME": str(scratch / "grid-home")}
    config = scratch / "grid.yaml"
    config.write_text(_config(args.seeds, args.max_steps, args.workers, scratch / "runs"))
    seconds, _ = _timed([*SEQ, "grid", "run", str(config), "--json"], env)
    (run_dir,) = (scratch / "runs").iterdir()
    cells = json.loads((run_dir / "summary.json").read_text())["cells"]
    _, listed = _timed([*SEQ, "eval", "ls", "--json"], env)
    EPISODES["grid"] = sum(row["done"] for row in json.loads(listed))
    return seconds, {c["key"]: c["n_success"] for c in cells}


def run_separately(args: argparse.Namespace, scratch: Path) -> tuple[float, dict[str, int]]:
    env = {**os.environ, "SEQ_HOME": str(scratch / "evals-home")}
    total, wins = 0.0, {}
    EPISODES["separate"] = 0
    for mode, noise in MODES.items():
        for variation, task in VARIATIONS.items():
            for policy in POLICIES:
                params = ["--param", f"noise={noise}"] if policy == "noisy-expert" else []
                command = [*SEQ, "eval", "run", policy, "-b", "metaworld", "--tasks", task, "--seeds",
                           args.seeds, "--max-steps", str(args.max_steps), "--envs", str(args.workers),
                           *params, "--json"]  # fmt: skip
                seconds, out = _timed(command, env)
                total += seconds
                report = json.loads(out)
                EPISODES["separate"] = EPISODES["separate"] + len(report["episodes"])
                wins[f"{mode}@{policy}/metaworld/{variation}"] = sum(
                    e["metrics"].get("success", 0.0) >= 0.5 for e in report["episodes"]
                )
    return total, wins


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-1", help="A seed range, such as 0-1.")
    parser.add_argument("--max-steps", type=int, default=150)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1, help="Best of this many of each.")
    args = parser.parse_args()
    grid_s, separate_s = [], []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="seq-bench-grid-") as scratch:
            seconds, grid_wins = run_grid(args, Path(scratch))
            grid_s.append(seconds)
            seconds, separate_wins = run_separately(args, Path(scratch))
            separate_s.append(seconds)
        if grid_wins != separate_wins:
            raise SystemExit(f"the two ways measured different cells:\n{grid_wins}\n{separate_wins}")
    best_grid, best_separate = min(grid_s), min(separate_s)
    print(f"2 x 2 x 2 MetaWorld grid, seeds {args.seeds}, max_steps {args.max_steps}, workers {args.workers}")
    print(f"  seq grid run (one eval per variation, cells as arms): {best_grid:7.1f} s")
    print(f"  8 x seq eval run, back to back:                       {best_separate:7.1f} s")
    print(f"  ratio: the grid is {best_separate / best_grid:.2f}x faster (goal >= 1.3x)")
    print("  same successes per cell: yes")
    print(
        f"  episodes run: grid {EPISODES['grid']}, separate {EPISODES['separate']} "
        "(the grid runs metaworld-expert's two cells as one arm: it declares no noise)"
    )


if __name__ == "__main__":
    main()
