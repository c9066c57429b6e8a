"""A record for the console's tests: finished evals run for real (the toy benchmark), and an eval
that is running (its runner is this test process, holding its lease) with recorded episodes:
an mp4 and a trajectory each, written through the record and capture APIs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

import seq
from seq.authoring.conditions import Condition
from seq.capture.mp4 import Mp4Writer
from seq.capture.trajectory import TrajectoryWriter
from seq.record.arguments import EvalArguments
from seq.record.lease import Lease
from seq.record.manifest import Manifest, Pinned, SeqBuild
from seq.record.paths import seq_home
from seq.record.store import RUNNING, Store, WorkItem

RUNNING_ID = "ev-running0001"


@dataclass
class ConsoleRecord:
    arms: str  # a finished eval with two arms
    first: str  # two finished single-arm evals, compared
    second: str
    running: str
    lease: Lease  # held by this process: the running eval's runner

    def close(self) -> None:
        self.lease.release()


def write_video(path: Path, frames: int = 12) -> None:
    writer = Mp4Writer(path, fps=10, width=64, height=48)
    for index in range(frames):
        pixels = np.zeros((48, 64, 3), np.uint8)
        pixels[:, : 4 + index * 5] = (40, 160, 90)
        writer.write(pixels)
    writer.close()


def write_trajectory(directory: Path, item: WorkItem, steps: int) -> str:
    writer = TrajectoryWriter(directory)
    writer.begin(item, None, np.array([0.0, 0.5]))
    for step in range(steps):
        action = np.array([0.1 * step, -0.05 * step])
        writer.step(None, np.array([0.1 * step, 0.5]), action, reward=-0.5 + 0.04 * step, act_seed=step)
    return writer.end(item.result(status="ok", steps=steps, ended_by="check"))["trajectory"]


def running_eval(store: Store, done: int = 3, total: int = 8) -> Lease:
    """An eval of `total` items with `done` episodes written, each with a video and trajectory."""
    (benchmark,) = store.versions("benchmark", "line")
    (policy,) = store.versions("policy", "line-controller")
    manifest = Manifest(
        seq=SeqBuild(seq.__version__),
        benchmark=Pinned(benchmark.name, benchmark.version, benchmark.sha256),
        policy=Pinned(policy.name, policy.version, policy.sha256),
        seeds=list(range(total // 2)),
    )
    items = [
        WorkItem(f"{task}|seed={seed}", index * (total // 2) + seed, Condition(task, seed, suite=suite), 0)
        for index, (task, suite) in enumerate([("near", "easy"), ("far", "hard")])
        for seed in range(total // 2)
    ]
    store.create_eval(
        RUNNING_ID, policy, benchmark, EvalArguments(benchmark=benchmark.label), manifest, items
    )
    store.set_eval_status(RUNNING_ID, RUNNING)
    lease = Lease.acquire(store.path, RUNNING_ID)
    files = seq_home() / "artifacts" / RUNNING_ID
    files.mkdir(parents=True, exist_ok=True)
    for index, item in enumerate(sorted(items, key=lambda i: i.ordinal)[:done]):
        video = files / f"{index}.mp4"
        write_video(video)
        steps = 10 + index
        success = float(index % 2 == 0)
        result = item.result(
            status="ok",
            metrics={"success": success, "distance": 0.3 * index, "steps": steps, "return": -1.0 * index},
            steps=steps,
            ended_by="check",
            duration_s=0.1,
            artifacts={"video": str(video), "trajectory": write_trajectory(files, item, steps)},
        )
        store.write_episode(RUNNING_ID, result)
    return lease


def build_record() -> ConsoleRecord:
    """Deploy the toy (`toy_file` must be deployed by the caller), run three small evals, and add
    a running one."""
    arms = seq.eval.run(
        "line-controller", benchmark="line", vs="line-controller", vs_params={"noise": "0.3"}, envs=2
    )
    first = seq.eval.run("line-controller", benchmark="line", envs=2)
    second = seq.eval.run("line-controller", benchmark="line", envs=2, params={"noise": "0.3"})
    store = Store()
    lease = running_eval(store)
    store.close()
    return ConsoleRecord(arms.eval_id, first.eval_id, second.eval_id, RUNNING_ID, lease)
