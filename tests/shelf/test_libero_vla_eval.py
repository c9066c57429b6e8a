"""seq's `libero` against vla-eval's own LIBERO benchmark (`vla_eval.benchmarks.libero`, vla-eval
0.8.0, on the same `libero` package): one deterministic policy served in vla-eval's protocol, both
harnesses at once, libero_spatial × 10 tasks × init states 0 and 1, 3 steps an episode. Every
observation either harness sends (both cameras' pixels and the state) must be the same, episode for
episode and step for step, and so must each episode's steps and outcome.

The policy's action is drawn from a hash of every pixel and the state it is shown, so one pixel off
anywhere would send the two episodes apart. The protocol allows any step limit (vla-eval's
`max_steps`, seq's `--max-steps`); 3 keeps it short, and the 10 wait steps, the init states and
the fixtures' places (drawn from `np.random` in LIBERO's reset) are all before the first one.

vla-eval imports torch only to patch `torch.load` for upstream's pickled init states; the package's
are `.npz` and it never calls it, so a module named `torch` with a `load` that raises stands in.
vla-eval's state turns the orientation into an axis-angle in float32 (`quat_no_antipodal: true` is
robosuite's formula, as openpi's LIBERO client and seq use): states are compared as float32.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import textwrap
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

import seq
from seq.capture.trajectory import read_trajectory
from seq.shelf.libero_tasks import SUITES

STEPS = 3
SERVER = '''
import hashlib, json, sys
import numpy as np
from vla_eval.model_servers.predict import PredictModelServer
from vla_eval.model_servers.serve import serve


class Digest(PredictModelServer):
    """Acts on a hash of every pixel and the state; logs what it was shown, one line a step."""

    def __init__(self, log):
        super().__init__()
        self.log = open(log, "a", buffering=1)

    def predict(self, obs, ctx):
        if "images" in obs:  # vla-eval's LIBERO benchmark
            images, state, client = obs["images"], obs["states"], "vla-eval"
        else:  # seq's libero benchmark
            images = {"agentview": obs["agentview_image"], "wrist": obs["wrist_image"]}
            state, client = obs["state"], "seq"
        agent, wrist = images["agentview"], images["wrist"]
        state = np.asarray(state, dtype=np.float32)
        digest = hashlib.sha256(
            np.ascontiguousarray(agent).tobytes() + np.ascontiguousarray(wrist).tobytes() + state.tobytes()
        )
        line = {"client": client, "episode": ctx.episode_id, "step": ctx.step, "digest": digest.hexdigest(),
                "state": state.tolist(), "shape": list(agent.shape)}
        self.log.write(json.dumps(line) + "\\n")
        noise = np.frombuffer(digest.digest()[:4], dtype=np.uint8) / 255.0 - 0.5
        action = [noise[0], noise[1], 0.5 * noise[2], 0.0, 0.0, 0.0, 1.0 if noise[3] > 0 else -1.0]
        return {"actions": np.array(action, dtype=np.float32)}


serve(Digest(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[1]))
'''
TORCH_STAND_IN = '''
def load(*args, **kwargs):
    raise RuntimeError("torch.load was called, and this environment has no torch")
'''


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(port: int, server: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert server.poll() is None, server.stderr.read() if server.stderr else "the server exited"
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise AssertionError("the model server did not listen")


def test_every_observation_step_and_outcome_agrees_with_vla_eval(tmp_path: Path):
    from seq.isolation.images import ensure_image
    from seq.shelf.libero import IMAGE

    image = ensure_image(IMAGE.uv_pip_install("vla-eval==0.8.0"))
    (tmp_path / "server.py").write_text(SERVER)
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(TORCH_STAND_IN)
    (tmp_path / "vla.yaml").write_text(
        textwrap.dedent(f"""
        benchmarks:
          - benchmark: vla_eval.benchmarks.libero.benchmark:LIBEROBenchmark
            params:
              suite: libero_spatial
              send_wrist_image: true
              send_state: true
              quat_no_antipodal: true
            episodes_per_task: 2
            max_steps: {STEPS}
        output_dir: {tmp_path / "vla-out"}
        """)
    )
    port, log = _free_port(), tmp_path / "seen.jsonl"
    server = subprocess.Popen(
        [str(image.python), str(tmp_path / "server.py"), str(port), str(log)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(port, server)
        vla_eval = subprocess.Popen(
            [
                *(str(image.path / "bin" / "vla-eval"), "run", "-c", str(tmp_path / "vla.yaml")),
                *("--no-docker", "--server-url", f"ws://127.0.0.1:{port}"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
        )
        report = seq.eval.run(  # meanwhile: both harnesses at once, on the machine's two cores
            benchmark="libero",
            policy_url=f"ws://127.0.0.1:{port}",
            policy_protocol="vla-eval",
            suites=["libero_spatial"],
            seeds=[0, 1],
            max_steps=STEPS,
            envs=1,
            trajectories=True,
        )
        output = vla_eval.communicate(timeout=1500)[0]
        assert vla_eval.returncode == 0, output[-4000:]
    finally:
        server.terminate()
        server.wait(timeout=30)

    seen: dict[str, list[dict]] = defaultdict(list)
    for line in log.read_text().splitlines():
        record = json.loads(line)
        seen[record["episode"]].append(record)
    instruction = {name: language for name, language, _ in SUITES["libero_spatial"]}
    # vla-eval's episodes by (task, init state), from its own results; seq's from its record,
    # each found in the server's log by the states its trajectory holds
    (results,) = (tmp_path / "vla-out").glob("*_aggregate.json")
    theirs = {
        (episode["name"], episode["episode_idx"]): (episode, seen.pop(episode["eid"]))
        for task in json.loads(results.read_text())["tasks"]
        for episode in task["episodes"]
    }
    ours = {}
    for episode in report.episodes:
        observations = read_trajectory(episode.artifacts["trajectory"]).observations
        states = [np.float32(observation["state"]).tolist() for observation in observations]
        (match,) = [key for key, steps in seen.items() if [s["state"] for s in steps] == states[:STEPS]]
        ours[instruction[episode.task], episode.seed] = (episode, seen.pop(match))
    assert not seen and len(ours) == len(theirs) == 20 and set(ours) == set(theirs)
    for key, (episode, steps) in ours.items():
        their_episode, their_steps = theirs[key]
        assert [s["client"] for s in steps] == ["seq"] * STEPS
        assert [s["client"] for s in their_steps] == ["vla-eval"] * STEPS
        assert steps[0]["shape"] == [256, 256, 3]
        assert [s["digest"] for s in steps] == [s["digest"] for s in their_steps], key
        assert episode.steps == their_episode["steps"] == STEPS
        assert episode.metrics["success"] == float(their_episode["metrics"]["success"])
    first_images = {steps[0]["digest"] for _, steps in ours.values()}
    assert len(first_images) == 20  # each task and init state is a scene of its own


LAYOUT_SERVER = '''
import hashlib, json, sys
import numpy as np
from vla_eval.model_servers.predict import PredictModelServer
from vla_eval.model_servers.serve import serve


class LiberoOnly(PredictModelServer):
    """A vla-eval LIBERO model server: reads vla-eval's LIBERO layout and nothing else, and logs a
    hash of each array it was shown, with its dtype, and the episode's task."""

    def __init__(self, log):
        super().__init__()
        self.log = open(log, "a", buffering=1)
        self.tasks = {}

    async def on_episode_start(self, config, ctx):
        await super().on_episode_start(config, ctx)
        self.tasks[ctx.session_id] = config["task"]

    def predict(self, obs, ctx):
        images, states, controller = obs["images"], obs["states"], obs["controller_states"]
        shown = [images["agentview"], images["wrist"], states, controller]
        digest = hashlib.sha256(b"".join(np.ascontiguousarray(a).tobytes() for a in shown))
        digest.update(obs["task_description"].encode())
        task = self.tasks[ctx.session_id]
        line = {"episode": [task["name"], task["episode_idx"]], "task_id": task["task_id"],
                "suite": task["suite"], "step": ctx.step, "digest": digest.hexdigest(),
                "dtypes": [str(a.dtype) for a in shown], "keys": sorted(obs)}
        self.log.write(json.dumps(line) + "\\n")
        noise = np.frombuffer(digest.digest()[:4], dtype=np.uint8) / 255.0 - 0.5
        action = [noise[0], noise[1], 0.5 * noise[2], 0.0, 0.0, 0.0, noise[3]]
        return {"actions": np.array(action, dtype=np.float32)}


serve(LiberoOnly(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[1]))
'''


def test_a_vla_eval_libero_server_runs_unchanged_through_libero_to_vla_eval(tmp_path: Path):
    """A server that reads only vla-eval's LIBERO layout (`images`, `states`, `controller_states`,
    its task's `name`, `task_id`) runs under seq through the built-in `libero-to-vla-eval` (no
    `seq deploy`), shown what vla-eval's LIBERO benchmark shows it: every array byte for byte,
    in its dtype, the same task fields, the same gripper rule (the action's gripper is left
    continuous: both harnesses make it ±1), libero_goal × 10 tasks × init state 0."""
    from seq.isolation.images import ensure_image
    from seq.shelf.libero import IMAGE

    image = ensure_image(IMAGE.uv_pip_install("vla-eval==0.8.0"))
    (tmp_path / "server.py").write_text(LAYOUT_SERVER)
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(TORCH_STAND_IN)
    (tmp_path / "vla.yaml").write_text(
        textwrap.dedent(f"""
        benchmarks:
          - benchmark: vla_eval.benchmarks.libero.benchmark:LIBEROBenchmark
            params:
              suite: libero_goal
              send_wrist_image: true
              send_state: true
            episodes_per_task: 1
            max_steps: {STEPS}
        output_dir: {tmp_path / "vla-out"}
        """)
    )
    port, log = _free_port(), tmp_path / "seen.jsonl"
    server = subprocess.Popen(
        [str(image.python), str(tmp_path / "server.py"), str(port), str(log)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    served = dict(policy_url=f"ws://127.0.0.1:{port}", policy_protocol="vla-eval")
    try:
        _wait_for(port, server)
        plan = seq.eval.dry_run(benchmark="libero", **served, suites=["libero_goal"], seeds=[0])
        assert "--adapter libero-to-vla-eval" in plan["suggestion"]
        vla_eval = subprocess.Popen(
            [
                *(str(image.path / "bin" / "vla-eval"), "run", "-c", str(tmp_path / "vla.yaml")),
                *("--no-docker", "--server-url", f"ws://127.0.0.1:{port}"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
        )
        report = seq.eval.run(
            benchmark="libero",
            **served,
            adapter="libero-to-vla-eval",
            suites=["libero_goal"],
            seeds=[0],
            max_steps=STEPS,
            envs=1,
        )
        output = vla_eval.communicate(timeout=1500)[0]
        assert vla_eval.returncode == 0, output[-4000:]
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert report.manifest.adapter is not None and report.manifest.adapter.name == "libero-to-vla-eval"
    assert {episode.status for episode in report.episodes} == {"ok"}, report.episodes[0].error
    by_episode: dict[tuple, list[dict]] = defaultdict(list)
    for line in log.read_text().splitlines():
        record = json.loads(line)
        by_episode[tuple(record["episode"])].append(record)
    # each episode twice, once from each harness, in the order each sent its steps
    assert len(by_episode) == 10 and all(len(steps) == 2 * STEPS for steps in by_episode.values())
    for (name, _), steps in by_episode.items():
        by_step = sorted(steps, key=lambda record: record["step"])
        for ours, theirs in zip(by_step[::2], by_step[1::2], strict=True):
            assert ours == theirs, name
        assert steps[0]["dtypes"] == ["uint8", "uint8", "float64", "float32"]
        assert steps[0]["keys"] == ["controller_states", "images", "states", "task_description"]
        assert steps[0]["suite"] == "libero_goal"
    assert sorted(steps[0]["task_id"] for steps in by_episode.values()) == list(range(10))
    instruction = {language: index for index, (_, language, _) in enumerate(SUITES["libero_goal"])}
    assert all(instruction[name] == steps[0]["task_id"] for (name, _), steps in by_episode.items())
    assert all(episode.steps == STEPS for episode in report.episodes)
