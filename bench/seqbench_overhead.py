"""The seqbench runner's own overhead per learn/infer call, against a bare subprocess call.

    python bench/seqbench_overhead.py [--algorithms count-lm,random,exact-knn,memorizer] [--scale 1.0]

For each algorithm it runs specs/runs/full_v1.yaml on a freshly built full cohort, then replays every
call the runner made, alternating, --repeats times each (the best of each kept):

- runner: `seq.seqbench.protocol.learn/infer` as the runner calls them: write the examples or requests
  file, hash the checkpoint before and after, run the process under its budget watch, parse and
  check the predictions;
- bare: `subprocess.run` of the same argv on the same input files.

Outputs go to scratch paths, so the run is left as it was. The goal is runner/bare under 1.10.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from seq.seqbench.algorithm import Algorithm, load_algorithm  # noqa: E402
from seq.seqbench.budgets import Budget  # noqa: E402
from seq.seqbench.families import base_rows, oracle_rows  # noqa: E402
from seq.seqbench.materialize import noise_rows, supervision_rows  # noqa: E402
from seq.seqbench.pipeline import run  # noqa: E402
from seq.seqbench.protocol import Request, infer, learn  # noqa: E402
from seq.seqbench.tasks import TaskRow, write_task_file  # noqa: E402

SPEC = REPO / "specs" / "runs" / "full_v1.yaml"


def build_cohort(folder: Path, scale: float) -> list[Path]:
    rows = list(base_rows(scale, 0))
    files = {
        "full.csv": rows,
        "oracle.csv": list(oracle_rows(rows)),
        "noise.csv": list(noise_rows(rows, 42)),
        "supervision.csv": list(supervision_rows(rows)),
    }
    for name, content in files.items():
        write_task_file(folder / name, content)
    return [folder / name for name in files]


def _scratch_argv(argv: list[str], scratch: Path) -> list[str]:
    """The same call with its outputs redirected, so a replay leaves the run untouched."""
    replay = list(argv)
    for flag, name in (("--model-out", "model"), ("--output", "predictions.jsonl")):
        if flag in replay:
            replay[replay.index(flag) + 1] = str(scratch / name)
    return replay


def _clear(scratch: Path) -> None:
    for leftover in scratch.iterdir():
        shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()


def _value(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def bare_call(argv: list[str], scratch: Path) -> float:
    _clear(scratch)
    started = time.perf_counter()
    subprocess.run(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - started


def runner_call(call: dict, algorithm: Algorithm, budget: Budget, scratch: Path) -> float:
    """The call as the runner makes it, inputs written afresh (as for a stage's first seed)."""
    _clear(scratch)
    argv = call["argv"]
    if call["operation"] == "learn":
        examples = [
            TaskRow(e["id"], "", "", "", "", "", e["input"], e["target"], ())
            for e in map(json.loads, Path(_value(argv, "--examples")).read_text().splitlines())
        ]
        record = learn(
            algorithm,
            Path(_value(argv, "--model-in")),
            examples,
            scratch / "model",
            budget,
            0,
            "bench",
            scratch,
        )
    else:
        requests = [
            Request(r["id"], r["kind"], r["input"], r["id"], r.get("target"))
            for r in map(json.loads, Path(_value(argv, "--requests")).read_text().splitlines())
        ]
        record, _ = infer(algorithm, Path(_value(argv, "--model")), requests, budget, 0, "bench", scratch)
    assert record.status == "ok", record.reason
    return record.call_s


def measure(name: str, tasks: list[Path], workdir: Path, repeats: int) -> dict:
    output = workdir / name
    run(SPEC, name, tasks, output, calibration=Path("/nonexistent.json"))
    calls = json.loads((output / "resources.json").read_text())["calls"]
    algorithm = load_algorithm(name)
    budget = Budget()
    scratch = workdir / "scratch"
    scratch.mkdir(exist_ok=True)
    rows = {"learn": [0, 0.0, 0.0], "infer": [0, 0.0, 0.0]}
    for call in calls:
        bare_argv = _scratch_argv(call["argv"], scratch)
        runner_best = bare_best = float("inf")
        for _ in range(repeats):
            bare_best = min(bare_best, bare_call(bare_argv, scratch))
            runner_best = min(runner_best, runner_call(call, algorithm, budget, scratch))
        row = rows[call["operation"]]
        row[0] += 1
        row[1] += runner_best
        row[2] += bare_best
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithms", default="count-lm,random,exact-knn,memorizer")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3, help="alternating replays per call (best kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="seqbench-bench-") as tmp:
        workdir = Path(tmp)
        tasks = build_cohort(workdir, args.scale)
        print(
            f"full_v1 on a scale-{args.scale} cohort; best of {args.repeats} alternating replays per call\n"
        )
        print(
            f"{'algorithm':<10} {'call':<6} {'calls':>5} {'runner ms':>10} {'bare ms':>8} "
            f"{'overhead ms':>12} {'runner/bare':>12}"
        )
        totals = [0.0, 0.0]
        for name in args.algorithms.split(","):
            rows = measure(name, tasks, workdir, args.repeats)
            for operation, (count, runner, bare) in rows.items():
                totals[0] += runner
                totals[1] += bare
                print(
                    f"{name:<10} {operation:<6} {count:>5} {1000 * runner / count:>10.1f} "
                    f"{1000 * bare / count:>8.1f} {1000 * (runner - bare) / count:>12.1f} "
                    f"{runner / bare:>12.3f}"
                )
            ratio = (rows["learn"][1] + rows["infer"][1]) / (rows["learn"][2] + rows["infer"][2])
            print(
                f"{name:<10} {'all':<6} {rows['learn'][0] + rows['infer'][0]:>5} {'':>10} {'':>8} {'':>12} "
                f"{ratio:>12.3f}"
            )
        print(f"\nall algorithms: runner/bare = {totals[0] / totals[1]:.3f} (goal < 1.10)")


if __name__ == "__main__":
    main()
