"""Shared pieces of the serving tests: policies to serve, the line benchmark driven by the one
episode loop, a reference openpi-protocol server and a vla-eval benchmark over the same env."""

from __future__ import annotations

import asyncio
import http
import os
import subprocess
import sys
import textwrap
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

import seq
from seq.authoring.benchmark import spec_of
from seq.engine.episode import EpisodeRunner
from seq.record.episode import EpisodeResult
from seq.record.store import Store, WorkItem
from seq.registry.deploy import load_version, resolve

TESTS = Path(__file__).resolve().parents[1]

POLICIES = textwrap.dedent('''
    """Policies for the serving tests."""
    import threading
    import time

    import numpy as np

    import seq

    GATE = threading.Event()      # `gated` waits for it
    ENTERED = threading.Event()   # set when `gated` started computing
    INSIDE = []                   # the instances that entered `gated`


    @seq.policy(name="batched-line")
    class BatchedLine(seq.Policy):
        """The line controller, batched: lists in, one output per entry out."""

        @seq.infer(batched=True)
        def infer(self, obs, *, seed=None, instruction=None, noise: float = 0.0, chunk: int = 1):
            out = []
            for o, s in zip(obs, seed):
                step = np.clip(o[1] - o[0], -0.1, 0.1)
                rng = np.random.default_rng(s)
                actions = np.array([[step + rng.normal(0.0, noise)] for _ in range(chunk)])
                out.append(actions if chunk > 1 else actions[0])
            return out


    @seq.policy(name="dict-line")
    class DictLine(seq.Policy):
        """The line controller for a dict observation (`state`), as openpi and vla-eval send."""

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None, chunk: int = 1):
            state = obs["state"] if isinstance(obs, dict) else obs
            step = np.array([np.clip(state[1] - state[0], -0.1, 0.1)])
            return np.repeat(step[None], chunk, axis=0) if chunk > 1 else step


    @seq.policy(name="image-stats")
    class ImageStats(seq.Policy):
        """What the policy saw of an `image` observation: its sum, height and dtype size."""

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            image = obs["image"]
            return np.array([float(image.astype(np.int64).sum()), image.shape[0], image.dtype.itemsize])


    @seq.policy(name="cost-model")
    class CostModel(seq.Policy):
        """A batched call costs c + d·B seconds (sleeping, as a GPU would leave the CPU free)."""

        @seq.infer(batched=True)
        def infer(self, obs, *, seed=None, instruction=None, c_ms: float = 20.0, d_ms: float = 2.0):
            time.sleep((c_ms + d_ms * len(obs)) / 1000.0)
            return [np.zeros(7, dtype=np.float32) for _ in obs]


    @seq.policy(name="slow")
    class Slow(seq.Policy):
        """One act at a time, each taking `delay_ms` (sleeping, as a GPU would leave the CPU free)."""

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None, delay_ms: float = 300.0):
            time.sleep(delay_ms / 1000.0)
            return np.zeros(7, dtype=np.float32)


    @seq.policy(name="gated")
    class Gated(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            INSIDE.append(id(self))
            ENTERED.set()
            GATE.wait(30)
            return np.zeros(1)


    @seq.policy(name="flaky")
    class Flaky(seq.Policy):
        """Raises on the instructions `boom` and `far`; returns a string array on `strings`."""

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            if instruction in ("boom", "far"):
                raise ValueError("boom from the policy")
            if instruction == "strings":
                return np.array(["a", "b"])
            return np.zeros(1)


    class Box:
        """A gym-like Box, without gymnasium."""

        def __init__(self, low, high, shape, dtype):
            self.low = np.full(shape, low, dtype=dtype)
            self.high = np.full(shape, high, dtype=dtype)
            self.shape, self.dtype = shape, np.dtype(dtype)


    class BoxLineEnv:
        def __init__(self, goal):
            self.goal = goal
            self.action_space = Box(-0.1, 0.1, (1,), np.float32)

        def reset(self, seed=None):
            self.x = float(np.random.default_rng(seed).uniform(-1.0, 0.0))
            return np.array([self.x, self.goal]), {}

        def step(self, action):
            self.x += float(np.clip(np.asarray(action).reshape(-1)[0], -0.1, 0.1))
            return np.array([self.x, self.goal]), -abs(self.x - self.goal), False, False, {}


    @seq.benchmark(name="box-line", conditions=seq.conditions(tasks=["near"], seeds=range(3)), max_steps=25)
    class BoxLine(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return BoxLineEnv(0.5)

        @seq.check
        def check(self, env):
            return seq.Step(done=False, metrics={"x": env.x})
''')


def deploy_all(tmp_path: Path) -> None:
    """Register the toy line benchmark and controller (tests/conftest.py) and POLICIES."""
    from conftest import TOY

    (tmp_path / "line_bench.py").write_text(TOY)
    (tmp_path / "serving_policies.py").write_text(POLICIES)
    seq.deploy(tmp_path / "line_bench.py")
    seq.deploy(tmp_path / "serving_policies.py")


@contextmanager
def server_process(tmp_path: Path, policy: str = "dict-line") -> Iterator[tuple[str, subprocess.Popen]]:
    """`seq policy serve POLICY` in a process of its own (a crash fails the test, not pytest):
    yields its URL and the process. Linux only: the tests read its memory from /proc."""
    import pytest

    if not Path("/proc/self/status").exists():
        pytest.skip("reads the server's memory from /proc (Linux only)")
    deploy_all(tmp_path)
    command = [
        sys.executable,
        "-c",
        "from seq.cli import main; main()",
        "policy",
        "serve",
        policy,
        "--port",
        "0",
    ]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        first = process.stdout.readline()
        assert " at ws://" in first, first + process.stderr.read()
        yield first.split(" at ")[1].strip(), process
    finally:
        process.kill()
        process.wait(10)


def rss_mb(pid: int) -> float:
    """The resident memory of process `pid`, in MB (from /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def policy_module(name: str) -> Any:
    """The module a deployed policy was loaded from (to reach GATE and ENTERED)."""
    import sys

    return sys.modules[load_version(resolve("policy", name, Store())).__module__]


def runner(benchmark: str, handle: Any, steps_per_query: int | None = None) -> EpisodeRunner:
    cls = load_version(resolve("benchmark", benchmark, Store()))
    spec = spec_of(cls)
    instance = cls()
    if "setup" in spec.hooks:
        getattr(instance, spec.hooks["setup"])()
    return EpisodeRunner(instance, spec, handle, steps_per_query)


def run_episodes(
    benchmark: str, handle: Any, steps_per_query: int | None = None, trials: int = 1
) -> list[EpisodeResult]:
    """Every condition of the benchmark's first suite, through the one episode loop."""
    episode_runner = runner(benchmark, handle, steps_per_query)
    conditions = episode_runner.spec.suites[episode_runner.spec.default_suite]
    items = [
        WorkItem(f"{c.key}|trial={t}", i, c, t)
        for i, (c, t) in enumerate((c, t) for c in conditions for t in range(trials))
    ]
    return [episode_runner.run(item) for item in items]


def rows(results: list[EpisodeResult]) -> list[tuple]:
    """What must match between two evals: everything but the clocks."""
    return [
        (
            r.item_id,
            r.status,
            r.steps,
            r.queries,
            r.ended_by,
            {k: v for k, v in r.metrics.items() if k != "duration_s"},
        )
        for r in results
    ]


class OpenPiReferenceServer:
    """openpi's `WebsocketPolicyServer` protocol, on `openpi_client.msgpack_numpy`: metadata
    first, then an observation dict in and an action dict out; on error, the traceback as a
    text frame and a close. `GET /healthz` answers 200."""

    def __init__(self, infer: Any, metadata: dict | None = None) -> None:
        self.infer, self.metadata = infer, metadata or {}
        self.port = 0
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, daemon=True)

    async def _handler(self, websocket: Any) -> None:
        import websockets
        from openpi_client import msgpack_numpy

        packer = msgpack_numpy.Packer()
        await websocket.send(packer.pack(self.metadata))
        while True:
            try:
                obs = msgpack_numpy.unpackb(await websocket.recv())
                action = self.infer(obs)
                await websocket.send(packer.pack(action))
            except websockets.ConnectionClosed:
                break
            except Exception:
                await websocket.send(traceback.format_exc())
                await websocket.close(
                    code=1011, reason="Internal server error. Traceback included in previous frame."
                )
                break

    def _main(self) -> None:
        from websockets.asyncio.server import serve

        def health(connection: Any, request: Any) -> Any:
            return connection.respond(http.HTTPStatus.OK, "OK\n") if request.path == "/healthz" else None

        async def run() -> None:
            async with serve(
                self._handler, "127.0.0.1", 0, compression=None, max_size=None, process_request=health
            ) as server:
                self.port = server.sockets[0].getsockname()[1]
                self._stop = asyncio.Event()
                self._ready.set()
                await self._stop.wait()

        self._loop.run_until_complete(run())

    def __enter__(self) -> OpenPiReferenceServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"


def line_step(obs: np.ndarray) -> np.ndarray:
    """The line controller without noise, as a plain function."""
    return np.array([np.clip(obs[1] - obs[0], -0.1, 0.1)])


try:
    from vla_eval.benchmarks.base import StepBenchmark, StepResult
except ImportError:  # the interop extra is not installed: the tests that need it skip
    StepBenchmark = object  # type: ignore[assignment,misc]


class LineStepBenchmark(StepBenchmark):  # type: ignore[misc,valid-type]
    """The line env as a vla-eval `StepBenchmark`: a state vector in, one action out."""

    def __init__(self, goal: float = 0.5) -> None:
        super().__init__()
        self.goal = goal

    def get_tasks(self) -> list[dict]:
        return [{"name": "near", "seed": 0}, {"name": "near", "seed": 1}]

    def reset(self, task: dict) -> Any:
        self.x = float(np.random.default_rng(task["seed"]).uniform(-1.0, 0.0))
        return np.array([self.x, self.goal])

    def step(self, action: dict) -> Any:
        self.x += float(np.clip(np.asarray(action["actions"]).reshape(-1)[0], -0.1, 0.1))
        done = abs(self.x - self.goal) < 0.05
        return StepResult(obs=np.array([self.x, self.goal]), reward=0.0, done=done, info={"success": done})

    def make_obs(self, raw_obs: Any, task: dict) -> dict:
        return {"state": raw_obs, "task_description": task["name"]}

    def get_step_result(self, step_result: Any) -> dict:
        return {"success": bool(step_result.info.get("success", False))}

    def get_metadata(self) -> dict:
        return {"max_steps": 40}
