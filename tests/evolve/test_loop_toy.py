"""The evolve loop end to end on a tiny pure-Python benchmark that opts into the horizon operator:
fast enough for every run of the suite (the MetaWorld acceptance test is slow)."""

from __future__ import annotations

import json
import re
import textwrap

from conftest import run_cli

LINE = textwrap.dedent('''
    import numpy as np

    import seq


    class Walk:
        """A point that must walk from 0 to its goal; `info` says how far it still is."""

        def __init__(self, goal):
            self.goal, self.info = goal, {}

        def reset(self, seed=None):
            self.x = 0.0
            return np.array([self.x, self.goal]), {}

        def step(self, action):
            self.x += float(np.clip(np.asarray(action).reshape(-1)[0], 0.0, 0.1))
            self.info = {"obj_to_target": abs(self.goal - self.x)}
            return np.array([self.x, self.goal]), 0.0, False, False, self.info


    @seq.benchmark(name="walk", conditions=seq.conditions(tasks=["short", "long"], seeds=[0, 1]),
                   max_steps=40)
    class WalkBench(seq.Benchmark):
        evolve_operators = {"horizon": {"fractions": (1.0, 0.8), "min_steps": 5}}

        @seq.reset
        def reset(self, seed, variant):
            return Walk({"short": 1.0, "long": 2.2}[variant.task])

        @seq.check
        def check(self, env):
            success = float(env.x >= env.goal - 1e-9)
            return seq.Step(done=bool(success), metrics={"success": success})


    @seq.policy(name="walk-steady")
    class Steady(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.array([0.1])


    @seq.policy(name="walk-wobbly")
    class Wobbly(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.array([np.random.default_rng(seed).uniform(0.0, 0.13)])
''')


def test_a_cycle_promotes_a_shorter_horizon_into_the_next_version(tmp_path):
    path = tmp_path / "walk.py"
    path.write_text(LINE)
    assert run_cli("deploy", str(path)).returncode == 0
    done = run_cli("evolve", "run", "walk", "--policy", "walk-wobbly", "--reference", "walk-steady",
                   "--trials", "12", "--reference-trials", "1", "--envs", "1", "--cycles", "2")  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "evolved: walk@v1 → walk@v2" in done.stdout
    progress = [line for line in done.stderr.splitlines() if re.match(r"ev-[0-9a-f]+: \d+/\d+ \(", line)]
    assert len(progress) >= 2, done.stderr[-2000:]  # piped: its evals' progress, as seq eval run's
    import seq.record.store as store

    state = json.loads((store.seq_home() / "evolve" / "walk.json").read_text())
    first = state["cycles"][0]
    assert first["clusters"] and {c["type"] for c in first["clusters"]} <= {"final_pose_error", "timeout"}
    # a pure-Python env has no contacts: the detectors that need them say so in the log
    assert first["unjudged"]["distractor_interaction"].startswith("the trace has no contacts")
    promoted = [c for c in first["candidates"] if c["decision"] == "promote"]
    assert promoted and {c["operator"] for c in promoted} == {"horizon"}
    assert all(c["condition"]["max_steps"] < 40 and c["reference_success"] == 1.0 for c in promoted)
    assert state["cycles"][1]["base"] == "walk@v2"
    listed = [row["name"] for row in json.loads(run_cli("benchmark", "ls", "--json").stdout)]
    every = [row["name"] for row in json.loads(run_cli("benchmark", "ls", "--all", "--json").stdout)]
    assert "walk" in listed and "walk-evolve-candidates" not in listed  # evolve's own, kept out
    assert "walk-evolve-candidates" in every
    bad = run_cli("evolve", "run", "walk", "--policy", "walk-wobbly", "--reference", "nope")
    assert bad.returncode == 2 and "nope" in bad.stderr and "Traceback" not in bad.stderr
