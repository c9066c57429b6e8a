"""What the fault tests share: policy servers in processes of their own (to kill), the `seq` command
line as a process (to watch while it runs), and a benchmark and policies that fail on purpose."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable

import seq

VLA_EVAL_SERVER = textwrap.dedent("""
    import sys

    import numpy as np
    from vla_eval.model_servers.predict import PredictModelServer
    from vla_eval.model_servers.serve import serve


    class LineModel(PredictModelServer):
        '''The line controller as a vla-eval model server: one step toward the goal.'''

        def predict(self, obs, ctx):
            state = np.asarray(obs["state"], dtype=np.float64)
            return {"actions": np.clip(state[1:2] - state[0:1], -0.1, 0.1).astype(np.float32)}


    serve(LineModel(chunk_size=1), host="127.0.0.1", port=int(sys.argv[1]))
""")

# Policies and a benchmark that break on purpose; `SEQ_FAULT` (set in the eval's environment, which
# its workers inherit) says which fault is on, so that a rerun without it succeeds.
FAULTS = textwrap.dedent('''
    """Policies and a benchmark that fail as the fault tests need."""
    import os

    import numpy as np

    import seq


    def step_toward(obs):
        return np.array([np.clip(obs[1] - obs[0], -0.1, 0.1)])


    @seq.policy(name="flaky")
    class Flaky(seq.Policy):
        """The line controller; with SEQ_FAULT=raise it raises at every act (on task `far` only
        with SEQ_FAULT=raise-far), with SEQ_FAULT=die it kills its worker on task `far`."""

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            fault = os.environ.get("SEQ_FAULT")
            if fault == "raise" or (fault == "raise-far" and instruction == "far"):
                raise RuntimeError("the model is not loaded")
            if fault == "die" and instruction == "far":
                os._exit(9)
            return step_toward(obs)


    @seq.policy(name="returns")
    class Returns(seq.Policy):
        """Returns what `what` names instead of an action on the task `far`: none, text, wide, nan."""

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None, what: str = "none"):
            if instruction != "far":
                return step_toward(obs)
            if what == "none":
                return None
            if what == "text":
                return "move left"
            if what == "wide":
                return np.zeros(3)
            return np.array([np.nan]) if seed % 2 else step_toward(obs)


    class BoxSpace:
        shape = (1,)
        low, high = np.array([-0.1]), np.array([0.1])


    class BoxLine:
        """The line env with a one-number Box action space; `steps_wrong` makes step return 3 values."""

        def __init__(self, goal, steps_wrong=False):
            self.goal, self.steps_wrong, self.action_space = goal, steps_wrong, BoxSpace()

        def reset(self, seed=None):
            self.x = float(np.random.default_rng(seed).uniform(-1.0, 0.0))
            return np.array([self.x, self.goal]), {}

        def step(self, action):
            self.x += float(np.clip(np.asarray(action, dtype=float).reshape(-1)[0], -0.1, 0.1))
            obs = np.array([self.x, self.goal])
            if self.steps_wrong:
                return obs, 0.0, False
            return obs, -abs(self.x - self.goal), False, False, {}


    @seq.benchmark(
        name="box-line",
        conditions=seq.conditions(tasks=["near", "far"], seeds=range(4)),
        max_steps=40,
    )
    class BoxLineBenchmark(seq.Benchmark):
        @seq.setup
        def setup(self, steps_wrong: bool = False, simulator: str = ""):
            self.steps_wrong, self.simulator = steps_wrong, simulator

        @seq.reset
        def reset(self, seed, variant):
            if self.simulator:  # a simulator this environment may not have
                __import__(self.simulator)
            return BoxLine({"near": 0.5, "far": 2.0}[variant.task], self.steps_wrong)

        @seq.check
        def check(self, env):
            success = float(abs(env.x - env.goal) < 0.05)
            return seq.Step(done=bool(success), metrics={"success": success})
''')


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = 120.0) -> None:
    """Poll until `condition()` holds (a generous deadline only catches a hang: no test asserts a
    duration)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def accepting(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def start_server(port: int, kind: str = "vla-eval") -> subprocess.Popen:
    """A policy server on `port` in a process group of its own: vla-eval's (the line controller as
    a `PredictModelServer`) or seq's (`seq policy serve line-controller`)."""
    if kind == "vla-eval":
        command = [sys.executable, "-c", VLA_EVAL_SERVER, str(port)]
    else:
        command = [sys.executable, "-c", "from seq.cli import main; main()", "policy", "serve"]
        command += ["line-controller", "--port", str(port)]
    server = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        wait_until(lambda: accepting(port) or server.poll() is not None, "the policy server", 60)
    except AssertionError:
        kill(server)
        raise
    assert server.poll() is None, server.communicate(timeout=5)
    return server


def kill(server: subprocess.Popen) -> None:
    """SIGKILL the server and everything it started, as a crash or an OOM killer would."""
    try:
        os.killpg(server.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    server.wait(30)


def cli(*args: str, env: dict | None = None) -> subprocess.Popen:
    """`seq ARGS` running in the background, at 80 columns."""
    return subprocess.Popen(
        [sys.executable, "-c", "from seq.cli import main; main()", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "80", **(env or {})},
    )


def rows(eval_id: str) -> list[seq.EpisodeResult]:
    """Every episode row of the eval, earlier attempts and infrastructure failures included."""
    store = seq.Store()
    try:
        return store.attempts(eval_id)
    finally:
        store.close()


def only_eval() -> str:
    (row,) = seq.eval.ls()
    return row["id"]


def run_without(module: str, *args: str) -> subprocess.CompletedProcess:
    """`seq ARGS` in a Python where `module` is not installed (`import` fails, `find_spec` finds
    nothing), as in an environment without the extra that installs it."""
    code = f"import sys; sys.modules[{module!r}] = None; from seq.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )
