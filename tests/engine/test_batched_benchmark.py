"""A batched benchmark (`@seq.benchmark(batched=True)`): one worker steps N worlds in one physics
step and asks the policy for their N actions at once; each world's episode is its own row, the
same as when the episodes run one at a time."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import seq

WORLDS = textwrap.dedent('''
    """Points on a line, every world advanced by one step of the batch; the batch logs how many
    worlds had an action staged at each of its steps."""
    import json
    from types import SimpleNamespace

    import numpy as np

    import seq

    SPACE = SimpleNamespace(low=np.array([-0.1]), high=np.array([0.1]), shape=(1,))


    class Worlds:
        def __init__(self, nworld, log):
            self.x = np.zeros(nworld)
            self.push = np.zeros(nworld)
            self.staged = set()
            self.busy = set()
            self.log = log

        def claim(self):
            world = min(set(range(len(self.x))) - self.busy)
            self.busy.add(world)
            return world

        def step(self):
            if self.log:
                with open(self.log, "a") as out:
                    out.write(json.dumps(sorted(self.staged)) + "\\n")
            self.x += self.push
            self.staged.clear()


    class World:
        action_space = SPACE

        def __init__(self, worlds, target):
            self.batch, self.world, self.target = worlds, worlds.claim(), target

        def reset(self, seed=None):
            self.batch.x[self.world] = np.random.default_rng(seed).uniform(-1, 1)
            return self.observation(), {}

        def observation(self):
            return np.array([self.batch.x[self.world], self.target])

        def stage(self, action):
            self.batch.push[self.world] = float(np.asarray(action)[0])
            self.batch.staged.add(self.world)

        def outcome(self):
            return self.observation(), 0.0, False, False, {}

        def release(self):
            self.batch.busy.discard(self.world)


    @seq.benchmark(name="points", batched=True, max_steps=40,
                   conditions=seq.conditions(tasks=["near", "far"], seeds=range(5)))
    class Points(seq.Benchmark):
        @seq.setup
        def setup(self, worlds: int = 4, log: str = ""):
            self.worlds = Worlds(worlds, log)

        @seq.reset
        def reset(self, seed, variant):
            return World(self.worlds, 0.2 if variant.task == "near" else 0.9)

        @seq.check
        def check(self, env):
            x = env.batch.x[env.world]
            gap = abs(x - env.target)
            return seq.Step(done=gap < 0.05, metrics={"success": float(gap < 0.05), "x": x})


    @seq.policy(name="points-line")
    class PointsLine(seq.Policy):
        @seq.infer(batched=True)
        def infer(self, obs, *, seed=None, instruction=None, chunk: int = 1):
            out = []
            for o, s in zip(obs, seed):
                noise = np.random.default_rng(s).normal(0.0, 0.02, chunk)
                actions = np.clip(o[1] - o[0] + noise, -0.1, 0.1)[:, None]
                out.append(actions if chunk > 1 else actions[0])
            return out
''')


def _rows(report: seq.Report) -> list[tuple]:
    return [(e.item_id, e.status, e.steps, e.queries, e.ended_by,
             {k: v for k, v in e.metrics.items() if k != "duration_s"}) for e in report.episodes]


@pytest.fixture
def points(tmp_path: Path) -> Path:
    path = tmp_path / "points.py"
    path.write_text(WORLDS)
    seq.deploy(path)
    return tmp_path


@pytest.mark.parametrize("chunk", ["1", "3"])
def test_one_worker_steps_its_worlds_together_and_rows_match_one_at_a_time(points: Path, chunk: str) -> None:
    alone_log, together_log = points / "alone.jsonl", points / "together.jsonl"
    alone = seq.eval.run("points-line", benchmark="points", envs=1, trials=2,
                         params={"chunk": chunk, "worlds": "4", "log": str(alone_log)})
    together = seq.eval.run("points-line", benchmark="points", envs=1, envs_per_worker=4, trials=2,
                            params={"chunk": chunk, "worlds": "4", "log": str(together_log)})
    assert together.status == "completed" and together.done == together.total == 20
    assert len(together.episodes) == 20  # every world's episode is a row of its own
    assert _rows(together) == _rows(alone)
    alone_steps = [json.loads(line) for line in alone_log.read_text().splitlines()]
    together_steps = [json.loads(line) for line in together_log.read_text().splitlines()]
    assert {len(staged) for staged in alone_steps} == {1}  # one episode at a time: world 0 alone
    assert max(len(staged) for staged in together_steps) == 4  # four worlds in one physics step
    steps = sum(e.steps for e in together.episodes)
    assert sum(map(len, together_steps)) == sum(map(len, alone_steps)) == steps
    assert len(together_steps) < len(alone_steps) / 2


def test_a_batched_run_is_the_same_for_the_same_seeds(points: Path) -> None:
    params = {"chunk": "2", "log": str(points / "log.jsonl")}
    first = seq.eval.run("points-line", benchmark="points", envs=1, envs_per_worker=3, params=params)
    again = seq.eval.run("points-line", benchmark="points", envs=1, envs_per_worker=3, params=params)
    assert first.done == first.total == 10
    assert _rows(first) == _rows(again)


def test_compare_pairs_a_benchmark_with_its_batched_twin(points: Path) -> None:
    plain = WORLDS.replace("batched=True, ", "").replace('name="points"', 'name="points-plain"')
    plain = plain.replace('@seq.policy(name="points-line")', '@seq.policy(name="points-line-too")')
    (points / "points_plain.py").write_text(plain)
    seq.deploy(points / "points_plain.py")
    report = seq.compare_benchmarks("points-plain", "points", "points-line", envs=1, envs_per_worker=4,
                                    max_steps=12, params={"log": str(points / "log.jsonl")})
    steps = [json.loads(line) for line in (points / "log.jsonl").read_text().splitlines()]
    assert max(len(staged) for staged in steps) == 4  # the batched twin stepped its worlds together
    assert report.done == 20 and len(report.comparisons) >= 1
    a, b = (report.metric("success", arm=arm).value for arm in report.arms)
    assert a == b  # the same episodes, the same outcomes


def test_a_served_eval_of_a_batched_benchmark_runs_one_episode_at_a_time_unless_asked(points: Path) -> None:
    # its setup makes 4 worlds: 10 episodes side by side on one worker would find none to claim
    with seq.serve("points-line", port=0) as server:
        report = seq.eval.run(benchmark="points", policy_url=server.url, envs=1, max_steps=8,
                              params={"worlds": "4"})
        plan = seq.eval.dry_run(benchmark="points", policy_url=server.url, envs=1)
    assert report.status == "completed"
    assert [e.status for e in report.episodes] == ["ok"] * 10
    assert report.manifest.envs_per_worker == 1
    assert "a batched benchmark holds as many worlds as its setup makes" in plan["envs_per_worker_why"]
