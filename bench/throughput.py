"""Throughput of the local engine on MetaWorld, measured side by side in one run.

    python bench/throughput.py [--tasks 4] [--seeds 20] [--repeats 3]

1. `seq` with one env against a raw MetaWorld loop with the same expert, tasks and seeds in one
   process (goal: ratio >= 0.95). Both start a fresh Python that imports MetaWorld, build each
   task's env and goal set once, and run the same episodes; `seq` also plans, records every
   episode in SQLite and computes the report.
2. `--envs 2` against `--envs 1` on the same eval (goal: >= 1.7x on 2 cores), over the eval's own
   wall time (workers started to last episode recorded) and end to end.

Every side runs in a fresh Python process, so each pays its own imports.

Runs alternate (A, B, A, B …) so that machine noise hits both sides alike; the best of each side
is compared. Prints steps/s and the ratios.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

RAW_LOOP = """
import sys, time
start = time.perf_counter()
from seq.shelf.metaworld import make_env
from metaworld.policies import ENV_POLICY_MAP
tasks, seeds, max_steps = sys.argv[1].split(","), [int(s) for s in sys.argv[2].split(",")], 500
cache, steps = {}, 0
for task in tasks:
    expert = ENV_POLICY_MAP[task]()
    for seed in seeds:
        env = make_env(task, seed, cache, max_steps)
        obs, _ = env.reset(seed=seed)
        for _ in range(max_steps):
            obs, reward, terminated, truncated, info = env.step(expert.get_action(obs))
            steps += 1
            if info["success"] >= 1.0 or terminated or truncated:
                break
print(steps, time.perf_counter() - start)
"""


def raw_loop(tasks: list[str], seeds: list[int]) -> tuple[int, float]:
    """Total steps and seconds of the raw loop, timed from the launch of its Python process."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", RAW_LOOP, ",".join(tasks), ",".join(map(str, seeds))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return int(out[0]), time.perf_counter() - start


SEQ_EVAL = """
import sys
import seq
tasks, seeds, envs = sys.argv[1].split(","), [int(s) for s in sys.argv[2].split(",")], int(sys.argv[3])
report = seq.eval.run("metaworld-expert", benchmark="metaworld", tasks=tasks, seeds=seeds, envs=envs)
assert report.status == "completed" and not report.problems, report.problems
print(sum(e.steps for e in report.episodes), report.cost["wall_s"])
"""


def seq_eval(tasks: list[str], seeds: list[int], envs: int) -> tuple[int, float, float]:
    """Total steps, seconds of `seq.eval.run` end to end in a fresh Python (plan, run, record,
    report), and seconds the eval itself ran (its record's wall time: workers start to last episode)."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", SEQ_EVAL, ",".join(tasks), ",".join(map(str, seeds)), str(envs)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return int(out[0]), time.perf_counter() - start, float(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=4, help="how many MT10 tasks")
    parser.add_argument("--seeds", type=int, default=20, help="seeds per task")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each side")
    args = parser.parse_args()
    os.environ.setdefault("SEQ_HOME", tempfile.mkdtemp(prefix="seq-bench-"))
    from seq.shelf.metaworld import MT10

    tasks, seeds = MT10[: args.tasks], list(range(args.seeds))
    print(f"{len(tasks)} tasks x {len(seeds)} seeds, metaworld-expert, best of {args.repeats} runs per side")

    raw, one, two = [], [], []
    for _ in range(args.repeats):
        raw.append(raw_loop(tasks, seeds))
        one.append(seq_eval(tasks, seeds, 1))
        two.append(seq_eval(tasks, seeds, 2))
    steps = {run[0] for run in raw + one + two}
    assert len(steps) == 1, f"the sides ran different numbers of steps: {steps}"
    (total,) = steps

    def best(runs: list[tuple], column: int) -> float:
        return total / min(run[column] for run in runs)

    print(f"{total} steps per run")
    print(f"  raw loop (fresh python, one process):    {best(raw, 1):7.0f} steps/s")
    print(f"  seq --envs 1, end to end (with report):  {best(one, 1):7.0f} steps/s")
    print(f"  seq --envs 2, end to end (with report):  {best(two, 1):7.0f} steps/s")
    print(f"  seq --envs 1, eval wall time (record):   {best(one, 2):7.0f} steps/s")
    print(f"  seq --envs 2, eval wall time (record):   {best(two, 2):7.0f} steps/s")
    print(f"seq --envs 1 / raw loop, end to end:  {best(one, 1) / best(raw, 1):.3f}  (goal >= 0.95)")
    print(
        f"seq --envs 2 / --envs 1, eval:        {best(two, 2) / best(one, 2):.2f}x  (goal >= 1.7x on 2 cores)"
    )
    print(f"seq --envs 2 / --envs 1, end to end:  {best(two, 1) / best(one, 1):.2f}x")


if __name__ == "__main__":
    main()
