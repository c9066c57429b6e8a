"""LeRobot checkpoints: seq's built-in policy `lerobot` against LeRobot's own `lerobot-eval`, side by
side on Push-T, episode by episode and in throughput.

    SEQ_LEROBOT_PYTHON=/tmp/seq-lerobot-venv/bin/python python bench/lerobot.py [--episodes 5] \
        [--kinds act,diffusion]

For each kind, a small randomly initialised policy saved as `lerobot-train` saves it
(`tools/make_lerobot_checkpoint.py`), then, on seeds 0 … episodes-1, each in its own process:

1. `lerobot-eval` (`tools/lerobot_eval_seeded.py`: torch seeded per episode as seq seeds it, which
   changes no other step), `--eval.batch_size=1` (one environment, as seq's one worker here), the
   videos it renders for its first 10 episodes left out (`--no-videos`);
2. `seq eval run lerobot --benchmark pusht --envs 1`.

Per episode: seed, steps, success and return in each, and whether they agree; per tool: env steps
per second of wall time over the whole command (process start, imports, loading the checkpoint,
every episode), and the ratio seq / lerobot-eval. Both run on the CPU, one after the other. seq's
workers run torch on one thread (`OMP_NUM_THREADS=1`, as every worker); `lerobot-eval` on as many
as torch picks, or `--lerobot-threads N`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1] / "tools"
THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")  # as seq's workers set them


def timed(command: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess, float]:
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=7200)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])} … failed:\n{result.stderr[-3000:]}")
    return result, elapsed


def compare(kind: str, python: str, episodes: int, root: Path, lerobot_threads: int | None) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SEQ_HOME": str(root / f"home-{kind}"), "COLUMNS": "200"}
    threads = {} if lerobot_threads is None else dict.fromkeys(THREADS, str(lerobot_threads))
    checkpoint = root / kind
    subprocess.run(
        [python, str(TOOLS / "make_lerobot_checkpoint.py"), kind, str(checkpoint)], check=True, env=env
    )
    theirs, their_s = timed(
        [
            python,
            str(TOOLS / "lerobot_eval_seeded.py"),
            "--no-videos",
            f"--policy.path={checkpoint}",
            "--env.type=pusht",
            f"--eval.n_episodes={episodes}",
            "--eval.batch_size=1",
            "--seed=0",
            "--policy.device=cpu",
            f"--output_dir={root / f'lerobot-eval-{kind}'}",
        ],
        {**env, **threads},
    )
    reference = [json.loads(found) for found in re.findall(r"episode (\{.*?\})", theirs.stdout)]
    seq = [python, "-c", "from seq.cli import main; main()"]
    ours, our_s = timed(
        [
            *seq,
            "eval",
            "run",
            "lerobot",
            "--benchmark",
            "pusht",
            "--param",
            f"pretrained={checkpoint}",
            "--seeds",
            f"0-{episodes - 1}",
            "--envs",
            "1",
        ],
        env,
    )
    eval_id = re.search(r"eval (ev-[0-9a-f]+)", ours.stdout + ours.stderr).group(1)
    subprocess.run(
        [*seq, "eval", "export", eval_id, "--output", str(root / f"export-{kind}")],
        check=True,
        env=env,
        capture_output=True,
    )
    rows = [
        json.loads(line) for line in (root / f"export-{kind}" / "episodes.jsonl").read_text().splitlines()
    ]
    mine = sorted(rows, key=lambda row: row["seed"])
    pairs = []
    for row, other in zip(mine, reference, strict=True):
        agree = (
            row["seed"] == other["seed"]
            and row["steps"] == other["steps"]
            and row["metrics"]["success"] == float(other["success"])
            and abs(row["metrics"]["return"] - other["return"]) <= 1e-6 * max(1.0, abs(other["return"]))
        )
        pairs.append((row, other, agree))
    return {
        "kind": kind,
        "pairs": pairs,
        "steps": (sum(r["steps"] for r in mine), sum(o["steps"] for o in reference)),
        "seconds": (our_s, their_s),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--kinds", default="act,diffusion")
    parser.add_argument(
        "--lerobot-threads", type=int, default=None, help="torch's threads in lerobot-eval (default: its own)"
    )
    args = parser.parse_args()
    python = os.environ.get("SEQ_LEROBOT_PYTHON")
    if not python:
        raise SystemExit("set SEQ_LEROBOT_PYTHON to a Python with LeRobot (bash tools/lerobot_venv.sh).")
    with tempfile.TemporaryDirectory() as folder:
        for kind in args.kinds.split(","):
            result = compare(kind, python, args.episodes, Path(folder), args.lerobot_threads)
            agreed = sum(agree for *_, agree in result["pairs"])
            print(f"{kind}: {agreed}/{len(result['pairs'])} episodes agree (seed, steps, success, return)")
            print(
                f"  {'seed':>4} {'steps seq/lerobot':>18} {'success':>9} "
                f"{'return seq':>14} {'return lerobot':>15}"
            )
            for row, other, agree in result["pairs"]:
                print(
                    f"  {row['seed']:>4} {row['steps']:>8} / {other['steps']:<7} "
                    f"{int(row['metrics']['success'])}/{int(other['success']):<7} "
                    f"{row['metrics']['return']:>14.9f} {other['return']:>15.9f}{'' if agree else '  DIFFER'}"
                )
            (our_steps, their_steps), (our_s, their_s) = result["steps"], result["seconds"]
            ours, theirs = our_steps / our_s, their_steps / their_s
            print(
                f"  seq {ours:.1f} steps/s ({our_s:.1f} s), lerobot-eval {theirs:.1f} steps/s "
                f"({their_s:.1f} s): ratio {ours / theirs:.2f}"
            )


if __name__ == "__main__":
    main()
