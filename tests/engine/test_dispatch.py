"""One dispatcher for every backend: local processes and this process give the same rows, errors
included, and the dispatcher's rules (replacement, the watchdog, rounds) hold on each."""

from __future__ import annotations

import importlib.util
import re
import textwrap

import pytest

import seq
from seq.engine.dispatch import Backend, Dispatcher, WorkersFailed
from seq.engine.inprocess import InProcessBackend
from seq.engine.local import LocalBackend
from seq.engine.ray_backend import RayBackend


def _where(error: str | None) -> str | None:
    """An error with its files' folders left out: a module imported in this process is imported
    once per sha, from whichever test's file came first."""
    return None if error is None else re.sub(r'File "[^"]*/', 'File "', error)


def _rows(report: seq.Report) -> list:
    return [
        (
            e.item_id,
            e.status,
            e.ended_by,
            e.steps,
            {k: v for k, v in e.metrics.items() if k != "duration_s"},
            _where(e.error),
        )
        for e in report.episodes
    ]


def _toy_policy(toy_file):
    spec = importlib.util.spec_from_file_location("toy_for_dispatch", toy_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LineController()


def test_this_process_and_worker_processes_give_the_same_rows_and_errors(toy_file):
    seq.deploy(toy_file)
    # every task of line-errors but the one whose policy exits its process (it would end this one)
    tasks = ["near", "boom-reset", "hang", "far"]
    local = seq.eval.run("line-controller", benchmark="line-errors", tasks=tasks, envs=2)
    here = seq.evaluate(_toy_policy(toy_file), "line-errors", tasks=tasks)
    assert here.done == local.done == 5
    assert {e.status for e in local.episodes} == {"ok", "error", "timed_out"}
    assert any("RuntimeError: this task cannot be built" in (e.error or "") for e in local.episodes)
    assert _rows(here) == _rows(local)


def test_every_backend_is_driven_by_the_scheduler_alone():
    """A backend starts workers and moves messages; none schedules (no `run`)."""
    for backend in (LocalBackend, RayBackend, InProcessBackend):
        assert not hasattr(backend, "run")
        for method in ("start", "send", "receive", "stop", "release", "close"):
            assert callable(getattr(backend, method)), (backend, method)
    assert Backend.__module__ == Dispatcher.__module__ == "seq.engine.dispatch"


def test_workers_that_die_before_they_are_ready_stop_the_eval(tmp_path):
    path = tmp_path / "dies.py"
    path.write_text(
        textwrap.dedent(
            """
            import os
            import seq

            @seq.benchmark(name="dies-at-setup", conditions=seq.conditions(tasks=["a"], seeds=range(4)))
            class DiesAtSetup(seq.Benchmark):
                @seq.setup
                def setup(self):
                    os._exit(3)

                @seq.reset
                def reset(self, seed, variant):
                    raise AssertionError("never reached")

                @seq.check
                def check(self, env):
                    return seq.Step(done=True)
            """
        )
    )
    seq.deploy(path, check=False)  # its check at deploy would refuse it
    with pytest.raises(WorkersFailed, match=r"exit code 3\) before it was ready, 3 times"):
        seq.eval.run("random", benchmark="dies-at-setup", envs=2)
    (row,) = seq.eval.ls()
    assert row["status"] == "incomplete"  # no worker could start: its items wait for a --resume
