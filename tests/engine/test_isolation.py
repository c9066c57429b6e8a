"""What a benchmark declares about where it runs, honoured: volumes, secrets, memory, cpu, gpu."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from conftest import run_cli

import seq
from seq.isolation.secrets import set_secret
from seq.isolation.volumes import put_volume

ISOLATED = textwrap.dedent('''
    """Benchmarks that read a volume, hold a secret, or allocate memory: a point on a line."""
    import json
    import os

    import numpy as np

    import seq


    class LineEnv:
        def __init__(self, goal):
            self.goal, self.action_space = goal, None

        def reset(self, seed=None):
            self.x = float(np.random.default_rng(seed).uniform(-1.0, 0.0))
            return np.array([self.x, self.goal]), {}

        def step(self, action):
            self.x += float(np.clip(np.asarray(action).reshape(-1)[0], -0.1, 0.1))
            self.last_action = np.asarray(action).reshape(-1)
            return np.array([self.x, self.goal]), 0.0, False, False, {}


    class Base(seq.Benchmark):
        @seq.check
        def check(self, env):
            success = float(abs(env.x - env.goal) < 0.05)
            return seq.Step(done=bool(success), metrics={"success": success, **self.extra(env)})

        def extra(self, env):
            return {}


    @seq.benchmark(name="from-volume", conditions=seq.conditions(tasks=["near", "far"], seeds=range(2)),
                   max_steps=40, assets=seq.Volume.from_name("tasks"))
    class FromVolume(Base):
        @seq.reset
        def reset(self, seed, variant):
            goals = json.loads((seq.assets_path() / "tasks.json").read_text())
            try:
                (seq.assets_path() / "tasks.json").write_text("{}")
                self.refused = 0.0
            except OSError:
                self.refused = 1.0
            return LineEnv(goals[variant.task])

        def extra(self, env):
            mounted = float(str(seq.assets_path()) == "/assets")
            return {"goal": env.goal, "write_refused": self.refused, "at_slash_assets": mounted}


    @seq.benchmark(name="with-secret", conditions=seq.conditions(tasks=["near", "leak"], seeds=range(2)),
                   max_steps=40, secrets=[seq.Secret.from_name("sim-token")])
    class WithSecret(Base):
        @seq.reset
        def reset(self, seed, variant):
            token = os.environ["SIM_TOKEN"]
            if variant.task == "leak":
                print(f"connecting with {token}", flush=True)
                raise RuntimeError(f"the sim server refused token {token}")
            return LineEnv(0.5)

        def extra(self, env):
            return {"policy_saw_token": float(env.last_action[1]) if hasattr(env, "last_action") else 0.0}


    @seq.benchmark(name="hungry", conditions=seq.conditions(tasks=["near", "huge"], seeds=range(2)),
                   max_steps=40, memory="600MiB", cpu=2)
    class Hungry(Base):
        @seq.reset
        def reset(self, seed, variant):
            if variant.task == "huge":
                self.ballast = np.ones(2 * 2**30 // 8)  # 2 GiB, past a worker's 300 MiB
            return LineEnv(0.5)

        def extra(self, env):
            return {"pid": float(os.getpid())}


    @seq.benchmark(name="needs-card", conditions=seq.conditions(tasks=["near"], seeds=range(1)),
                   max_steps=40, gpu="H100-that-is-not-here")
    class NeedsCard(Base):
        @seq.reset
        def reset(self, seed, variant):
            return LineEnv(0.5)


    @seq.policy(name="reader")
    class Reader(seq.Policy):
        """Moves toward the goal; its second number says whether it can see SIM_TOKEN."""

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.array([np.clip(obs[1] - obs[0], -0.1, 0.1), float("SIM_TOKEN" in os.environ)])


    @seq.policy(name="flag-reader")
    class FlagReader(seq.Policy):
        """Moves toward the goal; its second number passes on an adapter's third observation."""

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.array([np.clip(obs[1] - obs[0], -0.1, 0.1), obs[2]])
''')


@pytest.fixture
def isolated_file(tmp_path: Path) -> Path:
    path = tmp_path / "isolated_bench.py"
    path.write_text(ISOLATED)
    seq.deploy(path)
    return path


def _rows(report: seq.Report) -> list:
    return seq.Store().episodes(report.eval_id)


def _tasks(tmp_path: Path, goals: dict[str, float]) -> Path:
    folder = tmp_path / f"tasks-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    (folder / "tasks.json").write_text(json.dumps(goals))
    return folder


def test_a_volume_is_read_only_and_each_eval_records_the_version_it_read(isolated_file, tmp_path):
    first, _ = put_volume("tasks", _tasks(tmp_path, {"near": 0.5, "far": 1.0}))
    before = seq.eval.run("reader", benchmark="from-volume", envs=2)
    assert {r.status for r in _rows(before)} == {"ok"}
    assert {r.metrics["write_refused"] for r in _rows(before)} == {1.0}
    assert {r.task: r.metrics["goal"] for r in _rows(before)} == {"near": 0.5, "far": 1.0}
    if os.geteuid() == 0:  # root may mount: the volume is at /assets itself
        assert {r.metrics["at_slash_assets"] for r in _rows(before)} == {1.0}

    second, created = put_volume("tasks", _tasks(tmp_path, {"near": 0.3, "far": 0.8}))
    assert created and second.version != first.version
    after = seq.eval.run("reader", benchmark="from-volume", envs=2)
    assert {r.task: r.metrics["goal"] for r in _rows(after)} == {"near": 0.3, "far": 0.8}

    store = seq.Store()
    assert store.get_eval(before.eval_id).manifest.assets.version == first.version
    assert store.get_eval(after.eval_id).manifest.assets.version == second.version


def test_a_secret_reaches_the_benchmark_only_and_is_masked_everywhere(isolated_file):
    set_secret("sim-token", "SIM_TOKEN", "hunter2-very-secret")
    result = run_cli("eval", "run", "reader", "--benchmark", "with-secret", "--envs", "2", "--json", "-v")
    assert result.returncode == 0, result.stderr
    assert "hunter2-very-secret" not in result.stdout + result.stderr
    assert "connecting with ***" in result.stdout + result.stderr  # the worker's own output, masked
    report = json.loads(result.stdout)
    assert "connecting with ***" in [line.text for line in seq.eval.logs(report["eval_id"])]
    rows = seq.Store().episodes(report["eval_id"])
    leaks = [r for r in rows if r.task == "leak"]
    assert leaks and all(r.status == "error" and "refused token ***" in r.error for r in leaks)
    near = [r for r in rows if r.task == "near"]
    assert near and all(r.status == "ok" and r.metrics["policy_saw_token"] == 0.0 for r in near)
    database = (seq.Store().path).read_bytes()
    assert b"hunter2-very-secret" not in database
    assert "hunter2-very-secret" not in run_cli("eval", "report", report["eval_id"]).stdout


def test_an_episode_past_memory_is_an_error_naming_the_limit_and_the_eval_goes_on(isolated_file):
    report = seq.eval.run("reader", benchmark="hungry")  # cpu=2: two workers, 300 MiB each
    huge = [r for r in _rows(report) if r.task == "huge"]
    near = [r for r in _rows(report) if r.task == "near"]
    assert huge and all(
        r.status == "error" and "memory limit of 300 MiB" in r.error and "worker replaced" in r.error
        for r in huge
    )
    assert near and all(r.status == "ok" for r in near)
    assert len({r.metrics["pid"] for r in near}) <= 2
    manifest = seq.Store().get_eval(report.eval_id).manifest
    assert (manifest.memory.total, manifest.memory.per_worker) == ("600 MiB", "300 MiB")


def test_a_named_gpu_missing_here_is_refused_unless_allowed_on_the_cpu(isolated_file):
    refused = run_cli("eval", "run", "reader", "--benchmark", "needs-card")
    assert refused.returncode == 2
    assert "gpu='H100-that-is-not-here'" in refused.stderr and "--allow-cpu" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    report = seq.eval.run("reader", benchmark="needs-card", allow_cpu=True, envs=1)
    manifest = seq.Store().get_eval(report.eval_id).manifest
    assert (manifest.gpu.declared, manifest.gpu.used) == ("H100-that-is-not-here", "cpu (--allow-cpu)")


def test_bad_declarations_are_refused_in_one_sentence():
    with pytest.raises(seq.SeqInputError, match="memory="):

        @seq.benchmark(name="bad", conditions=[seq.Condition("a")], memory="lots")
        class Bad(seq.Benchmark):
            pass

    with pytest.raises(seq.SeqInputError, match="assets= must be seq.Volume"):

        @seq.benchmark(name="bad", conditions=[seq.Condition("a")], assets="/data")
        class Worse(seq.Benchmark):
            pass


def test_an_isolated_benchmark_refuses_a_policy_object_in_this_process(isolated_file):
    from seq.registry.loader import load_class  # noqa: F401  (the deployed module is importable)

    put_volume("tasks", _tasks(Path(isolated_file).parent, {"near": 0.5, "far": 1.0}))
    row = seq.Store().versions("policy", "reader")[-1]
    from seq.registry.deploy import load_version

    policy = load_version(row)()
    with pytest.raises(seq.SeqInputError, match="assets=.*local worker processes"):
        seq.evaluate(policy, benchmark="from-volume", seeds=[0])


def test_an_image_that_fails_to_build_refuses_the_eval_before_it_is_stored(tmp_path, toy_file):
    source = tmp_path / "broken_image.py"
    source.write_text(
        toy_file.read_text().replace(
            'name="line",',
            'name="line-in-a-broken-image", image=seq.Image.debian_slim().uv_pip_install('
            '"seq-no-such-package-xyz==1.0"),',
        )
    )
    seq.deploy(source, check=False)  # `seq deploy` would refuse it: its check builds the image
    result = run_cli("eval", "run", "line-controller", "--benchmark", "line-in-a-broken-image")
    assert result.returncode == 2
    assert "seq-no-such-package-xyz" in result.stderr and "failed" in result.stderr
    assert seq.Store().evals() == []


ADAPTER = textwrap.dedent("""
    import os

    import numpy as np

    import seq


    def _flag(obs):
        return np.append(obs, float("SIM_TOKEN" in os.environ))


    @seq.adapter(name="token-peeker")
    class TokenPeeker(seq.Adapter):
        obs_transforms = [seq.tf.custom(_flag, label=seq.tf.lossy("adds whether SIM_TOKEN is set"))]
""")


def test_an_adapter_of_a_benchmark_with_secrets_does_not_see_them(isolated_file, tmp_path):
    adapter_file = tmp_path / "token_peeker.py"
    adapter_file.write_text(ADAPTER)
    seq.deploy(adapter_file)
    set_secret("sim-token", "SIM_TOKEN", "hunter2-very-secret")
    report = seq.eval.run(
        "flag-reader", benchmark="with-secret", tasks=["near"], adapter="token-peeker", envs=1
    )
    rows = _rows(report)
    assert rows and all(r.status == "ok" and r.metrics["policy_saw_token"] == 0.0 for r in rows)


def test_an_isolated_benchmark_is_refused_on_ray_rather_than_run_without_isolation(isolated_file, tmp_path):
    put_volume("tasks", _tasks(tmp_path, {"near": 0.5, "far": 1.0}))
    refused = run_cli("eval", "run", "reader", "--benchmark", "from-volume", "--engine", "ray")
    assert refused.returncode == 2
    assert "assets=" in refused.stderr and "--engine local" in refused.stderr


def test_image_imports_skips_what_only_the_image_has_outside_it(monkeypatch):
    image = seq.Image.debian_slim().uv_pip_install("seq-no-such-package-xyz")
    monkeypatch.delenv("SEQ_IMAGE", raising=False)
    with image.imports():
        import seq_no_such_package_xyz  # noqa: F401
    monkeypatch.setenv("SEQ_IMAGE", "abc123")  # inside the image's workers: a missing module raises
    with pytest.raises(ImportError), image.imports():
        import seq_no_such_package_xyz  # noqa: F401


def test_a_resumed_eval_reads_the_volume_version_it_started_with(isolated_file, tmp_path):
    first, _ = put_volume("tasks", _tasks(tmp_path, {"near": 0.5, "far": 1.0}))
    started: list[str] = []

    def stop_after_one(result: object) -> None:
        raise KeyboardInterrupt  # Ctrl-C after the first episode: what ran is kept

    with pytest.raises(seq.EvalCanceled):
        seq.eval.run(
            "reader", benchmark="from-volume", envs=1, on_start=lambda row: started.append(row.id),
            on_result=stop_after_one,
        )  # fmt: skip
    put_volume("tasks", _tasks(tmp_path, {"near": 0.3, "far": 0.8}))
    resumed = seq.eval.run(resume=started[0], envs=1)
    rows = _rows(resumed)
    assert len(rows) == 4 and {(r.task, r.metrics["goal"]) for r in rows} == {("near", 0.5), ("far", 1.0)}
    assert seq.Store().get_eval(started[0]).manifest.assets.version == first.version


def test_memory_is_shared_by_the_workers_that_run_not_by_those_asked_for(isolated_file):
    # 4 workers asked, 2 episodes: 2 workers run, 300 MiB each (the plan's), not 150 MiB
    plan = seq.eval.dry_run("reader", benchmark="hungry", tasks=["near"], envs=4)
    report = seq.eval.run("reader", benchmark="hungry", tasks=["near"], envs=4)
    assert report.status == "completed" and plan["workers"] == 2
    manifest = seq.Store().get_eval(report.eval_id).manifest
    assert manifest.workers == 2 and manifest.memory.per_worker == "300 MiB"
