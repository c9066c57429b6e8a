"""Pieces of the peer-protocol tests: policies that keep state across an episode or declare their
conventions, a vla-eval benchmark that declares its specs, and a vla-eval model server built from
vla-eval's own classes whose `episode_start` needs the task's suite (as CogACT's does)."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
from serving_helpers import LineStepBenchmark, deploy_all, line_step

import seq

POLICIES = textwrap.dedent('''
    """Policies of the peer tests."""
    import numpy as np

    import seq


    @seq.policy(name="begin-line")
    class BeginLine(seq.Policy):
        """The line controller for a dict or array observation; it refuses to act before an
        episode began, and remembers what each `@seq.begin` was told."""

        def __init__(self):
            self.begun = []
            self.acts = None

        @seq.begin
        def begin(self, *, task=None, suite=None, instruction=None, seed=None):
            self.begun.append({"task": task, "suite": suite, "instruction": instruction, "seed": seed})
            self.acts = 0

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            if self.acts is None:
                raise RuntimeError("infer before any episode began")
            self.acts += 1
            state = obs["state"] if isinstance(obs, dict) else obs
            return np.array([np.clip(state[1] - state[0], -0.1, 0.1)])


    @seq.policy(name="task-only")
    class TaskOnly(seq.Policy):
        """A `@seq.begin` that declares only the task: it is called with that keyword alone."""

        tasks = []

        @seq.begin
        def begin(self, task):
            self.tasks.append(task)

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.zeros(1)


    @seq.policy(name="refuses-far")
    class RefusesFar(seq.Policy):
        """Its `@seq.begin` raises for the task `far`."""

        @seq.begin
        def begin(self, *, task=None):
            if task == "far":
                raise ValueError("no far episodes here")

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            state = obs["state"] if isinstance(obs, dict) else obs
            return np.array([np.clip(state[1] - state[0], -0.1, 0.1)])


    @seq.policy(name="spec-line")
    class SpecLine(seq.Policy):
        """The line controller, declaring its conventions in vla-eval's terms."""

        conventions = {
            "action": {"actions": {"dims": 1, "format": "delta_x", "range": (-0.1, 0.1)}},
            "observation": {"state": {"dims": 2, "format": "x_goal"}},
        }

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None, chunk: int = 1):
            state = obs["state"] if isinstance(obs, dict) else obs
            step = np.array([np.clip(state[1] - state[0], -0.1, 0.1)])
            return np.repeat(step[None], chunk, axis=0)


    class CameraEnv:
        """A seeded 16x12 RGB frame; the policy's action is what it saw: [sum, height, itemsize]."""

        def __init__(self):
            self.action_space = None

        def reset(self, seed=None):
            self.image = np.random.default_rng(seed).integers(0, 255, (16, 12, 3), dtype=np.uint8)
            self.seen = None
            return {"image": self.image}, {}

        def step(self, action):
            self.seen = np.asarray(action, dtype=np.float64).reshape(-1)
            return {"image": self.image}, 0.0, False, False, {}


    @seq.benchmark(name="camera", conditions=seq.conditions(tasks=["look"], seeds=range(2)), max_steps=2)
    class Camera(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return CameraEnv()

        @seq.check
        def check(self, env):
            exact = env.seen is not None and env.seen[0] == float(env.image.astype(np.int64).sum())
            return seq.Step(done=False, metrics={"exact": float(exact)})


    @seq.policy(name="complex-out")
    class ComplexOut(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.array([1 + 2j])
''')


def deploy_peers(tmp_path: Path) -> None:
    """The serving tests' benchmark and policies, and the peer tests' policies."""
    deploy_all(tmp_path)
    (tmp_path / "peer_policies.py").write_text(POLICIES)
    seq.deploy(tmp_path / "peer_policies.py")


class SpecLineBenchmark(LineStepBenchmark):
    """The line benchmark declaring vla-eval specs that `spec-line`'s conventions satisfy."""

    def get_action_spec(self) -> dict:
        from vla_eval.specs import DimSpec

        return {"actions": DimSpec("actions", 1, "delta_x", (-0.1, 0.1))}

    def get_observation_spec(self) -> dict:
        from vla_eval.specs import DimSpec

        return {
            "state": DimSpec("state", 2, "x_goal"),
            "task_description": DimSpec("language", 0, "language"),
        }


def suite_server(chunk_size_map: dict[str, int], answer_key: str = "actions") -> Any:
    """A vla-eval `PredictModelServer` whose `on_episode_start` reads the task's suite in
    `chunk_size_map` and raises for any other, as CogACT's server does; it keeps every
    `episode_start` and `episode_end` payload it was sent (`.starts`, `.ends`)."""
    from vla_eval.model_servers.predict import PredictModelServer

    class SuiteServer(PredictModelServer):
        def __init__(self) -> None:
            super().__init__(chunk_size=1)
            self.starts: list[dict] = []
            self.ends: list[dict] = []

        async def on_episode_start(self, config: dict, ctx: Any) -> None:
            self.starts.append(config)
            suite = config.get("task", {}).get("suite", "")
            if suite not in chunk_size_map:
                raise ValueError(f"Suite {suite!r} not found in chunk_size_map")
            self._session_chunk_sizes[ctx.session_id] = chunk_size_map[suite]
            await super().on_episode_start(config, ctx)

        async def on_episode_end(self, result: dict, ctx: Any) -> None:
            self.ends.append(result)
            await super().on_episode_end(result, ctx)

        def wait_for_ends(self, count: int, timeout_s: float = 10.0) -> None:
            """Until `count` episode ends arrived (a client's last frames may still be in flight)."""
            deadline = time.monotonic() + timeout_s
            while len(self.ends) < count and time.monotonic() < deadline:
                time.sleep(0.01)

        def predict(self, obs: dict, ctx: Any) -> dict:
            return {answer_key: line_step(obs["state"]).astype(np.float32)}

    return SuiteServer()
