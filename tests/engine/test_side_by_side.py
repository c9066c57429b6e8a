"""Episodes side by side left to the eval: a seq server's evals share their round trips by
themselves, within the memory free, opening a worker's slots once the waits pay for their envs;
anything else runs one episode at a time."""

from __future__ import annotations

import textwrap

import pytest
from conftest import refused_in_one_line, run_cli

import seq
from seq.engine.side_by_side import (
    AUTO_MOST,
    DEFAULT_ENV_MEMORY,
    auto_side_by_side,
    available_memory,
    cgroup_room,
)

GiB = 2**30

CACHING = textwrap.dedent('''
    """A benchmark that keeps one env per task, as MetaWorld's does; each env built is a line."""
    import os
    import time

    import numpy as np

    import seq

    BUILT = os.environ.get("SEQ_TEST_BUILT", os.devnull)
    BUILD_S = float(os.environ.get("SEQ_TEST_BUILD_S", "0"))  # what building an env takes


    class Env:
        action_space = None

        def reset(self, seed=None):
            self.x = 0.0
            return np.array([self.x]), {}

        def step(self, action):
            self.x += 0.1
            return np.array([self.x]), 0.0, False, False, {}


    @seq.benchmark(
        name="caching", conditions=seq.conditions(tasks=["a", "b"], seeds=range(8)), max_steps=5,
        env_memory="20MiB",
    )
    class Caching(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            cache = self.__dict__.setdefault("cache", {})
            if seed < int(os.environ.get("SEQ_TEST_FAIL_BELOW", "0")):
                raise RuntimeError("this seed fails for now")
            if variant.task not in cache:
                time.sleep(BUILD_S)
                cache[variant.task] = Env()
                with open(BUILT, "a") as built:
                    built.write(variant.task + "\\n")
            return cache[variant.task]

        @seq.check
        def check(self, env):
            return seq.Step(done=False, metrics={"success": 0.0})


    @seq.policy(name="step-one")
    class StepOne(seq.Policy):
        @seq.infer(batched=True)
        def infer(self, obs, *, seed=None, instruction=None):
            return [np.ones(1) for _ in obs]


    @seq.policy(name="step-one-slowly")
    class StepOneSlowly(seq.Policy):
        """A model that takes 50 ms a batch, as a VLA on a GPU does."""

        @seq.infer(batched=True)
        def infer(self, obs, *, seed=None, instruction=None):
            time.sleep(0.05)
            return [np.ones(1) for _ in obs]
''')


def _rows(report):
    return [
        (e.item_id, e.status, e.steps, e.queries, {k: v for k, v in e.metrics.items() if k != "duration_s"})
        for e in report.episodes
    ]


def test_a_seq_server_gets_side_by_side_episodes_as_many_as_each_worker_has():
    rule = auto_side_by_side(alone=None, items=100, workers=2, free=64 * GiB)
    assert rule.count == 50 and rule.chosen
    assert rule.why == "up to 50 episodes side by side a worker, as the server's waits pay for their envs"
    assert auto_side_by_side(alone=None, items=1000, workers=2, free=64 * GiB).count == AUTO_MOST
    assert auto_side_by_side(alone=None, items=3, workers=4, free=64 * GiB).count == 1


def test_the_memory_free_bounds_the_envs_side_by_side():
    # half of 8 GiB over 4 workers at 512 MiB an env: 2 each
    rule = auto_side_by_side(alone=None, items=100, workers=4, env_memory=512 * 2**20, free=8 * GiB)
    assert rule.count == 2
    assert rule.why == (
        "up to 2 episodes side by side a worker: half the 8.0 GiB free holds 2 envs of 512 MiB a worker"
    )
    # undeclared, an env is taken to need DEFAULT_ENV_MEMORY
    expected = 4 * GiB // (2 * DEFAULT_ENV_MEMORY)
    assert auto_side_by_side(alone=None, items=1000, workers=2, free=8 * GiB).count == expected
    # a benchmark's memory= (for all its workers) bounds it too
    declared = auto_side_by_side(alone=None, items=100, workers=2, memory=GiB, free=64 * GiB)
    assert declared.count == 2
    assert declared.why == (  # the benchmark's bound, not the machine's
        "up to 2 episodes side by side a worker: the benchmark's memory= of 1.0 GiB holds 2 envs of "
        "256 MiB a worker"
    )
    tight = auto_side_by_side(alone=None, items=100, workers=2, env_memory=8 * GiB, free=8 * GiB)
    assert tight.count == 1 and tight.why == (
        "1 episode at a time a worker: half the 8.0 GiB free holds no env of 8.0 GiB a worker"
    )


def test_a_benchmarks_memory_bound_is_named_as_its_own_not_as_memory_free():
    rule = auto_side_by_side(alone=None, items=100, workers=2, memory=GiB, free=64 * GiB)
    assert rule.why == (
        "up to 2 episodes side by side a worker: the benchmark's memory= of 1.0 GiB holds 2 envs of "
        "256 MiB a worker"
    )
    # where half the memory free is less than the benchmark's memory=, it is what bounds
    rule = auto_side_by_side(alone=None, items=100, workers=2, memory=8 * GiB, free=2 * GiB)
    assert rule.count == 2 and "half the 2.0 GiB free holds 2 envs" in rule.why


def test_anything_but_a_seq_server_runs_one_episode_at_a_time():
    rule = auto_side_by_side(alone="the policy runs inline", items=100, workers=2, free=64 * GiB)
    assert rule.count == 1 and rule.why == "1 episode at a time a worker: the policy runs inline"
    assert not rule.chosen  # a reason, not a count: not decided again where the eval runs


@pytest.fixture
def caching(tmp_path, monkeypatch):
    built = tmp_path / "built.txt"
    built.touch()
    monkeypatch.setenv("SEQ_TEST_BUILT", str(built))
    (tmp_path / "caching.py").write_text(CACHING)
    seq.deploy(tmp_path / "caching.py")
    return built


def test_a_served_eval_runs_side_by_side_by_itself_with_the_rows_of_one_at_a_time(caching):
    alone = seq.eval.run("step-one", benchmark="caching", envs=1, trials=2)
    assert alone.manifest.envs_per_worker == 1  # inline: one at a time
    built_alone = caching.read_text().split()
    with seq.serve("step-one-slowly", port=0) as server:  # its waits soon pay for the envs
        together = seq.eval.run(benchmark="caching", policy_url=server.url, envs=1, trials=2)
        sizes = server.stats()["batch_size_histogram"]
    assert together.status == "completed" and _rows(together) == _rows(alone)
    assert together.manifest.envs_per_worker == 32  # 2 tasks x 8 seeds x 2 trials, one worker
    assert max(sizes) > 1  # one worker, one connection: several episodes' acts in one message
    # each episode side by side has its own copy of the benchmark, so its own env (the first
    # episode runs alone until its waits pay for the others' envs: its slot may be used again)
    built = caching.read_text().split()[len(built_alone) :]
    assert 24 <= len(built) <= 32 and abs(built.count("a") - built.count("b")) <= 8


def test_the_dry_run_says_how_many_run_side_by_side_and_why(caching):
    with seq.serve("step-one", port=0) as server:
        done = run_cli(
            "eval", "run", "--benchmark", "caching", "--policy-url", server.url, "--envs", "2", "--dry-run"
        )
    assert done.returncode == 0, done.stderr
    shared = "2 workers, up to 8 episodes side by side a worker, as the server's waits pay for their envs"
    assert shared in " ".join(done.stdout.split()) and max(map(len, done.stdout.splitlines())) <= 80
    inline = seq.eval.dry_run("step-one", benchmark="caching", envs=2)
    assert inline["envs_per_worker"] == 1 and "the policy runs inline" in inline["envs_per_worker_why"]


def test_the_dry_run_says_the_count_asked_and_no_more_workers_than_episodes(caching):
    with seq.serve("step-one", port=0) as server:
        asked = run_cli(
            "eval", "run", "--benchmark", "caching", "--policy-url", server.url, "--envs", "2",
            "--envs-per-worker", "3", "--dry-run",
        )  # fmt: skip
        few = seq.eval.dry_run(benchmark="caching", policy_url=server.url, envs=40, seeds=[0])
    assert "2 workers, 3 episodes side by side a worker, as asked (--envs-per-worker)" in asked.stdout
    assert few["workers"] == 2 and few["envs_per_worker"] == 1  # 2 episodes: 2 workers, not 40
    assert few["envs_per_worker_why"] == "1 episode at a time a worker: one episode each"


def test_the_dry_runs_line_for_a_memory_bound_wraps_within_80_columns(tmp_path):
    tight = tmp_path / "tight.py"
    tight.write_text(CACHING.replace('env_memory="20MiB"', 'env_memory="20MiB", memory=0.25'))
    seq.deploy(tight)
    with seq.serve("step-one", port=0) as server:
        done = run_cli(
            "eval", "run", "--benchmark", "caching", "--policy-url", server.url, "--envs", "2",
            "--trials", "8", "--dry-run",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("2 workers, "))
    assert lines[start : start + 2] == [
        "2 workers, up to 6 episodes side by side a worker: the benchmark's memory= of",
        "  256 MiB holds 6 envs of 20 MiB a worker",
    ]


@pytest.mark.parametrize(
    ("value", "says"),
    [('"lots"', "env_memory='lots' is not a size"), ("0", "env_memory=0 is under one byte")],
)
def test_an_env_memory_that_is_not_a_size_is_refused_in_one_line(tmp_path, value, says):
    bad = tmp_path / "bad.py"
    bad.write_text(CACHING.replace('env_memory="20MiB"', f"env_memory={value}"))
    refused = run_cli("deploy", str(bad))
    refused_in_one_line(refused, says)
    assert "what one env takes" in refused.stderr


def test_envs_per_worker_on_ray_is_refused_before_the_eval_is_stored(caching):
    with pytest.raises(seq.SeqInputError, match="--envs-per-worker 4 runs on local worker processes"):
        seq.eval.run("step-one", benchmark="caching", envs=1, envs_per_worker=4, engine="ray")
    assert seq.eval.ls() == []


def test_a_seq_server_from_before_act_batch_gets_one_episode_at_a_time(caching):
    from seq.serving import vlaeval

    with seq.serve("step-one", port=0) as server:
        inner = server._server  # its greeting made an older seq's: no act_batch among its capabilities
        inner.metadata["capabilities"].pop("act_batch")
        inner.hello = vlaeval.pack_message("hello", inner.metadata, 0)
        plan = seq.eval.dry_run(benchmark="caching", policy_url=server.url, envs=1)
        report = seq.eval.run(benchmark="caching", policy_url=server.url, envs=1)
    assert plan["envs_per_worker"] == 1 and "a seq from before act_batch" in plan["envs_per_worker_why"]
    assert report.status == "completed" and report.done == 16


def test_episodes_with_a_timeout_run_one_at_a_time_unless_asked(toy_file):
    # side by side, each episode's wall time would hold the others' steps: timed out where alone
    # it succeeds
    seq.deploy(toy_file)
    options = dict(benchmark="line", envs=1, timeout_s=1.0, params={"delay": "0.01"})
    alone = seq.eval.run("line-controller", **options)
    served = seq.eval.run("line-controller", serve=True, **options)
    assert served.manifest.envs_per_worker == 1
    assert _rows(served) == _rows(alone) and {e.status for e in served.episodes} == {"ok"}
    plan = seq.eval.dry_run("line-controller", serve=True, **options)
    assert "its episodes have a timeout_s" in plan["envs_per_worker_why"]


def test_a_containers_memory_limit_bounds_the_memory_free(tmp_path):
    # a container's MemAvailable is its host's: the limit of its cgroup says what it may take
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "memory.max").write_text(f"{4 * GiB}\n")
    (v2 / "memory.current").write_text(f"{GiB}\n")
    (v2 / "memory.stat").write_text(f"anon 100\ninactive_file {GiB // 2}\n")  # page cache it can drop
    assert cgroup_room(v2) == 3 * GiB + GiB // 2
    assert available_memory(v2) <= 3 * GiB + GiB // 2
    (v2 / "memory.max").write_text("max\n")
    assert cgroup_room(v2) is None  # then the machine's MemAvailable, a live figure read twice:
    assert available_memory(v2) == pytest.approx(available_memory(tmp_path / "none"), rel=0.05)
    v1 = tmp_path / "v1" / "memory"
    v1.mkdir(parents=True)
    (v1 / "memory.limit_in_bytes").write_text(f"{2 * GiB}\n")
    (v1 / "memory.usage_in_bytes").write_text(f"{GiB}\n")
    assert cgroup_room(v1.parent) == GiB
    (v1 / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # v1's "no limit"
    assert cgroup_room(v1.parent) is None


def test_an_openpi_or_vla_eval_server_gets_one_episode_at_a_time(caching):
    with seq.serve("step-one", port=0) as server:  # a seq server speaks both
        options = dict(benchmark="caching", policy_url=server.url, envs=1)
        plans = {p: seq.eval.dry_run(policy_protocol=p, **options) for p in ("openpi", "vla-eval")}
    assert plans["openpi"]["envs_per_worker"] == plans["vla-eval"]["envs_per_worker"] == 1
    assert plans["openpi"]["envs_per_worker_why"].endswith(": an openpi server takes one act a message")
    assert plans["vla-eval"]["envs_per_worker_why"].endswith(": a vla-eval server takes one act a message")


def test_against_a_policy_that_answers_at_once_a_worker_builds_no_env_it_would_barely_use(
    caching, monkeypatch
):
    # an env takes 0.5 s to build; an episode waits on the server a few milliseconds in all
    monkeypatch.setenv("SEQ_TEST_BUILD_S", "0.5")
    alone = seq.eval.run("step-one", benchmark="caching", envs=1, tasks=["a"])
    built_alone = len(caching.read_text().split())
    with seq.serve("step-one", port=0) as server:
        plan = seq.eval.dry_run(benchmark="caching", policy_url=server.url, envs=1, tasks=["a"])
        served = seq.eval.run(benchmark="caching", policy_url=server.url, envs=1, tasks=["a"])
        sizes = server.stats()["batch_size_histogram"]
    assert plan["envs_per_worker"] == 8 and plan["envs_per_worker_why"].startswith("up to 8 episodes")
    assert served.status == "completed" and _rows(served) == _rows(alone)
    assert caching.read_text().split()[built_alone:] == ["a"]  # one env: the slots never opened
    assert set(sizes) == {1}  # one episode's act a message


def test_a_first_episode_that_fails_in_reset_does_not_open_the_slots(caching, monkeypatch):
    # seed 0 fails at once, before its env is built: the worker's measure of what starting an
    # episode takes is the next one's (its env built), not that failure's
    monkeypatch.setenv("SEQ_TEST_BUILD_S", "0.5")
    monkeypatch.setenv("SEQ_TEST_FAIL_BELOW", "1")
    before = len(caching.read_text().split())
    with seq.serve("step-one", port=0) as server:
        served = seq.eval.run(benchmark="caching", policy_url=server.url, envs=1, tasks=["a"])
        sizes = server.stats()["batch_size_histogram"]
    assert served.manifest.envs_per_worker == 8
    assert [e.status for e in served.episodes].count("error") == 1
    assert caching.read_text().split()[before:] == ["a"]  # one env: the slots never opened
    assert set(sizes) == {1}


def test_a_worker_opens_its_slots_once_an_episode_waited_longer_than_its_env_took(caching, monkeypatch):
    # an env takes 10 ms to build, an act 50 ms (5 acts an episode): the slots open after an act
    # or two, even on a loaded machine where starting the first episode takes several times that
    monkeypatch.setenv("SEQ_TEST_BUILD_S", "0.01")
    before = len(caching.read_text().split())  # what seq.deploy's check built
    with seq.serve("step-one-slowly", port=0) as server:
        served = seq.eval.run(benchmark="caching", policy_url=server.url, envs=1, tasks=["a"])
        sizes = server.stats()["batch_size_histogram"]
    assert served.status == "completed" and served.manifest.envs_per_worker == 8
    # each episode started beside another builds its own env (where one ended first, its slot's
    # env is used again), and their acts go in one message
    assert 4 <= len(caching.read_text().split()[before:]) <= 8
    assert max(sizes) >= 4 and sizes.get(1, 0) < 8


def test_seqs_own_count_is_decided_again_where_the_eval_runs(caching, monkeypatch):
    monkeypatch.setenv("SEQ_TEST_FAIL_BELOW", "3")  # seeds 0-2 fail in reset, the first time
    with seq.serve("step-one-slowly", port=0) as server:
        first = seq.eval.run(benchmark="caching", policy_url=server.url, envs=1, trials=2)
        assert first.manifest.envs_per_worker == 32
        assert [e.status for e in first.episodes].count("ok") == 20
        monkeypatch.setenv("SEQ_TEST_FAIL_BELOW", "0")
        again = seq.eval.run(rerun_failed=first.eval_id, envs=2)  # 12 episodes again, on 2 workers
    assert again.status == "completed" and {e.status for e in again.episodes} == {"ok"}
    assert again.manifest.envs_per_worker == 6  # not the 32 decided for one worker and 32 episodes


def test_a_shard_decides_its_count_for_its_share_of_the_episodes(caching):
    # shards claim from one queue: a shard that counted every shard's episodes as its own would,
    # once its slots opened, claim the others' too, and leave them idle
    with seq.serve("step-one", port=0) as server:
        options = dict(benchmark="caching", policy_url=server.url, envs=1, trials=2)
        shard = seq.eval.run(**options, eval_id="ev-sharded", shard_id=0, num_shards=2)
    assert shard.done == 32  # alone, it ran the other shard's episodes too
    assert shard.manifest.envs_per_worker == 16  # half of 32 episodes a worker, not 32
