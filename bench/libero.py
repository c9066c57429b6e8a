"""LIBERO: seq's loop against LIBERO's own, side by side in one run.

    python bench/libero.py [--episodes 2] [--steps 20] [--task 0]
    python bench/libero.py --served 10 [--steps 40] [--repeats 1]

In the `libero` image's Python (built first if it is not), one `libero_spatial` task, the same
actions in each:

1. `raw`: LIBERO's own `OffScreenRenderEnv`, both cameras at 256², driven as openpi's and
   vla-eval's loops drive it (seeded once; per episode `reset`, `set_init_state`, 10 wait steps);
2. `seq`: `seq.shelf.libero_env.LiberoEnv`, the published observation (`obs_mode=pixels`), its
   images checked identical to `raw`'s at every step;
3. `fast`: `seq` with `fast_render` (no multisampling, shadows or reflections): its steps/s, and
   its images' PSNR against `seq`'s faithful ones;
4. `state`: the same without cameras (`obs_mode=state`, what `libero-scripted` runs on);
5. where one 256² frame's time goes in `raw` (scene update, drawing, reading the pixels back).

`--served N` instead: a served image policy end to end, `seq eval run --policy-url` against
`vla-eval run` on the same server program and the same N libero_spatial episodes (N/10 init
states of each task, `--steps` policy steps each), side by side in one run, each timed from
launch to exit as a user types it, with its defaults. The server is a vla-eval `PredictModelServer`
that reads vla-eval's LIBERO layout (both 256² cameras and the state) and batches: each batch
sleeps `--batch-ms` (40) + `--per-obs-ms` (2) per observation, a stand-in for a GPU model, which
leaves the CPU free. seq runs it through the built-in `libero-to-vla-eval` adapter. Each run gets
a fresh server; the runs alternate between the sides, `--repeats` times, the best of each kept.

Per setting: env steps/s over the policy's steps, and seconds from an episode's start to its
first observation; wall time and the process's CPU time (software OpenGL draws on several
threads, so CPU can exceed wall). Each setting runs in a process of its own (robosuite 1.4 keeps
one OpenGL context current per thread and frees by number in whichever is current, so two envs in
one process need seq's care, which the raw env lacks), `--repeats` times in turns, best kept.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

LABELS = ("raw", "seq", "fast", "state")
SCRIPT = r"""
import json, sys, time
import numpy as np
from seq.shelf.libero_env import LiberoEnv, configure_libero, WAIT_STEPS, DUMMY_ACTION
from seq.shelf.libero_tasks import SUITES

label, frames_path = sys.argv[1], sys.argv[5]
episodes, steps, task = (int(value) for value in sys.argv[2:5])
configure_libero()
from libero.libero import benchmark
from libero.libero.envs import OffScreenRenderEnv

suite = benchmark.get_benchmark_dict()["libero_spatial"]()
name = SUITES["libero_spatial"][task][0]
index = suite.get_task_names().index(name)
init = suite.get_task_init_states(index)
actions = np.random.default_rng(0).uniform(-1, 1, (steps, 7)) * [0.3, 0.3, 0.3, 0, 0, 0, 1]


def clocks():
    return time.perf_counter(), time.process_time()


def since(start):
    wall, cpu = clocks()
    return wall - start[0], cpu - start[1]


if label == "raw":  # LIBERO's own env, driven as the published loop drives it
    def make():
        env = OffScreenRenderEnv(
            bddl_file_name=suite.get_task_bddl_file_path(index), camera_heights=256, camera_widths=256
        )
        env.seed(7)
        return env

    def reset(env, episode):
        env.reset()
        env.set_init_state(init[episode])
        for _ in range(WAIT_STEPS):
            obs, _, _, _ = env.step(list(DUMMY_ACTION))
        return obs["agentview_image"][::-1, ::-1], obs["robot0_eye_in_hand_image"][::-1, ::-1]

    def step(env, action):
        obs, _, _, _ = env.step(action)
        return obs["agentview_image"][::-1, ::-1], obs["robot0_eye_in_hand_image"][::-1, ::-1]
else:
    def make():
        mode = "state" if label == "state" else "pixels"
        return LiberoEnv("libero_spatial", name, obs=mode, fast=label == "fast")

    def reset(env, episode):
        obs, _ = env.reset(episode)
        return obs.get("agentview_image"), obs.get("wrist_image")

    def step(env, action):
        obs = env.step(action)[0]
        return obs.get("agentview_image"), obs.get("wrist_image")

out = {"first_obs": [], "step": [0.0, 0.0]}
start = clocks()
env = make()
out["build"] = since(start)
frames = []
for episode in range(episodes):
    start = clocks()
    frames.append(reset(env, episode))
    out["first_obs"].append(since(start))
    start = clocks()
    for action in actions:
        frames.append(step(env, action))
    wall, cpu = since(start)
    out["step"][0] += wall
    out["step"][1] += cpu
if label != "state":
    np.savez(frames_path, *[image for pair in frames for image in pair])
if label == "raw":  # where one frame's time goes: scene, drawing, reading back
    import mujoco

    context = env.env.sim._render_context_offscreen
    camera = env.env.sim.model.camera_name2id("agentview")
    parts = {"update_scene": 0.0, "draw": 0.0, "read_pixels": 0.0}
    for _ in range(10):
        t0 = time.perf_counter()
        context.cam.type, context.cam.fixedcamid = mujoco.mjtCamera.mjCAMERA_FIXED, camera
        mujoco.mjv_updateScene(context.model._model, context.data._data, context.vopt, context.pert,
                               context.cam, mujoco.mjtCatBit.mjCAT_ALL, context.scn)
        t1 = time.perf_counter()
        mujoco.mjr_render(mujoco.MjrRect(0, 0, 256, 256), context.scn, context.con)
        t2 = time.perf_counter()
        context.read_pixels(256, 256)
        t3 = time.perf_counter()
        parts["update_scene"] += (t1 - t0) / 10
        parts["draw"] += (t2 - t1) / 10
        parts["read_pixels"] += (t3 - t2) / 10
    out["frame_s"] = parts
env.close()
print(json.dumps(out))
"""


SERVER = r"""
import sys, time
import numpy as np
from vla_eval.model_servers.predict import PredictModelServer
from vla_eval.model_servers.serve import serve

BATCH_S, PER_OBS_S = float(sys.argv[2]) / 1000, float(sys.argv[3]) / 1000


class BatchingStandIn(PredictModelServer):
    # A GPU model's cost: a batch takes BATCH_S + PER_OBS_S per observation, the CPU left free.
    def predict_batch(self, obs_batch, ctx_batch):
        for obs in obs_batch:  # what a vla-eval LIBERO model reads
            assert obs["images"]["agentview"].shape == obs["images"]["wrist"].shape == (256, 256, 3)
            assert obs["states"].shape == (8,)
        time.sleep(BATCH_S + PER_OBS_S * len(obs_batch))
        still = np.array([0, 0, 0, 0, 0, 0, -1], dtype=np.float32)
        return [{"actions": still} for _ in obs_batch]


serve(BatchingStandIn(max_batch_size=8, max_wait_time=0.005), host="127.0.0.1", port=int(sys.argv[1]))
"""
TORCH_STAND_IN = "def load(*args, **kwargs):\n    raise RuntimeError('no torch here')\n"


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _serve(python: str, args: argparse.Namespace) -> tuple[subprocess.Popen, str]:
    """A fresh batching stand-in server, once it listens; its URL."""
    import socket
    import time

    port = _free_port()
    server = subprocess.Popen(
        [python, "-c", SERVER, str(port), str(args.batch_ms), str(args.per_obs_ms)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while True:
        if server.poll() is not None:
            sys.exit("the stand-in server exited")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return server, f"ws://127.0.0.1:{port}"
        time.sleep(0.2)


def served(args: argparse.Namespace) -> None:
    """`seq eval run --policy-url` against `vla-eval run`, end to end (module doc)."""
    import os
    import time

    from seq.isolation.images import ensure_image
    from seq.shelf.libero import IMAGE

    image = ensure_image(
        IMAGE.uv_pip_install("vla-eval==0.8.0"), log=lambda line: print(line, file=sys.stderr)
    )
    python = str(image.python)
    if args.served % 10:
        sys.exit("--served: a multiple of 10 episodes (the same init states of each of the 10 tasks)")
    per_task = args.served // 10
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "torch").mkdir()
        (work / "torch" / "__init__.py").write_text(TORCH_STAND_IN)
        source = str(Path(__file__).resolve().parents[1] / "src")
        # a record of its own, and the images already built (as a user's second eval finds them)
        images = os.environ.get("SEQ_IMAGES") or str(image.path.parent)
        env = {**os.environ, "SEQ_HOME": str(work / "seq-home"), "SEQ_IMAGES": images, "PYTHONPATH": source}
        for repeat in range(args.repeats):
            for side in ("vla-eval", "seq") if repeat % 2 == 0 else ("seq", "vla-eval"):
                server, url = _serve(python, args)
                try:
                    if side == "vla-eval":
                        config = work / f"vla-{repeat}.yaml"
                        config.write_text(
                            "benchmarks:\n"
                            "  - benchmark: vla_eval.benchmarks.libero.benchmark:LIBEROBenchmark\n"
                            "    params: {suite: libero_spatial, send_wrist_image: true, send_state: true}\n"
                            f"    episodes_per_task: {per_task}\n"
                            f"    max_steps: {args.steps}\n"
                            f"output_dir: {work / f'vla-out-{repeat}'}\n"
                        )
                        command = [str(image.path / "bin" / "vla-eval"), "run", "-c", str(config)]
                        command += ["--no-docker", "--server-url", url]
                        side_env = {**env, "PYTHONPATH": str(work)}
                    else:
                        command = [sys.executable, "-c", "from seq.cli import main; main()", "eval", "run"]
                        command += ["--benchmark", "libero"]
                        command += ["--policy-url", url, "--policy-protocol", "vla-eval"]
                        command += ["--adapter", "libero-to-vla-eval", "--suite", "libero_spatial"]
                        command += ["--seeds", f"0-{per_task - 1}", "--max-steps", str(args.steps)]
                        side_env = env
                    start = time.perf_counter()
                    done = subprocess.run(command, capture_output=True, text=True, env=side_env, cwd=work)
                    wall = time.perf_counter() - start
                finally:
                    server.terminate()
                    server.wait(timeout=30)
                if done.returncode != 0:
                    sys.exit(f"{side} failed:\n{(done.stdout + done.stderr)[-3000:]}")
                print(f"  {side}: {wall:.1f} s (run {repeat + 1})", file=sys.stderr)
                best[side] = min(best.get(side, wall), wall)
    steps = args.served * args.steps
    print(
        f"served image policy, libero_spatial: {args.served} episodes x {args.steps} steps, both 256² "
        f"cameras, a batching server ({args.batch_ms:g} ms a batch + {args.per_obs_ms:g} ms an observation)"
    )
    for side in ("vla-eval", "seq"):
        print(f"{side:10}{best[side]:9.1f} s{steps / best[side]:9.2f} steps/s (launch to exit)")
    print(f"seq / vla-eval, end to end: {best['vla-eval'] / best['seq']:.2f}x")


def run(python: str, label: str, args: argparse.Namespace, frames: Path) -> dict:
    command = [python, "-c", SCRIPT, label, str(args.episodes), str(args.steps), str(args.task), str(frames)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def _psnr(faithful: np.ndarray, other: np.ndarray) -> float:
    error = np.mean((faithful.astype(np.float64) - other.astype(np.float64)) ** 2)
    return float("inf") if error == 0 else float(10 * np.log10(255.0**2 / error))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--task", type=int, default=0, help="libero_spatial's task index")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each setting (best kept)")
    parser.add_argument("--served", type=int, default=0, help="episodes of the served end-to-end run")
    parser.add_argument("--batch-ms", type=float, default=40.0, help="the stand-in's cost of a batch")
    parser.add_argument("--per-obs-ms", type=float, default=2.0, help="its cost per observation")
    args = parser.parse_args()
    if args.served:
        served(args)
        return
    from seq.isolation.images import ensure_image
    from seq.shelf.libero import IMAGE

    python = str(ensure_image(IMAGE, log=lambda line: print(line, file=sys.stderr)).python)
    best: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeats):  # one process a run, settings in turns: best of each
            order = LABELS if repeat % 2 == 0 else LABELS[::-1]
            for label in order:
                result = run(python, label, args, Path(folder) / f"{label}-{repeat}.npz")
                if label not in best or result["step"][0] < best[label]["step"][0]:
                    best[label] = result
        with np.load(Path(folder) / "raw-0.npz") as raw, np.load(Path(folder) / "seq-0.npz") as ours:
            same = [np.array_equal(raw[key], ours[key]) for key in raw.files]
            identical = raw.files == ours.files and all(same)
            with np.load(Path(folder) / "fast-0.npz") as fast:
                psnr = [_psnr(ours[key], fast[key]) for key in ours.files]
    results = {**best, "identical_pixels": identical, "fast_psnr": psnr}
    steps = args.episodes * args.steps
    print(f"libero_spatial task {args.task}, {args.episodes} episodes × {args.steps} steps, 256² cameras")
    print(f"{'':8}{'build s':>10}{'first obs s (wall/cpu)':>26}{'steps/s wall':>14}{'steps/s cpu':>13}")
    for label in LABELS:
        setting = results[label]
        first = np.mean(setting["first_obs"], axis=0)
        wall, cpu = setting["step"]
        print(
            f"{label:8}{setting['build'][0]:10.2f}{first[0]:14.2f} / {first[1]:9.2f}"
            f"{steps / wall:14.2f}{steps / cpu:13.2f}"
        )
    raw, ours = results["raw"], results["seq"]
    print(f"seq / raw, env steps/s (wall): {raw['step'][0] / ours['step'][0]:.2f}")
    first_raw = sum(wall for wall, _ in raw["first_obs"]) / sum(wall for wall, _ in ours["first_obs"])
    print(f"seq / raw, episodes' start to first observation (wall): {first_raw:.2f}× faster")
    print(f"pixels identical at every step: {results['identical_pixels']}")
    psnr = results["fast_psnr"]
    fast = results["fast"]["step"][0]
    print(
        f"fast_render: {ours['step'][0] / fast:.2f}× seq's steps/s (wall), PSNR against the faithful images "
        f"{np.mean(psnr):.1f} dB on average, {np.min(psnr):.1f} dB at worst ({len(psnr)} images)"
    )
    parts = raw["frame_s"]
    split = ", ".join(f"{key} {value * 1000:.1f} ms" for key, value in parts.items())
    print(f"one 256² agentview frame in raw: {split}")


if __name__ == "__main__":
    main()
