"""A worker process's start and end (`seq.engine.worker_lifecycle`): it imports only what running
episodes needs, and it ends as Python's exit would (its threads joined, its `atexit` handlers run,
what they print kept in the eval's log) without tearing its modules down."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import seq

WORKER_IMPORTS = "import seq.engine.worker_lifecycle, seq.engine.wire, seq.engine.worker"

# What the benchmarks below share: an env that does nothing, a check that ends the episode at once,
# and a policy that answers zeros.
SHARED = {
    "env": textwrap.dedent("""
        class Env:
            action_space = None

            def reset(self, seed=None):
                return np.zeros(1), {}

            def step(self, action):
                return np.zeros(1), 0.0, False, False, {}
    """),
    "check": textwrap.dedent("""
        @seq.check
        def check(self, env):
            return seq.Step(done=True, metrics={"success": 1.0})
    """),
    "policy": textwrap.dedent("""
        @seq.policy(name="still")
        class Still(seq.Policy):
            @seq.infer
            def infer(self, obs, *, seed=None, instruction=None):
                return np.zeros(1)
    """),
}


def _module(text: str) -> str:
    """A benchmark module's text, with the shared parts where it says {env}, {check}, {policy}."""
    lines = []
    for line in textwrap.dedent(text).splitlines():
        part = line.strip()
        if part in ("{env}", "{check}", "{policy}"):
            indent = line[: len(line) - len(line.lstrip())]
            lines += [indent + shared if shared else "" for shared in SHARED[part[1:-1]].strip().splitlines()]
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"

LEAVING = _module("""
    import atexit
    import os
    import threading
    import time

    import numpy as np

    import seq

    MARKS = os.environ["SEQ_TEST_MARKS"]


    def _mark(name):
        with open(os.path.join(MARKS, f"{name}-{os.getpid()}"), "w") as file:
            file.write(name)


    def _leaving():
        print(f"atexit handler ran in {os.getpid()}", flush=True)
        _mark("atexit")


    def _late_writer():
        time.sleep(0.3)
        _mark("thread")


    {env}

    @seq.benchmark(name="leaving", conditions=seq.conditions(tasks=["a"], seeds=range(2)), max_steps=2)
    class Leaving(seq.Benchmark):
        @seq.setup
        def setup(self):
            atexit.register(_leaving)
            threading.Thread(target=_late_writer).start()  # not a daemon: Python's exit waits for it

        @seq.reset
        def reset(self, seed, variant):
            return Env()

        {check}


    {policy}
""")


def _deploy_marking(tmp_path: Path, monkeypatch, module: str, check: bool) -> Path:
    """Deploy a benchmark module that writes its marks into the folder returned."""
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("SEQ_TEST_MARKS", str(marks))
    (tmp_path / "marking.py").write_text(module)
    seq.deploy(tmp_path / "marking.py", check=check)
    return marks


def _wait_until(condition: Callable[[], bool], seconds: float = 60) -> None:
    """Until `condition` holds or `seconds` pass: what a worker does after its eval returned."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_worker_imports_neither_the_record_nor_the_reports_statistics():
    probe = f"{WORKER_IMPORTS}; import json, sys; print(json.dumps(sorted(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(json.loads(run.stdout))
    assert "seq.engine.worker" in loaded and "numpy" in loaded
    heavy = {"sqlite3", "seq.record.store", "seq.stats.intervals", "scipy", "importlib.metadata"}
    assert loaded & heavy == set()


def test_a_worker_ends_as_python_would_its_threads_joined_and_its_exit_handlers_run(
    tmp_path: Path, monkeypatch
):
    marks = _deploy_marking(tmp_path, monkeypatch, LEAVING, check=True)
    report = seq.eval.run("still", benchmark="leaving", envs=2)
    assert report.status == "completed" and len(report.episodes) == 2
    # what the two workers printed while they left, kept (seq.deploy's check ran the setup too)
    logged = [line.text for line in seq.eval.logs(report.eval_id) if "atexit handler ran" in line.text]
    workers = {line.split()[-1] for line in logged}
    assert len(logged) == len(workers) == 2
    expected = {f"{name}-{pid}" for name in ("atexit", "thread") for pid in workers}
    _wait_until(lambda: expected <= {path.name for path in marks.iterdir()})  # reaped after the eval
    assert expected <= {path.name for path in marks.iterdir()}  # each joined its thread, ran its handler


POOLED = _module("""
    import concurrent.futures
    import os

    import numpy as np

    import seq

    POOL = concurrent.futures.ThreadPoolExecutor(max_workers=1)  # never shut down, as often


    {env}

    @seq.benchmark(name="pooled", conditions=seq.conditions(tasks=["a"], seeds=range(2)), max_steps=2)
    class Pooled(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            POOL.submit(os.getpid).result()
            open(os.path.join(os.environ["SEQ_TEST_MARKS"], str(os.getpid())), "w").close()
            return Env()

        {check}


    {policy}
""")


def _alive(pid: int) -> bool:
    """Whether `pid` runs still (a zombie, exited and not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_worker_whose_benchmark_keeps_a_thread_pool_still_exits(tmp_path: Path, monkeypatch):
    # a ThreadPoolExecutor never shut down: Python's exit ends its threads (threading's exit
    # hooks) before it joins the others; joining them alone waits for good
    marks = _deploy_marking(tmp_path, monkeypatch, POOLED, check=False)
    report = seq.eval.run("still", benchmark="pooled", envs=1)
    assert report.status == "completed" and len(report.episodes) == 2
    (worker,) = {int(path.name) for path in marks.iterdir()}
    _wait_until(lambda: not _alive(worker))
    try:
        assert not _alive(worker), "the worker is still running after its eval ended"
    finally:
        if _alive(worker):
            os.kill(worker, signal.SIGKILL)


KEEPS_FILES_OPEN = _module("""
    import ctypes
    import os

    import numpy as np

    import seq

    MARKS = os.environ["SEQ_TEST_MARKS"]
    LOG = open(os.path.join(MARKS, "python.log"), "a")  # kept open the worker's life, never closed
    LIBC = ctypes.CDLL(None)
    LIBC.fopen.restype = ctypes.c_void_p
    LIBC.fputs.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    NATIVE = LIBC.fopen(os.path.join(MARKS, "native.log").encode(), b"a")  # a C library's log


    {env}

    @seq.benchmark(name="logging", conditions=seq.conditions(tasks=["a"], seeds=range(2)), max_steps=2)
    class Logging(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            LOG.write(f"episode {seed}\\n")
            LIBC.fputs(f"episode {seed}\\n".encode(), NATIVE)
            return Env()

        {check}


    {policy}
""")


def test_what_a_worker_wrote_to_files_it_never_closed_is_kept(tmp_path: Path, monkeypatch):
    # Python's exit closes the files its modules hold and the C library's exit flushes its
    # FILE*s: a worker that leaves without either keeps what they hold all the same
    marks = _deploy_marking(tmp_path, monkeypatch, KEEPS_FILES_OPEN, check=False)
    report = seq.eval.run("still", benchmark="logging", envs=1)
    assert report.status == "completed"
    expected = "episode 0\nepisode 1\n"
    logs = [marks / "python.log", marks / "native.log"]
    _wait_until(lambda: [log.read_text() for log in logs] == [expected] * 2)  # it exits after the eval
    assert [log.read_text() for log in logs] == [expected] * 2


KEEPING = _module("""
    import os

    import numpy as np

    import seq

    {env}

    class ClosingEnv(Env):
        def close(self):
            with open(os.path.join(os.environ["SEQ_TEST_MARKS"], "closed"), "a") as marks:
                marks.write(f"closed in {os.getpid()}\\n")


    class Unclosable(Env):
        def close(self):
            raise RuntimeError("already gone")


    @seq.benchmark(name="keeping", conditions=seq.conditions(tasks=["a", "b"], seeds=range(2)), max_steps=2)
    class Keeping(seq.Benchmark):
        @seq.setup
        def setup(self):
            self.envs = {"a": Unclosable(), "b": ClosingEnv()}  # one env per task, kept across episodes

        @seq.reset
        def reset(self, seed, variant):
            return self.envs[variant.task]

        {check}


    {policy}
""")


def test_a_worker_closes_each_env_its_benchmark_kept_once_when_it_ends(tmp_path: Path, monkeypatch):
    marks = _deploy_marking(tmp_path, monkeypatch, KEEPING, check=False)
    report = seq.eval.run("still", benchmark="keeping", envs=1)
    assert report.status == "completed" and len(report.episodes) == 4
    _wait_until(lambda: (marks / "closed").exists())
    assert len((marks / "closed").read_text().splitlines()) == 1  # the env failing to close costs nothing
