"""Serving speed, side by side in one run.

    python bench/serving.py [--episodes 20] [--steps 200] [--repeats 2]

1. Steps/s on one workload, `--episodes` × `--steps` of a small vector observation (10 float32),
   then the same with a 224×224×3 uint8 camera image beside it, for:
   - seq inline: the policy in the episode loop's own process (`InlinePolicy`);
   - seq served: `seq.serve` in a separate process, `RemotePolicy` in `seq`'s episode loop, one
     episode at a time (one stream);
   - vla-eval: its own client (`vla_eval.api.run`, the body of `vla-eval run`, without recording)
     against a vla-eval `PredictModelServer` in a separate process, images in vla-eval's default
     encoding (PNG);
   - `seq eval run --policy-url` with its default workers, one episode each and then
     `--envs-per-worker` (each worker runs its share side by side, acts sent together).
   The policy returns a constant 7-D action, so what is measured is the cost of serving itself.
   Goals, on the eval: vector >= 5x vla-eval's steps/s, image >= 3x.
2. The per-step overhead of serving against inline: 1/served - 1/inline.
   Also, for the vector workload, each CLI from launch to exit: `seq eval run` (start-up, report
   and its statistics included) against `vla-eval run`, one stream and two shards.
3. Batching: a batched policy whose call costs c + d*B ms, served with max_batch_size 8 to 8
   concurrent clients, against the 8 / (c + 8d) acts/s its cost model allows (goal >= 80%), with
   the batch-size histogram from the server's stats.
4. End to end (`--e2e-episodes 100,20`): `seq eval run --policy-url` against `vla-eval run`, each
   from launch to exit as a user types it, with its defaults (one worker per core and the record
   kept; vla-eval recording and exporting), each against its own server in a separate process, on
   the vector workload of `--steps` steps. Goals: >= 6x at 100 episodes, >= 2x at 20. seq's
   default runs each worker's episodes side by side (`seq.engine.side_by_side`); also shown,
   `--envs-per-worker 1`: one episode a worker at a time. `--only-end-to-end` runs this section
   alone.

Runs alternate between the sides so machine noise hits all alike; the best of `--repeats` counts.
Needs the interop extra (`pip install -e '.[interop]'`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import urllib.request
from pathlib import Path

ENV = textwrap.dedent('''
    """The workload's env, shared by seq's benchmark and vla-eval's (numpy only)."""
    import numpy as np

    EPISODES, STEPS = {episodes}, {steps}


    def camera(seed):
        """A rendered-looking 224x224x3 uint8 frame: smooth shading and a few flat objects, with no
        sensor noise, as a simulator renders it. Its PNG (about 17 KB) costs vla-eval about what a
        MetaWorld render at 224x224 does (46 KB)."""
        yy, xx = np.mgrid[0:224, 0:224]
        shade = 20 * np.sin(xx / 7.0) * np.cos(yy / 11.0)
        frame = np.stack([60 + xx // 4, 80 + yy // 3, 120 + (xx + yy) // 8], axis=-1) + shade[..., None]
        rng = np.random.default_rng(seed)
        for _ in range(4):
            y, x, h, w = rng.integers(20, 190, 2).tolist() + rng.integers(10, 30, 2).tolist()
            frame[y : y + h, x : x + w] = rng.integers(0, 255, 3)
        return np.clip(frame, 0, 255).astype(np.uint8)


    class WorkEnv:
        def __init__(self, image):
            self.image = image
            self.action_space = None

        def reset(self, seed=None):
            self.state = np.full(10, float(seed or 0), dtype=np.float32)
            self.frame = camera(seed or 0) if self.image else None
            return self.obs(), {{}}

        def obs(self):
            if self.frame is None:
                return {{"state": self.state}}
            return {{"state": self.state, "image": self.frame}}

        def step(self, action):
            self.state = self.state + np.float32(0.001)
            return self.obs(), 0.0, False, False, {{}}
''')

WORKLOAD = textwrap.dedent('''
    """The seq side of the workload: a benchmark over the env and a constant policy."""
    import time

    import numpy as np

    import seq
    from bench_serving_env import EPISODES, STEPS, WorkEnv

    CONDITIONS = seq.conditions(tasks=["reach"], seeds=range(EPISODES))


    @seq.benchmark(name="serving-vector", conditions=CONDITIONS, max_steps=STEPS)
    class Vector(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return WorkEnv(image=False)

        @seq.check
        def check(self, env):
            return seq.Step(done=False)


    @seq.benchmark(name="serving-image", conditions=CONDITIONS, max_steps=STEPS)
    class Image(Vector):
        @seq.reset
        def reset(self, seed, variant):
            return WorkEnv(image=True)


    @seq.policy(name="bench-constant")
    class Constant(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.zeros(7, dtype=np.float32)


    @seq.policy(name="bench-cost")
    class CostModel(seq.Policy):
        """A batched call costs c + d*B ms; it sleeps, as a GPU leaves the CPU free."""

        @seq.infer(batched=True)
        def infer(self, obs, *, seed=None, instruction=None, c_ms: float = 20.0, d_ms: float = 2.0):
            time.sleep((c_ms + d_ms * len(obs)) / 1000.0)
            return [np.zeros(7, dtype=np.float32) for _ in obs]


''')

VLA_WORKLOAD = textwrap.dedent('''
    """The vla-eval side of the workload, in a file of its own: seq's workers do not import vla-eval,
    and vla-eval's processes do not import seq."""
    import numpy as np
    from vla_eval.benchmarks.base import StepBenchmark, StepResult
    from vla_eval.model_servers.predict import PredictModelServer

    from bench_serving_env import EPISODES, STEPS, WorkEnv


    class VlaWork(StepBenchmark):
        """The same env as a vla-eval StepBenchmark."""

        def __init__(self, image: bool = False):
            super().__init__()
            self.env = WorkEnv(image)

        def get_tasks(self):
            return [{"name": "reach", "seed": seed} for seed in range(EPISODES)]

        def reset(self, task):
            return self.env.reset(task["seed"])[0]

        def step(self, action):
            return StepResult(obs=self.env.step(action["actions"])[0], reward=0.0, done=False, info={})

        def make_obs(self, raw_obs, task):
            return {**raw_obs, "task_description": task["name"]}

        def get_step_result(self, step_result):
            return {"success": False}

        def get_metadata(self):
            return {"max_steps": STEPS}


    class ConstantModel(PredictModelServer):
        def predict(self, obs, ctx):
            return {"actions": np.zeros(7, dtype=np.float32)}
''')

SEQ_SERVER = """
import sys
import seq.serving
handle = seq.serving.serve(sys.argv[1], port=0, max_batch_size=int(sys.argv[2]))
print(handle.url, flush=True)
handle.wait()
"""

VLA_SERVER = """
import sys
sys.path.insert(0, sys.argv[1])
from bench_serving_vla import ConstantModel
from vla_eval.model_servers.serve import serve
serve(ConstantModel(), host="127.0.0.1", port=int(sys.argv[2]))
"""


VLA_CONFIG = """
benchmarks:
  - benchmark: bench_serving_vla:VlaWork
    params: {{image: false}}
output_dir: {output}
"""


def end_to_end(seq_url: str, vla_url: str, workdir: Path, side_by_side: int) -> dict[str, float]:
    """Steps/s from a fresh process's launch to its exit, each CLI as a user types it: `seq eval run
    --policy-url URL --envs-per-worker K --no-save` (start-up, the eval, the report and its
    statistics), and `vla-eval run` (its defaults: recording on, exported at the end), as one
    stream and as two shards in parallel (`--shard-id i --num-shards 2`)."""
    env = {**os.environ, "PYTHONPATH": f"{workdir}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    steps = _EPISODES_STEPS[0]
    seq_cli = [str(Path(sys.executable).with_name("seq")), "eval", "run", "--benchmark", "serving-vector"]
    start = time.perf_counter()
    seq_cli += ["--policy-url", seq_url, "--envs-per-worker", str(side_by_side), "--no-save", "--json"]
    subprocess.run(seq_cli, capture_output=True, check=True, env=env)
    seq_rate = steps / (time.perf_counter() - start)
    config = workdir / "vla-eval-vector.yaml"
    config.write_text(VLA_CONFIG.format(output=workdir / "vla-eval-cli"))
    vla_cli = [str(Path(sys.executable).with_name("vla-eval")), "run", "-c", str(config), "--no-docker"]
    vla_cli += ["--server-url", vla_url]
    start = time.perf_counter()
    subprocess.run(vla_cli, capture_output=True, check=True, env=env)
    vla_rate = steps / (time.perf_counter() - start)
    start = time.perf_counter()
    shards = [
        subprocess.Popen(
            [*vla_cli, "--shard-id", str(index), "--num-shards", "2"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        for index in range(2)
    ]
    if any(shard.wait() for shard in shards):
        raise RuntimeError("a vla-eval shard failed")
    return {"seq": seq_rate, "vla-eval": vla_rate, "vla-eval shards": steps / (time.perf_counter() - start)}


_EPISODES_STEPS = [0]  # total steps of the workload, set in main


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url.replace("ws://", "http://") + "/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"no server answered at {url}")


class Servers:
    """The seq and vla-eval servers, each in its own process."""

    def __init__(self, workdir: Path) -> None:
        self.processes: list[subprocess.Popen] = []
        self.workdir = workdir

    def seq(self, policy: str, max_batch_size: int = 8) -> str:
        process = subprocess.Popen(
            [sys.executable, "-c", SEQ_SERVER, policy, str(max_batch_size)], stdout=subprocess.PIPE, text=True
        )
        self.processes.append(process)
        url = process.stdout.readline().strip()
        _wait_healthy(url)
        return url

    def vla_eval(self) -> str:
        port = _free_port()
        process = subprocess.Popen(
            [sys.executable, "-c", VLA_SERVER, str(self.workdir), str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.processes.append(process)
        url = f"ws://127.0.0.1:{port}"
        _wait_healthy(url)
        return url

    def close(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.wait(10)


def seq_steps_per_s(benchmark: str, handle: object) -> float:
    """Steps/s of seq's episode loop over every condition of `benchmark` with this policy handle."""
    from seq.authoring.benchmark import spec_of
    from seq.engine.episode import EpisodeRunner
    from seq.record.store import Store, WorkItem
    from seq.registry.deploy import load_version, resolve

    cls = load_version(resolve("benchmark", benchmark, Store()))
    spec = spec_of(cls)
    runner = EpisodeRunner(cls(), spec, handle)
    items = [WorkItem(c.key, i, c, 0) for i, c in enumerate(spec.suites[spec.default_suite])]
    start = time.perf_counter()
    steps = 0
    for item in items:
        result = runner.run(item)
        if result.status != "ok":
            raise RuntimeError(result.error)
        steps += result.steps
    return steps / (time.perf_counter() - start)


def seq_eval_steps_per_s(benchmark: str, url: str, envs: int, envs_per_worker: int = 1) -> float:
    """Steps/s of `seq eval run --policy-url URL --envs N --envs-per-worker K` (its own worker
    processes) over the eval's own wall time (workers started to last episode)."""
    import seq

    report = seq.eval.run(
        policy_url=url, benchmark=benchmark, envs=envs, envs_per_worker=envs_per_worker, save=False
    )
    if any(episode.status != "ok" for episode in report.episodes):
        raise RuntimeError(f"seq episodes failed: {[e.error for e in report.episodes if e.error][:1]}")
    return sum(episode.steps for episode in report.episodes) / report.cost["wall_s"]


def vla_eval_steps_per_s(url: str, image: bool, workdir: Path) -> float:
    """Steps/s of vla-eval's own client (`vla_eval.api.run`) against its model server."""
    import vla_eval.api

    config = {
        "benchmarks": [{"benchmark": "bench_serving_vla:VlaWork", "params": {"image": image}}],
        "output_dir": str(workdir / "vla-eval-results"),
    }
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        (result,) = vla_eval.api.run(config, server_url=url, no_save=True, docker=False)
    seconds = time.perf_counter() - start
    steps = sum(e["steps"] for task in result["tasks"] for e in task["episodes"])
    if result.get("num_errors"):
        raise RuntimeError(f"vla-eval episodes failed: {result}")
    return steps / seconds


def batching(url: str, clients: int, acts: int, c_ms: float, d_ms: float) -> dict:
    """`clients` threads acting in lockstep on the cost-model policy; acts/s against the model."""
    import numpy as np

    from seq.serving import RemotePolicy

    params = {"c_ms": c_ms, "d_ms": d_ms}
    remotes = [RemotePolicy(url, parameters=params) for _ in range(clients)]
    for remote in remotes:
        remote.begin_episode(None)
        remote.act(np.zeros(10), seed=0, instruction="warm-up")
    barrier = threading.Barrier(clients + 1)

    def work(remote: RemotePolicy) -> None:
        barrier.wait()
        for i in range(acts):
            remote.act(np.zeros(10, dtype=np.float32), seed=i, instruction="reach")

    threads = [threading.Thread(target=work, args=(r,)) for r in remotes]
    for thread in threads:
        thread.start()
    with urllib.request.urlopen(url.replace("ws://", "http://") + "/stats") as reply:
        before = json.loads(reply.read())
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - start
    with urllib.request.urlopen(url.replace("ws://", "http://") + "/stats") as reply:
        after = json.loads(reply.read())
    for remote in remotes:
        remote.close()
    histogram = {
        size: count - before["batch_size_histogram"].get(size, 0)
        for size, count in after["batch_size_histogram"].items()
        if count - before["batch_size_histogram"].get(size, 0)
    }
    achieved = clients * acts / seconds
    allowed = clients / ((c_ms + clients * d_ms) / 1000.0)
    return {"achieved": achieved, "allowed": allowed, "histogram": histogram}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--c-ms", type=float, default=20.0)
    parser.add_argument("--d-ms", type=float, default=2.0)
    parser.add_argument("--skip-image", action="store_true", help="Only the vector workload and batching.")
    parser.add_argument("--e2e-episodes", default="100,20", help="Section 4's eval sizes ('' skips it).")
    parser.add_argument("--only-end-to-end", action="store_true", help="Run section 4 alone.")
    args = parser.parse_args()
    sizes = [int(n) for n in args.e2e_episodes.split(",") if n.strip()]
    if args.only_end_to_end:
        print_end_to_end(end_to_end_section(sizes, args.steps, args.repeats), args.steps, args.repeats)
        return

    workdir = Path(tempfile.mkdtemp(prefix="seq-bench-serving-"))
    os.environ["SEQ_HOME"] = str(workdir / "seq-home")  # the servers inherit it
    (workdir / "bench_serving_env.py").write_text(ENV.format(episodes=args.episodes, steps=args.steps))
    (workdir / "bench_serving_workload.py").write_text(WORKLOAD)
    (workdir / "bench_serving_vla.py").write_text(VLA_WORKLOAD)
    sys.path.insert(0, str(workdir))
    import seq
    from seq.record.store import Store
    from seq.registry.deploy import load_version, resolve
    from seq.serving import RemotePolicy
    from seq.serving.inline import InlinePolicy

    seq.deploy(workdir / "bench_serving_workload.py")
    workers = len(os.sched_getaffinity(0))  # seq's default --envs
    side_by_side = -(-args.episodes // workers)  # --envs-per-worker: each worker runs its share at once
    servers = Servers(workdir)
    try:
        seq_url = servers.seq("bench-constant")
        vla_url = servers.vla_eval()
        constant = load_version(resolve("policy", "bench-constant", Store()))
        results: dict[str, dict[str, float]] = {}
        workloads = [("vector", "serving-vector")] + ([] if args.skip_image else [("image", "serving-image")])
        for workload, benchmark in workloads:
            image = workload == "image"
            best = {"inline": 0.0, "served": 0.0, "vla-eval": 0.0, "parallel": 0.0, "side by side": 0.0}
            for _ in range(args.repeats):
                best["parallel"] = max(best["parallel"], seq_eval_steps_per_s(benchmark, seq_url, workers))
                best["side by side"] = max(
                    best["side by side"], seq_eval_steps_per_s(benchmark, seq_url, workers, side_by_side)
                )
                best["inline"] = max(best["inline"], seq_steps_per_s(benchmark, InlinePolicy(constant(), {})))
                with RemotePolicy(seq_url) as remote:
                    best["served"] = max(best["served"], seq_steps_per_s(benchmark, remote))
                best["vla-eval"] = max(best["vla-eval"], vla_eval_steps_per_s(vla_url, image, workdir))
            results[workload] = best
        _EPISODES_STEPS[0] = args.episodes * args.steps
        runs = [end_to_end(seq_url, vla_url, workdir, side_by_side) for _ in range(args.repeats)]
        fresh = {side: max(run[side] for run in runs) for side in runs[0]}
        cost_url = servers.seq("bench-cost", max_batch_size=8)
        clients, d_total = 8, args.c_ms + 8 * args.d_ms
        acts = max(20, int(3000 / d_total))
        batch = max(
            (batching(cost_url, clients, acts, args.c_ms, args.d_ms) for _ in range(args.repeats)),
            key=lambda run: run["achieved"],
        )
    finally:
        servers.close()

    workload_text = f"{args.episodes} episodes x {args.steps} steps, constant 7-D action"
    print(f"\nserving: {workload_text}, best of {args.repeats}")
    header = ("seq inline", "seq served", "vla-eval", "served/vla")
    print(f"{'workload':<30}" + "".join(f"{h:>12}" for h in header) + f"{'overhead':>14}")
    goals = {"vector": 5.0, "image": 3.0}
    labels = {"vector": "vector (10 float32)", "image": "+ image 224x224x3 uint8"}
    for workload, best in results.items():
        ratio = best["served"] / best["vla-eval"]
        overhead_us = (1 / best["served"] - 1 / best["inline"]) * 1e6
        print(
            f"{labels[workload]:<30}{best['inline']:>10,.0f}/s{best['served']:>10,.0f}/s"
            f"{best['vla-eval']:>10,.0f}/s{ratio:>11.1f}x{overhead_us:>10,.0f} us/step"
        )
    print(
        "  one stream each: `seq served` is one episode at a time over one connection; vla-eval is its own"
        "\n  client (vla_eval.api.run = `vla-eval run`, no recording), PNG images (its default)"
    )
    print(
        "\n`seq eval run --policy-url` (the eval's wall time, workers' start-up included), default workers:"
    )
    for workload, best in results.items():
        ratio = best["side by side"] / best["vla-eval"]
        print(
            f"  {labels[workload]}: {workers} workers {best['parallel']:,.0f}/s = "
            f"{best['parallel'] / best['vla-eval']:.1f}x vla-eval; --envs-per-worker {side_by_side} "
            f"{best['side by side']:,.0f}/s = {ratio:.1f}x"
            + (f"   (goal >= {goals[workload]:g}x: {'met' if ratio >= goals[workload] else 'NOT met'})")
        )
    print(
        f"vector, each CLI from launch to exit: `seq eval run --envs-per-worker {side_by_side}` "
        f"{fresh['seq']:,.0f}/s (start-up, report and its statistics included); `vla-eval run` "
        f"{fresh['vla-eval']:,.0f}/s = {fresh['seq'] / fresh['vla-eval']:.1f}x, two shards in parallel "
        f"{fresh['vla-eval shards']:,.0f}/s = {fresh['seq'] / fresh['vla-eval shards']:.1f}x"
    )
    share = batch["achieved"] / batch["allowed"]
    print(
        f"\nbatching: c={args.c_ms:g} ms + d={args.d_ms:g} ms x B, max_batch_size 8, {clients} clients: "
        f"{batch['achieved']:.1f} acts/s of {batch['allowed']:.1f} allowed = {share:.0%} "
        f"(goal >= 80%: {'met' if share >= 0.8 else 'NOT met'})"
    )
    print(f"  batch sizes (size: batches): {batch['histogram']}")
    if sizes:
        print_end_to_end(end_to_end_section(sizes, args.steps, args.repeats), args.steps, args.repeats)


E2E_GOALS = {100: 6.0, 20: 2.0}
E2E_VLA_CONFIG = """
benchmarks:
  - benchmark: bench_serving_vla:VlaWork
    params: {{image: false}}
    max_tasks: {episodes}
output_dir: {output}
"""


def _e2e_workdir(episodes: int, steps: int) -> tuple[Path, dict[str, str]]:
    """A workspace of its own for section 4 (the others' modules hold other episode counts): the
    workload's files, its SEQ_HOME, and the environment every process of the section runs with."""
    workdir = Path(tempfile.mkdtemp(prefix="seq-bench-e2e-"))
    (workdir / "bench_serving_env.py").write_text(ENV.format(episodes=episodes, steps=steps))
    (workdir / "bench_serving_workload.py").write_text(WORKLOAD)
    (workdir / "bench_serving_vla.py").write_text(VLA_WORKLOAD)
    pythonpath = os.pathsep.join(p for p in (str(workdir), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "SEQ_HOME": str(workdir / "seq-home"), "PYTHONPATH": pythonpath}
    deploy = f"import seq; seq.deploy({str(workdir / 'bench_serving_workload.py')!r})"
    subprocess.run([sys.executable, "-c", deploy], check=True, env=env, capture_output=True)
    return workdir, env


def _launch_servers(workdir: Path, env: dict[str, str]) -> tuple[list[subprocess.Popen], str, str]:
    """seq's server (`seq.serve`, the constant policy) and vla-eval's, each in a process of its own."""
    seq_server = subprocess.Popen(
        [sys.executable, "-c", SEQ_SERVER, "bench-constant", "8"], stdout=subprocess.PIPE, text=True, env=env
    )
    port = _free_port()
    vla_server = subprocess.Popen(
        [sys.executable, "-c", VLA_SERVER, str(workdir), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    seq_url, vla_url = seq_server.stdout.readline().strip(), f"ws://127.0.0.1:{port}"
    _wait_healthy(seq_url)
    _wait_healthy(vla_url)
    return [seq_server, vla_server], seq_url, vla_url


def _timed(command: list[str], env: dict[str, str]) -> float:
    """Seconds from launching `command` to its exit (which must be 0)."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{' '.join(command[:4])} … failed:\n{done.stderr[-2000:]}")
    return seconds


def end_to_end_section(sizes: list[int], steps: int, repeats: int) -> dict[int, dict[str, float]]:
    """For each eval size, the best of `repeats` seconds from launch to exit of `seq eval run
    --policy-url` (defaults; then with --envs-per-worker) and of `vla-eval run` (defaults)."""
    workdir, env = _e2e_workdir(max(sizes), steps)
    processes, seq_url, vla_url = _launch_servers(workdir, env)
    seq_bin, vla_bin = Path(sys.executable).with_name("seq"), Path(sys.executable).with_name("vla-eval")
    results: dict[int, dict[str, float]] = {}
    try:
        for episodes in sizes:
            config = workdir / f"vla-eval-{episodes}.yaml"
            config.write_text(E2E_VLA_CONFIG.format(episodes=episodes, output=workdir / f"vla-{episodes}"))
            seq_cli = [str(seq_bin), "eval", "run", "--benchmark", "serving-vector", "--policy-url", seq_url]
            seq_cli += ["--seeds", f"0-{episodes - 1}"]
            one_at_a_time = [*seq_cli, "--envs-per-worker", "1"]
            plan = subprocess.run([*seq_cli, "--dry-run", "--json"], capture_output=True, text=True, env=env)
            side_by_side = json.loads(plan.stdout)["envs_per_worker"]
            vla_cli = [str(vla_bin), "run", "-c", str(config), "--no-docker", "--server-url", vla_url]
            best = {"seq": math.inf, "seq one at a time": math.inf, "vla-eval": math.inf}
            for _ in range(repeats):  # alternating, so the machine's noise hits each side alike
                best["seq"] = min(best["seq"], _timed(seq_cli, env))
                best["seq one at a time"] = min(best["seq one at a time"], _timed(one_at_a_time, env))
                best["vla-eval"] = min(best["vla-eval"], _timed(vla_cli, env))
            results[episodes] = {**best, "side by side": side_by_side}
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(10)
    return results


def print_end_to_end(results: dict[int, dict[str, float]], steps: int, repeats: int) -> None:
    workers = len(os.sched_getaffinity(0))
    print(
        f"\nend to end, each CLI from launch to exit, {steps}-step episodes of the vector workload, "
        f"best of {repeats}, {workers} cores:"
    )
    for episodes, best in results.items():
        ratio = best["vla-eval"] / best["seq"]
        goal = E2E_GOALS.get(episodes)
        verdict = f"   (goal >= {goal:g}x: {'met' if ratio >= goal else 'NOT met'})" if goal else ""
        print(
            f"  {episodes:>4} episodes: `seq eval run --policy-url` {best['seq']:6.2f} s, `vla-eval run` "
            f"{best['vla-eval']:6.2f} s = {ratio:.1f}x{verdict}"
        )
        alone = best["vla-eval"] / best["seq one at a time"]
        print(f"{'':17}(its default: up to {best['side by side']:.0f} episodes side by side a worker)")
        print(f"{'':17}with --envs-per-worker 1: {best['seq one at a time']:6.2f} s = {alone:.1f}x")


if __name__ == "__main__":
    main()
