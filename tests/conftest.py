"""Shared fixtures: a fresh SEQ_HOME per test, and a small pure-Python benchmark and policy."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TOY = textwrap.dedent('''
    """A point on a line that must reach its task's goal: a tiny, real, deterministic env."""
    import os
    import time

    import numpy as np

    import seq

    GOALS = {"near": 0.5, "far": 2.0, "slow": 1.0, "boom-reset": 1.0, "crash": 1.0, "hang": 1.0, "wedge": 1.0}


    class LineEnv:
        """Gymnasium-style: reset(seed) -> (obs, info); step(a) -> 5-tuple."""

        def __init__(self, goal, delay=0.0, old_api=False, goal_name=""):
            self.goal, self.delay, self.old_api, self.goal_name = goal, delay, old_api, goal_name
            self.action_space = None

        def reset(self, seed=None):
            rng = np.random.default_rng(seed)
            self.x = float(rng.uniform(-1.0, 0.0))
            obs = np.array([self.x, self.goal])
            return obs if self.old_api else (obs, {})

        def step(self, action):
            if self.goal_name == "wedge":
                time.sleep(600)  # a blocking call the episode loop cannot interrupt
            if self.delay:
                time.sleep(self.delay)
            self.x += float(np.clip(np.asarray(action).reshape(-1)[0], -0.1, 0.1))
            distance = abs(self.x - self.goal)
            obs = np.array([self.x, self.goal])
            if self.old_api:
                return obs, -distance, False, {}
            return obs, -distance, False, False, {}


    @seq.benchmark(
        name="line",
        conditions=seq.conditions(
            tasks=["near", "far"], seeds=range(3), suite_of={"near": "easy", "far": "hard"}
        ),
        max_steps=60,
    )
    class Line(seq.Benchmark):
        @seq.setup
        def setup(self, delay: float = 0.0, old_api: bool = False):
            self.delay, self.old_api = delay, old_api

        @seq.reset
        def reset(self, seed, variant):
            if variant.task == "boom-reset":
                raise RuntimeError("this task cannot be built")
            delay = 0.3 if variant.task == "hang" else self.delay
            return LineEnv(GOALS[variant.task], delay, self.old_api, variant.task)

        @seq.check
        def check(self, env):
            distance = abs(env.x - env.goal)
            success = float(distance < 0.05)
            return seq.Step(done=bool(success), metrics={"success": success, "distance": distance})

        @seq.score
        def score(self, results):
            wins = [r for r in results if r.metrics["success"]]
            return {"fast_success": sum(r.steps <= 12 for r in wins) / len(results)}


    @seq.benchmark(
        name="line-errors",
        conditions=[seq.Condition(task="near", seed=0), seq.Condition(task="boom-reset", seed=0),
                    seq.Condition(task="boom-reset", seed=1), seq.Condition(task="crash", seed=0),
                    seq.Condition(task="hang", seed=0, timeout_s=0.5), seq.Condition(task="far", seed=1)],
        max_steps=60,
    )
    class LineErrors(Line):
        pass


    @seq.benchmark(
        name="line-wedge",
        conditions=[seq.Condition(task="near", seed=0), seq.Condition(task="wedge", seed=0, timeout_s=0.5),
                    seq.Condition(task="far", seed=0)],
        max_steps=60,
    )
    class LineWedge(Line):
        pass


    @seq.policy(name="line-controller")
    class LineController(seq.Policy):
        """Moves toward the goal, with optional seeded noise; `chunk` > 1 returns an action chunk."""

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None, noise: float = 0.0, chunk: int = 1):
            if instruction == "crash":
                os._exit(7)
            step = np.clip(obs[1] - obs[0], -0.1, 0.1)
            rng = np.random.default_rng(seed)
            actions = [[step + rng.normal(0.0, noise)] for _ in range(chunk)]
            return np.array(actions) if chunk > 1 else np.array(actions[0])
''')


@pytest.fixture(scope="session")
def shared_images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One image cache for the whole run: a built image is the same in every workspace."""
    return tmp_path_factory.mktemp("seq-images")


@pytest.fixture(autouse=True)
def seq_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_images: Path) -> Path:
    home = tmp_path / "seq-home"
    monkeypatch.setenv("SEQ_HOME", str(home))
    monkeypatch.setenv("SEQ_IMAGES", str(shared_images))
    return home


@pytest.fixture
def toy_file(tmp_path: Path) -> Path:
    path = tmp_path / "line_bench.py"
    path.write_text(TOY)
    return path


def run_cli(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the `seq` command line in a subprocess, as a user would."""
    return subprocess.run(
        [sys.executable, "-c", "from seq.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def default_ctrl_c() -> None:
    """`preexec_fn` for a child a test stops with SIGINT: a shell's background job (`pytest &`)
    starts its children with SIGINT ignored, and Python keeps it so; give it the default back."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def refused_in_one_line(result: subprocess.CompletedProcess, *fragments: str) -> None:
    """The command exited with code 2 and said why in one line holding every fragment, no traceback."""
    assert result.returncode == 2, result.stderr + result.stdout
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


# -- the contributor's short path: `pytest -m "not slow" -n 2` leaves out real simulators, images,
# Ray, a real browser, tests that kill processes or wait for schedules, and the files of command-line
# integration tests that take several seconds a test; CI runs everything.

SLOW = (
    "tests/shelf/",
    "tests/evolve/test_metaworld_loop.py",
    "tests/evolve/test_libero_operators.py",  # builds LIBERO's image; ~90 s of LIBERO physics
    "tests/isolation/test_image_evals.py",
    "tests/isolation/test_images.py",
    "tests/engine/test_ray_backend.py",
    "tests/engine/test_served_evals.py",
    "tests/engine/test_shards.py",
    "tests/cli/test_resume.py",
    "tests/report/test_tracking.py",
    "tests/registry/test_benchmark_compare.py",
    "tests/seqbench/test_seqbench_calibration_screen.py",
    "tests/capture/test_video.py",
    "tests/authoring/test_full_example.py",
    "tests/serving/test_serving_metaworld.py",
    "tests/serving/test_serving_fuzz.py::test_a_server_survives",
    "tests/test_image.py",
    "tests/engine/test_composite_metaworld.py",
    "tests/grid/test_grid_metaworld.py",
    # the port tools build their image (and robosuite's); a fresh machine compiles Warp's kernels
    "tests/port/test_port_metaworld.py",
    "tests/port/test_port_robosuite.py",
    "tests/port/test_port_scaffold.py",
    "tests/port/test_port_own_model.py",
    "tests/port/test_port_batched.py",
    "tests/port/test_lift_warp.py",  # robosuite's Lift and its Warp port, 2 seeds each (~2 min)
    "tests/port/test_port_sapien.py",  # ManiSkill's image, PickCube on SAPIEN's CPU PhysX (~2 min)
    "tests/port/test_gpu_script.py",  # builds the port's image to run bench/gpu.sh up to its GPU call
    "tests/cli/test_deploy_check.py::test_a_benchmark_whose_image_lacks_a_module",
    # processes killed and waited for, schedules waited for, a real browser, MetaWorld traces
    "tests/faults/test_record_honesty.py",
    "tests/faults/test_policy_failures.py",
    "tests/scheduling/test_schedules.py",
    "tests/scheduling/test_scheduler_install.py",
    "tests/console/test_console_browser.py",
    "tests/evolve/test_traces.py",
    "tests/evolve/test_scene_detectors.py",
    "tests/evolve/test_export_videos.py",
    "tests/evolve/test_export_reruns.py",
    # command-line integration files of several seconds a test (each command a fresh Python)
    "tests/cli/test_commands.py",
    "tests/cli/test_eval_options.py",
    "tests/cli/test_output_files.py",
    "tests/console/test_console_app.py",
    "tests/engine/test_eval_logs.py",
    "tests/grid/test_grid_hardening.py",
    "tests/grid/test_grid_review.py",
    "tests/port/test_port_inputs.py",
    "tests/registry/test_deploy.py",
    "tests/report/test_html.py",
    "tests/evolve/test_loop_toy.py",
    "tests/evolve/test_evolve_cli_output.py",
    "tests/evolve/test_report_html.py",
    "tests/serving/test_serving_remote_policies.py",
    "tests/record/test_record_check.py",
    "tests/registry/test_policy_instances.py",
    "tests/registry/test_versions.py",
    "tests/cli/test_deploy_check.py",
    "tests/scheduling/test_eval_trend.py",
    "tests/grid/test_config.py",
    "tests/grid/test_grid_operations.py",
    "tests/isolation/test_volumes.py",
    "tests/security/",  # each attack replayed through the real CLI and a real seq ui
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


# -- skips: every skip is either on this list, with its reason, or a failure ------------------------
# The README's test command installs every extra these tests need, so a skip there means a test
# did not test what it claims. Only what depends on the machine itself may skip; each entry is a
# node id prefix and the reason it may. `SEQ_ALLOW_SKIPS=1` lifts the rule for a partial install.
ALLOWED_SKIPS = {
    "tests/console/test_console_browser.py": "a real browser needs Debian's chromium (.ci/run installs it)",
    "tests/shelf/test_maniskill.py": "SAPIEN needs Mesa 25's Vulkan driver (tools/install_vulkan.sh)",
    "tests/port/test_port_sapien.py": "SAPIEN needs Mesa 25's Vulkan driver (tools/install_vulkan.sh)",
    "tests/isolation/test_assets_mount.py": "a read-only mount at /assets needs root and mount namespaces",
    "tests/isolation/test_images.py::test_a_missing_apt_package": "naming an apt package needs dpkg",
    "tests/capture/test_lod.py::test_a_lighter_metaworld_frame": "comparing frames needs offscreen OpenGL",
    "tests/evolve/test_metaworld_loop.py::test_lerobot_reads_the_export": "lerobot's reader needs a torch "
    "environment of its own (tools/lerobot_venv.sh; SEQ_LEROBOT_PYTHON)",
    "tests/shelf/test_lerobot.py": "LeRobot 0.4.4 and torch need an environment of their own "
    "(tools/lerobot_venv.sh; SEQ_LEROBOT_PYTHON)",
}
_skipped: list[tuple[str, str]] = []


def _note_skip(report: pytest.CollectReport | pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _skipped.append((report.nodeid, reason.removeprefix("Skipped: ")))


def pytest_collectreport(report: pytest.CollectReport) -> None:
    _note_skip(report)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _note_skip(report)


def _unexpected_skips() -> list[tuple[str, str]]:
    if os.environ.get("SEQ_ALLOW_SKIPS") == "1":
        return []
    return [(node, why) for node, why in _skipped if not any(node.startswith(p) for p in ALLOWED_SKIPS)]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _unexpected_skips() and exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    unexpected = _unexpected_skips()
    if unexpected:
        terminalreporter.section("skips not on tests/conftest.py's ALLOWED_SKIPS (they fail the run)")
        for node, why in unexpected:
            terminalreporter.line(f"{node}: {why}")
        terminalreporter.line("Install what the README's test command installs, or set SEQ_ALLOW_SKIPS=1.")


@pytest.fixture(scope="session")
def ball_scene(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The port tools' fast tests share one export (tests/port): the raw-MuJoCo ball, exported in
    seq's own Python (3 starts, 20 steps); copy it before changing it."""
    from port.scenes import BALL  # tests/ is on sys.path, as for `from conftest import`

    root = tmp_path_factory.mktemp("ball")
    source = root / "ball_bench.py"
    source.write_text(BALL)
    out = root / "scene"
    exported = run_cli(
        "benchmark", "export", f"{source}:Ball", "--out", str(out), "--steps", "20",
        env={"SEQ_HOME": str(root / "home")},
    )
    assert exported.returncode == 0, exported.stderr
    return out
