"""What recording costs, on MetaWorld.

    python bench/recording.py [--tasks 10] [--seeds 50,10,3] [--envs N,N/2] [--repeats 3] [--frames 200]

1. Episode throughput of a `metaworld-expert` eval that records the first seed of each task
   (`record="first"`, the default camera at 224², 20 fps) against the same eval recording nothing,
   for each number of seeds a task and each number of workers: one per core (every core busy with
   episodes: a video is CPU work nothing absorbs) and half as many (a core to spare, as when
   episodes wait on a served policy: the worker runs its next episodes while a video is written).
   The goal (>= 0.9x) is set on MetaWorld's own protocol, 50 episodes a task
   (`metaworld.evaluation`'s `num_episodes`), where one episode in fifty is recorded; smaller
   evals are printed beside it, with the workers' core-seconds of the eval that records nothing
   and what its ten videos add (they cost the same in any eval, so the fewer episodes a task, the
   more they weigh). Each run is a fresh Python; runs alternate and the best of each side counts.
   Throughput is over the eval's own wall time (its record: workers started to last episode); what
   the videos add is the difference in the workers' CPU time (the eval's `cost.core_s`, least of
   each side).
2. Frames per second of a 224² MetaWorld camera (`corner2`) rendered on one thread: default
   settings, the fast settings (no shadows, reflections or multisampling) on the full model, and
   on the lighter model software rendering draws (`seq.capture.lod`), with the offscreen backend.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

PROTOCOL_SEEDS = 50  # metaworld.evaluation.evaluation(num_episodes=50): the size the goal is set on
EVAL = """
import sys
import seq
tasks, seeds = sys.argv[1].split(","), [int(s) for s in sys.argv[2].split(",")]
envs, record = int(sys.argv[3]), sys.argv[4]
report = seq.eval.run("metaworld-expert", benchmark="metaworld", tasks=tasks, seeds=seeds, envs=envs,
                      record=record)
assert report.status == "completed" and not report.problems, report.problems
videos = sum("video" in e.artifacts for e in report.episodes)
errors = sum("observer_errors" in e.artifacts for e in report.episodes)
print(len(report.episodes), videos, errors, report.cost["wall_s"], report.cost["core_s"])
"""


def run_eval(tasks: list[str], seeds: list[int], envs: int, record: str) -> tuple[int, int, float, float]:
    """Episodes, videos written, the eval's own wall seconds and its workers' core-seconds, in a
    fresh Python."""
    out = subprocess.run(
        [sys.executable, "-c", EVAL, ",".join(tasks), ",".join(map(str, seeds)), str(envs), record],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if int(out[2]):
        raise RuntimeError(f"{out[2]} recordings failed")
    return int(out[0]), int(out[1]), float(out[3]), float(out[4])


def render_fps(frames: int) -> list[tuple[str, float]]:
    """Frames per second of MetaWorld's corner2 camera at 224², stepping the expert between frames."""
    from metaworld.policies import ENV_POLICY_MAP

    from seq.capture.lod import MAX_FACES, MAX_TEXTURE
    from seq.capture.render import MujocoView, SceneRenderer, choose_backend, mujoco_handles, use_backend

    info = choose_backend()
    use_backend(info.backend if info else None)
    from seq.shelf.metaworld import make_env

    env = make_env("push-v3", 0)
    expert = ENV_POLICY_MAP["push-v3"]()
    results = []
    settings = {
        "default": (False, None, None),
        "fast, full model": (True, None, None),
        "fast, lighter model": (True, MAX_FACES, MAX_TEXTURE),
    }
    for label, (fast, max_faces, max_texture) in settings.items():
        obs, _ = env.reset(seed=0)
        model, data = mujoco_handles(env)
        renderer = SceneRenderer(
            info.backend if info else None, 224, 224, fast, max_faces=max_faces, max_texture=max_texture
        )
        view = MujocoView(model, data, "corner2", fast, pool=1)
        scene = view.snapshot()
        renderer.render(model, scene, view.upside_down)  # the context is built once, before timing
        view.free.put(scene)
        start = time.perf_counter()
        for _ in range(frames):
            obs = env.step(expert.get_action(obs))[0]
            scene = view.snapshot()
            renderer.render(model, scene, view.upside_down)
            view.free.put(scene)
        results.append((label, frames / (time.perf_counter() - start)))
        renderer.close()
    backend = (
        f"{info.backend} ({info.renderer})" if info and info.renderer else (info.backend if info else "none")
    )
    print(f"offscreen rendering: MUJOCO_GL={backend}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=10, help="how many MT10 tasks")
    parser.add_argument(
        "--seeds", default="50,10,3", help="seeds per task, one eval size each (the first seed is recorded)"
    )
    cores = os.cpu_count() or 1
    parser.add_argument(
        "--envs", default=f"{cores},{max(1, cores // 2)}", help="worker processes, one eval size each"
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs of each side")
    parser.add_argument("--frames", type=int, default=200, help="frames per render measurement")
    args = parser.parse_args()
    os.environ.setdefault("SEQ_HOME", tempfile.mkdtemp(prefix="seq-bench-"))
    from seq.shelf.metaworld import MT10

    tasks = MT10[: args.tasks]
    print(f"{len(tasks)} tasks, metaworld-expert, {os.cpu_count()} cores, best of {args.repeats}")
    for envs in dict.fromkeys(int(part) for part in args.envs.split(",")):
        for count in [int(part) for part in args.seeds.split(",")]:
            seeds = list(range(count))
            plain, recorded = [], []
            for _ in range(args.repeats):
                plain.append(run_eval(tasks, seeds, envs, "none"))
                recorded.append(run_eval(tasks, seeds, envs, "first"))
            episodes = plain[0][0]
            best_plain = episodes / min(run[2] for run in plain)
            best_recorded = episodes / min(run[2] for run in recorded)
            plain_core_s = min(run[3] for run in plain)
            videos_core_s = min(run[3] for run in recorded) - plain_core_s
            if count >= PROTOCOL_SEEDS:
                verdict = "goal >= 0.9x"
            else:
                verdict = f"below MetaWorld's {PROTOCOL_SEEDS} a task: one episode in {count} recorded"
            print(
                f"  --envs {envs}, {count:3d} seeds a task: record none {best_plain:6.2f} episodes/s, first "
                f"{best_recorded:6.2f}  first / none: {best_recorded / best_plain:.2f}x  ({verdict}; "
                f"the eval {plain_core_s:.1f} core-s, its {recorded[0][1]} videos +{videos_core_s:.1f})"
            )
    for label, fps in render_fps(args.frames):
        print(f"  224² corner2, {label + ':':20s} {fps:6.1f} fps (one thread, with env.step)")


if __name__ == "__main__":
    main()
