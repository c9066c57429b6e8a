"""The check at deploy: `seq deploy` runs one short episode of each benchmark where it runs, keeps
what it printed and measured (`seq benchmark logs`, `seq benchmark ls`), and fails, naming the
module, when the benchmark's environment lacks one."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import refused_in_one_line, run_cli

import seq

TALKATIVE = textwrap.dedent("""
    import os
    import sys

    import numpy as np

    import seq


    class Box:
        def __init__(self, low, high, shape):
            self.low, self.high, self.shape = np.full(shape, low), np.full(shape, high), shape


    class Env:
        action_space = Box(-1.0, 1.0, (2,))

        def observe(self):
            return {"state": self.x.copy(), "front_image": np.zeros((8, 8, 3), np.uint8)}

        def reset(self, seed=None):
            self.x = np.zeros(2)
            return self.observe(), {}

        def step(self, action):
            assert action.shape == (2,) and np.all(np.abs(action) <= 1.0)
            self.x += action
            return self.observe(), 0.0, False, False, {}


    @seq.benchmark(name="talkative", conditions=seq.conditions(tasks=["t"], seeds=range(1)), max_steps=10,
                   render=seq.Record(camera="front"))
    class Talkative(seq.Benchmark):
        @seq.setup
        def setup(self):
            print("renderer: test-gl 1.0")
            os.write(2, b"a line from below Python\\n")

        @seq.reset
        def reset(self, seed, variant):
            return Env()

        @seq.check
        def check(self, env):
            return seq.Step(done=False, metrics={"success": 0.0})


    @seq.benchmark(name="missing-module", conditions=seq.conditions(tasks=["t"], seeds=range(1)))
    class MissingModule(Talkative):
        @seq.setup
        def setup(self):
            import seq_no_such_module_xyz  # noqa: F401
""")


def _deploy(tmp_path: Path, text: str, *flags: str):
    path = tmp_path / "talkative.py"
    path.write_text(text)
    return run_cli("deploy", f"{path}:Talkative" if not flags else str(path), *flags)


def test_deploy_checks_a_benchmark_and_benchmark_logs_shows_what_it_printed_and_measured(tmp_path):
    done = _deploy(tmp_path, TALKATIVE)
    assert done.returncode == 0, done.stderr
    assert "talkative@v1  (benchmark, registered)" in done.stdout and "check: ready: 5 steps" in done.stdout
    assert "renderer: test-gl" not in done.stdout + done.stderr  # kept, not shown
    check = seq.benchmark_logs("talkative")
    assert check.status == "ready" and check.error is None
    assert "renderer: test-gl 1.0" in check.output and "a line from below Python" in check.output
    figures = check.figures
    assert figures["observation"] == {"state": "[2] float64", "front_image": "[8, 8, 3] uint8"}
    assert figures["action_space"]["shape"] == [2] and figures["steps"] == 5 and figures["step_ms"] > 0
    assert figures["frame"] == "[8, 8, 3] uint8" and figures["condition"] == "t|seed=0"
    shown = run_cli("benchmark", "logs", "talkative")
    assert shown.returncode == 0
    assert "talkative@v1: ready" in shown.stdout and "renderer: test-gl 1.0" in shown.stdout
    assert "state [2] float64" in shown.stdout
    (row,) = [b for b in json.loads(run_cli("benchmark", "ls", "--json").stdout) if b["name"] == "talkative"]
    assert row["status"] == "ready" and row["check"]["steps"] == 5
    table = run_cli("benchmark", "ls").stdout
    assert "ready" in table and "ms/step" in table and "built-in" in table


def test_a_benchmark_missing_a_module_fails_deploy_naming_it_and_keeps_the_check(tmp_path):
    path = tmp_path / "talkative.py"
    path.write_text(TALKATIVE)
    done = run_cli("deploy", f"{path}:MissingModule")
    refused_in_one_line(done, "missing-module@v1", "'seq_no_such_module_xyz'", "seq benchmark logs")
    assert "missing-module@v1  (benchmark, registered)" in done.stdout
    check = seq.benchmark_logs("missing-module")
    assert check.status == "failed check" and check.figures["failure"]["stage"] == "setup"
    assert check.figures["failure"]["module"] == "seq_no_such_module_xyz"
    shown = run_cli("benchmark", "logs", "missing-module", "--version", "1")
    assert "failed check" in shown.stdout and "ModuleNotFoundError" in shown.stdout
    (row,) = [b for b in seq.benchmarks() if b["name"] == "missing-module"]
    assert row["status"] == "failed check"
    assert run_cli("deploy", f"{path}:MissingModule").returncode == 2  # checked again: still failing
    assert run_cli("deploy", f"{path}:MissingModule", "--no-check").returncode == 0


def test_benchmark_logs_refuses_what_it_cannot_show(tmp_path, toy_file):
    seq.deploy(toy_file, check=False)
    refused_in_one_line(run_cli("benchmark", "logs", "line"), "line@v1 was not checked")
    refused_in_one_line(run_cli("benchmark", "logs", "line", "--version", "7"), "--version 7", "v1")
    refused_in_one_line(run_cli("benchmark", "logs", "no-such-bench"), "'no-such-bench'")
    seq.deploy(toy_file)  # the same version, checked now
    assert seq.benchmark_logs("line").figures["observation"] == "[2] float64"


def test_a_benchmark_whose_image_lacks_a_module_fails_deploy_naming_it(tmp_path):
    """The module imports in this environment, not in the benchmark's image (one of
    tests/isolation/test_images.py's, cached for the session)."""
    source = tmp_path / "in_an_image.py"
    source.write_text(
        textwrap.dedent("""
        import seq

        IMAGE = seq.Image.debian_slim().uv_pip_install("six==1.16.0").env({"SEQ_TEST_FLAG": "on"})
        with IMAGE.imports():
            import gymnasium  # installed here, not in the image

        @seq.benchmark(name="image-lacks", conditions=[seq.Condition(task="a", seed=0)], image=IMAGE)
        class ImageLacks(seq.Benchmark):
            @seq.setup
            def setup(self):
                print(f"setup sees SEQ_TEST_FLAG={__import__('os').environ.get('SEQ_TEST_FLAG')}")

            @seq.reset
            def reset(self, seed, variant):
                return gymnasium.make("CartPole-v1")

            @seq.check
            def check(self, env):
                return seq.Step(done=True)
        """)
    )
    done = run_cli("deploy", str(source))
    refused_in_one_line(done, "image-lacks@v1", "module 'gymnasium' is not installed in its image")
    check = seq.benchmark_logs("image-lacks")
    assert check.status == "failed check" and check.figures["failure"]["stage"] == "import"
    assert check.figures["image"]["key"]
    shown = run_cli("benchmark", "logs", "image-lacks")
    assert "-- image " in shown.stdout and "No module named 'gymnasium'" in shown.stdout


def test_a_benchmark_that_ends_its_process_fails_its_check_not_the_deploy(tmp_path):
    path = tmp_path / "exits.py"
    path.write_text(
        TALKATIVE.replace("import seq_no_such_module_xyz  # noqa: F401", 'print("leaving"); os._exit(3)')
    )
    with pytest.raises(seq.CheckFailed, match=r"its check failed at setup .*exited with code 3") as failed:
        seq.deploy(f"{path}:MissingModule")  # this process goes on: the check ran in a fork of it
    assert [d.version.label for d in failed.value.deployed] == ["missing-module@v1"]
    check = seq.benchmark_logs("missing-module")
    assert check.status == "failed check" and "leaving" in check.output
