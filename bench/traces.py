"""What full traces cost, on MetaWorld (`seq evolve`'s traces: low-dim obs, actions, info, contacts).

    python bench/traces.py [--tasks 5] [--seeds 5] [--trials 2] [--repeats 3]

Episode throughput (env steps per second of the eval's own wall time, one worker) of a
`noisy-expert` eval (noise 0.3) with `traces=True` against the same eval without, each run in a
fresh process, alternating, best of each side; and the trace files' bytes per step. Goal: the
ratio with / without at least 0.9.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

RUN = """
import json, os, pathlib, sys, seq
from seq.shelf.metaworld import MT10
tasks, seeds, trials, traces = json.loads(sys.argv[1])
report = seq.eval.run("noisy-expert", benchmark="metaworld", tasks=MT10[:tasks], seeds=range(seeds),
                      trials=trials, params={"noise": 0.3}, traces=traces, envs=1)
steps = sum(e.steps for e in report.episodes)
files = list(pathlib.Path(os.environ["SEQ_HOME"]).glob("artifacts/*/traces/*.trace"))
size = sum(f.stat().st_size for f in files)
print(json.dumps({"steps": steps, "wall_s": report.cost["wall_s"], "bytes": size}))
"""


def once(tasks: int, seeds: int, trials: int, traces: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "SEQ_HOME": home}
        out = subprocess.run(
            [sys.executable, "-c", RUN, json.dumps([tasks, seeds, trials, traces])],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])


def per_step(steps: int = 3000) -> tuple[float, float]:
    """In one process: seconds per MetaWorld step (expert action + env.step) and per trace frame."""
    import tempfile
    import time
    import warnings

    from seq.authoring.conditions import Condition
    from seq.capture.trace import TraceWriter
    from seq.shelf.metaworld import _Experts, make_env

    warnings.filterwarnings("ignore")
    env, experts = make_env("pick-place-v3", 0, {}, 10**6), _Experts()
    obs, _ = env.reset(seed=0)
    item = type(
        "Item", (), {"item_id": "bench", "trial": 0, "arm": "", "condition": Condition("pick-place-v3")}
    )
    with tempfile.TemporaryDirectory() as folder:
        writer = TraceWriter(folder)
        writer.begin(item, env, obs)
        loop = trace = 0.0
        for _ in range(steps):
            start = time.perf_counter()
            action = experts.action(obs, "pick-place-v3")
            obs, reward, *_ = env.step(action)
            middle = time.perf_counter()
            writer.step(env, obs, action, reward, 0)
            loop, trace = loop + middle - start, trace + time.perf_counter() - middle
    return loop / steps, trace / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    best = {False: 0.0, True: 0.0}
    sizes = []
    for _ in range(args.repeats):
        for traces in (False, True):
            run = once(args.tasks, args.seeds, args.trials, traces)
            best[traces] = max(best[traces], run["steps"] / run["wall_s"])
            if traces:
                sizes.append(run["bytes"] / run["steps"])
    print(f"MetaWorld, {args.tasks} tasks × {args.seeds} seeds × {args.trials} trials, 1 worker")
    print(f"  without traces: {best[False]:,.0f} steps/s")
    print(f"  with traces:    {best[True]:,.0f} steps/s")
    print(f"  ratio: {best[True] / best[False]:.3f} (goal ≥ 0.9)")
    print(f"  trace size: {min(sizes):,.0f} bytes per step")
    loop, trace = per_step()
    print(
        f"  in one process: {loop * 1e6:,.0f} µs per step, {trace * 1e6:,.0f} µs per trace frame "
        f"(ratio {loop / (loop + trace):.3f})"
    )


if __name__ == "__main__":
    main()
