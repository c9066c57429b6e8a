"""robosuite's Lift against its MuJoCo Warp port (`examples/lift_warp.py`), paired over many seeds.

    python bench/lift_warp.py [--seeds 0-49] [--max-steps 100] [--worlds 10] [-o FILE]
    python bench/lift_warp.py --direct SCENE [--seeds 0-49] [--trials 6] [--worlds 300] [-o FILE]

In a fresh seq home (the images cached in `$SEQ_IMAGES`, default the temp folder's
`seq-bench-images`, shared with bench/port.py): robosuite's Lift exported for `--seeds` (its
starts, through robosuite's own reset), put in `lift-warp-scene`, `lift-warp` deployed, then

- by default `seq benchmark compare robosuite lift-warp --policy robosuite-scripted` on those
  seeds, one worker each side, `--worlds` episodes side by side (the port's worlds; robosuite's
  envs in lockstep), the policy served: both success rates, the paired counts, B - A with its
  interval, McNemar's p and the verdict;
- with `--direct SCENE`, no seq eval and no images: in this Python (which needs MuJoCo Warp),
  `examples/lift_warp.py`'s worlds on an exported Lift scene (its starts of `--seeds`),
  `--worlds` of them stepped together on Warp's default device (the GPU where there is one), each
  world's episode driven by `robosuite-scripted`'s own function in-process, `--trials` episodes
  per seed, in waves of `--worlds`: the success rate and control steps/s (25 physics steps each).

`--export-only DIR` only exports the scene (for `--direct`, or a machine without PyPI).
`-o FILE` writes the figures as JSON (the command's report under `report`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "lift_warp.py"


def cli(*args: str, timeout: float = 3600) -> str:
    """Run the `seq` command line as a user would; its stdout, or exit with its stderr's tail."""
    ran = subprocess.run(
        [sys.executable, "-c", "from seq.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "100"},
    )
    if ran.returncode != 0:
        raise SystemExit(f"seq {' '.join(args[:3])} failed (exit {ran.returncode}):\n{ran.stderr[-3000:]}")
    return ran.stdout


# robosuite's Lift as the shelf runs it, declared with as many seeds as asked (the shelf declares 10)
LIFT_SEEDS = """
import seq
from seq.shelf.robosuite import IMAGE, MAX_STEPS, RobosuiteEnv


@seq.benchmark(name="robosuite-lift-seeds", conditions=seq.conditions(tasks=["Lift"], seeds={seeds}),
               max_steps=MAX_STEPS, image=IMAGE)
class LiftSeeds(seq.Benchmark):
    @seq.setup
    def setup(self) -> None:
        self.env = None

    @seq.reset
    def reset(self, seed: int, variant: seq.Condition) -> RobosuiteEnv:
        self.env = self.env or RobosuiteEnv("Lift")
        return self.env

    @seq.check
    def check(self, env: RobosuiteEnv) -> seq.Step:
        success = float(env.success())
        return seq.Step(done=success >= 1.0, metrics={{"success": success}})
"""


def export(scene: Path, seeds: list[int]) -> None:
    """robosuite's Lift exported for `seeds` into `scene`, through robosuite's own reset."""
    with tempfile.TemporaryDirectory() as scratch:
        declared = Path(scratch) / "lift_seeds.py"
        declared.write_text(LIFT_SEEDS.format(seeds=seeds))
        cli("benchmark", "export", str(declared), "-o", str(scene))


def deploy(home: Path, seeds: list[int]) -> None:
    """robosuite's Lift exported for `seeds` into lift-warp's volume; lift-warp deployed."""
    scene = home / "volume" / "scene"
    export(scene, seeds)
    for mjb in scene.rglob("*.mjb"):  # only robosuite's MuJoCo reads it
        mjb.unlink()
    cli("volume", "put", "lift-warp-scene", str(scene.parent), "--kind", "dataset")
    shutil.copy(EXAMPLE, home / "lift_warp.py")
    cli("deploy", str(home / "lift_warp.py"))


def direct(scene: Path, seeds: list[int], trials: int, nworld: int, max_steps: int) -> dict:
    """lift-warp's worlds driven by robosuite-scripted in this process, in waves of `nworld`."""
    import importlib.util

    from seq.shelf.robosuite import scripted_action

    spec = importlib.util.spec_from_file_location("lift_warp", EXAMPLE)
    lift = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lift)
    import warp

    began = time.perf_counter()
    worlds = lift.LiftWorlds(scene, nworld)
    envs = [lift.LiftEnv(worlds, "Lift") for _ in range(nworld)]
    worlds.step()  # compiles (or loads) Warp's kernels before timing
    loaded = time.perf_counter() - began
    queue = [seed for _ in range(trials) for seed in seeds]
    successes = steps = 0
    began = time.perf_counter()
    while queue:
        wave, queue = queue[:nworld], queue[nworld:]
        observations = [env.reset(seed=seed)[0] for env, seed in zip(envs, wave, strict=False)]
        running = list(range(len(wave)))
        for _ in range(max_steps):
            for i in running:
                envs[i].stage(scripted_action("Lift", observations[i]))
            worlds.step()
            steps += len(running)
            for i in list(running):
                observations[i] = envs[i].outcome()[0]
                if envs[i].success():  # the episode ends: its world is released, as seq's engine does
                    successes += 1
                    running.remove(i)
                    envs[i].release()
            if not running:
                break
        for env in envs[: len(wave)]:
            env.release()
    seconds = time.perf_counter() - began
    episodes = len(seeds) * trials
    figures = {
        "device": str(warp.get_device()),
        "worlds": nworld,
        "episodes": episodes,
        "success": successes / episodes,
        "control_steps": steps,
        "seconds": seconds,
        "control_steps_per_s": steps / seconds,
        "load_s": loaded,
    }
    print(
        f"lift-warp on {figures['device']}, {nworld} worlds: {episodes} episodes, success "
        f"{figures['success']:.2f}, {steps / seconds:,.1f} control steps/s ({25 * steps / seconds:,.0f} "
        f"physics world-steps/s), {seconds:.0f} s (+{loaded:.0f} s to build and load)"
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", default="0-49", help="Seeds, such as 0-49 or 0,1,2 (as seq takes them).")
    parser.add_argument("--max-steps", type=int, default=100, help="Control steps of each episode, at most.")
    parser.add_argument("--worlds", type=int, default=10, help="Episodes side by side (the port's worlds).")
    parser.add_argument("--direct", type=Path, metavar="SCENE", help="Run the port alone on this scene.")
    parser.add_argument("--trials", type=int, default=1, help="With --direct: episodes per seed.")
    parser.add_argument(
        "--export-only", type=Path, metavar="DIR", help="Only export the seeds' scene into DIR."
    )
    parser.add_argument("-o", "--output", type=Path, help="Write the figures here as JSON.")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from seq.cli.options import parse_seeds
    from seq.errors import SeqInputError

    try:
        seeds = parse_seeds([args.seeds])
    except SeqInputError as error:
        parser.error(str(error))
    if args.worlds < 1 or args.trials < 1:
        raise SystemExit("--worlds and --trials must each be 1 or more.")
    if args.export_only:
        export(args.export_only, seeds)
        return
    if args.direct:
        figures = direct(args.direct, seeds, args.trials, args.worlds, args.max_steps)
        if args.output:
            args.output.write_text(json.dumps({"max_steps": args.max_steps, **figures}, indent=1))
        return
    os.environ.setdefault("SEQ_IMAGES", str(Path(tempfile.gettempdir()) / "seq-bench-images"))
    with tempfile.TemporaryDirectory() as home:
        os.environ["SEQ_HOME"] = home
        began = time.perf_counter()
        deploy(Path(home), seeds)
        prepared = time.perf_counter() - began
        began = time.perf_counter()
        text = cli(
            "benchmark",
            "compare",
            "robosuite",
            "lift-warp",
            "--policy",
            "robosuite-scripted",
            "--tasks",
            "Lift",
            "--seeds",
            args.seeds,
            "--envs",
            "1",
            "--envs-per-worker",
            str(args.worlds),
            "--serve",
            "--max-steps",
            str(args.max_steps),
        )
        print(text)
        ran = time.perf_counter() - began
        print(f"prepared (export, volume, deploy) in {prepared:.0f} s; ran in {ran:.0f} s")
    if args.output:
        figures = {"seeds": seeds, "max_steps": args.max_steps, "worlds": args.worlds}
        args.output.write_text(
            json.dumps({**figures, "prepare_s": prepared, "run_s": ran, "report": text}, indent=1)
        )


if __name__ == "__main__":
    main()
