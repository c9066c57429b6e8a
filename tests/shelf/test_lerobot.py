"""The built-in policy `lerobot` against LeRobot's own `lerobot-eval`: a small ACT and a small
Diffusion policy for Push-T, randomly initialised and saved as `lerobot-train` saves them, agree
episode by episode (steps, success, return); a LIBERO checkpoint runs through `libero-to-lerobot`
and a MetaWorld one through `metaworld-to-lerobot`, which gives the policy what LeRobot's MetaWorld
environment computes; and the policy is served.

These need LeRobot and torch, which do not install beside seq's own environment: they run in the
Python `$SEQ_LEROBOT_PYTHON` names (`tools/lerobot_venv.sh` builds one, `.ci/run` sets it).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"
PYTHON = os.environ.get("SEQ_LEROBOT_PYTHON")
STEPS = 100  # each episode's limit in both (Push-T's own is 300): neither policy reaches the goal
SEEDS = 2

pytestmark = pytest.mark.skipif(
    PYTHON is None, reason="LeRobot and torch need an environment of their own: set SEQ_LEROBOT_PYTHON"
)


def run(*args: str, timeout: float = 900, **env: str) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(PYTHON), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "200", **env},
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def seq_cli(*args: str, timeout: float = 900, **env: str) -> subprocess.CompletedProcess:
    return run("-c", "from seq.cli import main; main()", *args, timeout=timeout, **env)


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("lerobot")
    made = {}
    for kind in ("act", "diffusion"):
        run(str(TOOLS / "make_lerobot_checkpoint.py"), kind, str(root / kind))
        made[kind] = root / kind
    run(str(TOOLS / "make_lerobot_checkpoint.py"), "act", str(root / "libero"), "--features", "libero")
    made["libero"] = root / "libero"
    return made


def seq_episodes(eval_id: str, out: Path) -> list[dict]:
    seq_cli("eval", "export", eval_id, "--output", str(out))
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    return sorted(rows, key=lambda row: row["seed"])


def eval_id_of(result: subprocess.CompletedProcess) -> str:
    return re.search(r"eval (ev-[0-9a-f]+)", result.stdout + result.stderr).group(1)


def lerobot_eval_episodes(checkpoint: Path, steps: int, tmp_path: Path, *env_args: str, **env: str) -> list:
    """Each episode of `lerobot-eval` (seeded as seq's conditions: `tools/lerobot_eval_seeded.py`),
    drawing with the MuJoCo backend seq's tests draw with (whatever ran before in this process)."""
    from seq.capture.render import choose_backend

    backend = choose_backend()
    theirs = run(
        str(TOOLS / "lerobot_eval_seeded.py"),
        "--no-videos",
        f"--policy.path={checkpoint}",
        *env_args,
        f"--env.episode_length={steps}",
        f"--eval.n_episodes={SEEDS}",
        "--eval.batch_size=1",
        "--seed=0",
        "--policy.device=cpu",
        f"--output_dir={tmp_path / 'lerobot-eval'}",
        **{"MUJOCO_GL": backend.backend if backend else "egl", **env},
    )
    return [json.loads(found) for found in re.findall(r"episode (\{.*?\})", theirs.stdout)]


def seq_lerobot_episodes(checkpoint: Path, steps: int, tmp_path: Path, *benchmark_args: str) -> list:
    """Each episode of `seq eval run lerobot` on the same seeds, one env at a time."""
    ours = seq_cli(
        *("eval", "run", "lerobot", *benchmark_args, "--param", f"pretrained={checkpoint}"),
        *("--seeds", f"0-{SEEDS - 1}", "--max-steps", str(steps), "--envs", "1"),
    )
    return seq_episodes(eval_id_of(ours), tmp_path / "export")


def assert_agree(episodes: list, lerobot: list, steps: int, rel: float, abs_tol: float) -> None:
    """The same seeds, steps, success and return, episode by episode."""
    assert [e["seed"] for e in lerobot] == [e["seed"] for e in episodes] == list(range(SEEDS))
    for mine, reference in zip(episodes, lerobot, strict=True):
        assert mine["status"] == "ok", mine["error"]
        assert mine["steps"] == reference["steps"] == steps
        assert mine["metrics"]["success"] == float(reference["success"])
        assert mine["metrics"]["return"] == pytest.approx(reference["return"], rel=rel, abs=abs_tol)


@pytest.mark.parametrize("kind", ["act", "diffusion"])
def test_push_t_agrees_with_lerobot_eval_episode_by_episode(kind, checkpoints, tmp_path):
    """The same seeds, the same steps, success and return (the sum of Push-T's rewards: any action
    that differed would move the block differently); ACT plays 7 of 10 actions and Diffusion 8 of
    16, so a queue not emptied by `reset()` would shift the second episode."""
    lerobot = lerobot_eval_episodes(checkpoints[kind], STEPS, tmp_path, "--env.type=pusht")
    episodes = seq_lerobot_episodes(checkpoints[kind], STEPS, tmp_path, "--benchmark", "pusht")
    assert_agree(episodes, lerobot, STEPS, rel=1e-6, abs_tol=1e-9)
    assert any(e["metrics"]["return"] > 0 for e in episodes)  # the block was moved: a real check
    report = json.loads((tmp_path / "export" / "report.json").read_text())
    (arm,) = report["manifest"]["arms"]
    policy_class = {"act": "ACTPolicy", "diffusion": "DiffusionPolicy"}[kind]
    assert arm["weights"]["class"].endswith(f".{policy_class}")
    assert re.fullmatch(r"[0-9a-f]{64}", arm["weights"]["sha256"])
    assert arm["parameters"]["benchmark"]["obs_type"] == "pixels_agent_pos"


def test_a_libero_checkpoint_runs_through_libero_to_lerobot(checkpoints, tmp_path):
    """A checkpoint with LIBERO's features (two 256² cameras, the 8-D state, 7-D actions), served
    from LeRobot's Python while LIBERO runs in its own image."""
    # libero-to-lerobot is built in: no deploy step
    ours = seq_cli(
        "eval",
        "run",
        "lerobot",
        "--benchmark",
        "libero",
        "--adapter",
        "libero-to-lerobot",
        "--param",
        f"pretrained={checkpoints['libero']}",
        "--serve",
        "--tasks",
        "pick_up_the_black_bowl_between_the_plate_and_the_ramekin_and_place_it_on_the_plate",
        "--seeds",
        "0",
        "--max-steps",
        "3",
        "--envs",
        "1",
        timeout=1800,
    )
    (episode,) = seq_episodes(eval_id_of(ours), tmp_path / "export")
    assert episode["status"] == "ok", episode["error"]
    assert episode["steps"] == 3 and episode["queries"] >= 1


def test_an_aloha_checkpoint_runs_on_gym_aloha_as_lerobot_sees_it(tmp_path):
    """ALOHA's features (the 480×640 top camera, 14 joint positions): the policy asks the `aloha`
    benchmark for gym-aloha's `pixels_agent_pos` observation, drawn as LeRobot's env draws it."""
    checkpoint = tmp_path / "aloha"
    run(str(TOOLS / "make_lerobot_checkpoint.py"), "act", str(checkpoint), "--features", "aloha")
    ours = seq_cli(
        "eval",
        "run",
        "lerobot",
        "--benchmark",
        "aloha",
        "--param",
        f"pretrained={checkpoint}",
        "--tasks",
        "transfer-cube",
        "--seeds",
        "0",
        "--max-steps",
        "5",
        "--envs",
        "1",
    )
    (episode,) = seq_episodes(eval_id_of(ours), tmp_path / "export")
    assert episode["status"] == "ok", episode["error"]
    assert episode["steps"] == 5
    report = json.loads((tmp_path / "export" / "report.json").read_text())
    benchmark = report["manifest"]["arms"][0]["parameters"]["benchmark"]
    assert benchmark == {"obs_type": "pixels_agent_pos", "fast_render": False}


@pytest.fixture(scope="module")
def lerobot_metaworld() -> None:
    """LeRobot's Python has MetaWorld (tools/lerobot_venv.sh installs it)."""
    if subprocess.run([str(PYTHON), "-c", "import metaworld"], capture_output=True).returncode != 0:
        pytest.skip(f"{PYTHON} lacks metaworld: rebuild it with tools/lerobot_venv.sh")


@pytest.fixture(scope="module")
def metaworld_checkpoint(lerobot_metaworld: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An ACT checkpoint with the features LeRobot's MetaWorld environment config declares."""
    checkpoint = tmp_path_factory.mktemp("lerobot-metaworld") / "act"
    run(str(TOOLS / "make_lerobot_checkpoint.py"), "act", str(checkpoint), "--features", "metaworld")
    return checkpoint


def test_a_metaworld_checkpoint_runs_through_metaworld_to_lerobot(metaworld_checkpoint, tmp_path):
    """The 480² corner2 image, a 4-D state, 4-D actions: the policy asks the `metaworld`
    benchmark for its camera (`obs_mode=pixels`) and the adapter gives it LeRobot's keys."""
    ours = seq_cli(
        "eval",
        "run",
        "lerobot",
        "--benchmark",
        "metaworld",
        "--adapter",
        "metaworld-to-lerobot",
        "--param",
        f"pretrained={metaworld_checkpoint}",
        "--tasks",
        "reach-v3,push-v3",
        "--seeds",
        "0",
        "--max-steps",
        "5",
        "--envs",
        "1",
    )
    episodes = seq_episodes(eval_id_of(ours), tmp_path / "export")
    assert sorted(e["task"] for e in episodes) == ["push-v3", "reach-v3"]
    for episode in episodes:
        assert episode["status"] == "ok", episode["error"]
        assert episode["steps"] == 5 and episode["queries"] >= 1
    report = json.loads((tmp_path / "export" / "report.json").read_text())
    (arm,) = report["manifest"]["arms"]
    assert arm["parameters"]["benchmark"] == {"obs_mode": "pixels"}
    assert arm["weights"]["class"].endswith(".ACTPolicy")


def test_metaworld_without_the_adapter_is_refused_naming_the_keys(metaworld_checkpoint):
    result = subprocess.run(
        [
            str(PYTHON),
            "-c",
            "from seq.cli import main; main()",
            "eval",
            "run",
            "lerobot",
            "--benchmark",
            "metaworld",
            "--param",
            f"pretrained={metaworld_checkpoint}",
            "--tasks",
            "reach-v3",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 2, result.stderr
    assert "observation.image needs 'pixels'" in result.stderr and "Traceback" not in result.stderr


# LeRobot's MetaWorld environment in the state of seq's condition (goal configuration `seed` of
# `MT1(task, seed=0)`, reset with `seed`, the scene brought up to date before its first image),
# stepped with the same actions: its observations.
LEROBOT_METAWORLD = """
import sys
import metaworld
import mujoco
import numpy as np
from lerobot.envs.metaworld import MetaworldEnv

task, seed, actions, out = sys.argv[1], int(sys.argv[2]), np.load(sys.argv[3]), sys.argv[4]
env = MetaworldEnv(task=task, obs_type="pixels_agent_pos")
env._env.set_task(metaworld.MT1(task, seed=0).train_tasks[seed])
simulation, raw_reset = env._env, env._env.reset

def reset_up_to_date(**kwargs):
    output = raw_reset(**kwargs)
    warmstart = simulation.data.qacc_warmstart.copy()
    mujoco.mj_forward(simulation.model, simulation.data)
    simulation.data.qacc_warmstart[:] = warmstart
    return output

env._env.reset = reset_up_to_date
observations = [env.reset(seed=seed)[0]]
for action in actions[:-1]:
    observations.append(env.step(action)[0])
frames = {f"{key}{step}": obs[key] for step, obs in enumerate(observations) for key in obs}
np.savez(out, task=np.array(env.task_description), **frames)
"""


@pytest.mark.parametrize("task", ["reach-v3", "push-v3"])
def test_metaworld_to_lerobot_gives_what_lerobots_metaworld_env_computes(lerobot_metaworld, task, tmp_path):
    """The observations a policy gets through `metaworld-to-lerobot` equal, number for number and
    pixel for pixel, those LeRobot's own `MetaworldEnv` returns from the same MetaWorld state and
    actions (its reset made to bring the scene up to date before the first image, as seq's does),
    and every act carries the task's sentence LeRobot gives as `task`."""
    import numpy as np

    import seq
    from seq.capture.render import choose_backend

    steps, seed = 5, 3
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, 4)).astype(np.float32)
    seen: list = []
    instructions: list = []

    def replay(obs, instruction=None):
        seen.append(obs)
        instructions.append(instruction)
        return actions[len(seen) - 1]

    seq.evaluate(
        replay,
        "metaworld",
        adapter="metaworld-to-lerobot",
        params={"obs_mode": "pixels"},
        tasks=[task],
        seeds=[seed],
        max_steps=steps,
        envs=1,
    )
    np.save(tmp_path / "actions.npy", actions)
    backend = choose_backend()
    run(
        "-c",
        LEROBOT_METAWORLD,
        task,
        str(seed),
        str(tmp_path / "actions.npy"),
        str(tmp_path / "lerobot.npz"),
        MUJOCO_GL=backend.backend if backend else "egl",
    )
    theirs = np.load(tmp_path / "lerobot.npz")
    assert len(seen) == steps
    for step, ours in enumerate(seen):
        assert sorted(ours) == ["agent_pos", "pixels"]
        assert np.array_equal(ours["agent_pos"], theirs[f"agent_pos{step}"])
        assert ours["pixels"].shape == theirs[f"pixels{step}"].shape == (480, 480, 3)
        assert ours["pixels"].dtype == theirs[f"pixels{step}"].dtype == np.uint8
        assert np.array_equal(ours["pixels"], theirs[f"pixels{step}"]), f"step {step}"
    assert not np.array_equal(seen[0]["agent_pos"], seen[-1]["agent_pos"])  # the arm moved
    assert instructions == [str(theirs["task"])] * steps and instructions[0] != task


def test_the_task_sentences_are_lerobots(lerobot_metaworld):
    """`metaworld-to-lerobot`'s sentence for each of MetaWorld's 50 tasks is LeRobot's."""
    import json

    from seq.shelf.adapters.metaworld_lerobot import TASK_SENTENCES

    theirs = run(
        "-c", "import json; from lerobot.envs.metaworld import TASK_DESCRIPTIONS as d; print(json.dumps(d))"
    )
    assert TASK_SENTENCES == json.loads(theirs.stdout) and len(TASK_SENTENCES) == 50


def test_metaworld_agrees_with_lerobot_eval_episode_by_episode(metaworld_checkpoint, tmp_path):
    """ACT on MetaWorld's push under `lerobot-eval --env.type=metaworld` (each episode started
    from seq's condition of its seed: `tools/lerobot_eval_seeded.py`) and under seq: the same
    steps, success and return (the sum of MetaWorld's shaped rewards, which any action that
    differed would change), episode by episode; the second starts where the first left the env."""
    steps = 20
    one_thread = dict.fromkeys(("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"), "1")
    task = ("--env.type=metaworld", "--env.task=push-v3")
    lerobot = lerobot_eval_episodes(metaworld_checkpoint, steps, tmp_path, *task, **one_thread)
    benchmark = ("--benchmark", "metaworld", "--adapter", "metaworld-to-lerobot", "--tasks", "push-v3")
    episodes = seq_lerobot_episodes(metaworld_checkpoint, steps, tmp_path, *benchmark)
    assert_agree(episodes, lerobot, steps, rel=1e-9, abs_tol=1e-12)


def test_a_push_t_checkpoint_without_images_in_the_observation_is_refused(checkpoints):
    result = subprocess.run(
        [
            str(PYTHON),
            "-c",
            "from seq.cli import main; main()",
            "eval",
            "run",
            "lerobot",
            "--benchmark",
            "pusht",
            "--param",
            f"pretrained={checkpoints['act']}",
            "--param",
            "obs_type=state",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 2, result.stderr
    assert "observation.image, observation.state" in result.stderr and "Traceback" not in result.stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_served_it_gives_what_it_gives_inline(checkpoints, tmp_path):
    """`seq policy serve lerobot --param pretrained=DIR`: an eval against that server, naming no
    checkpoint of its own, records the episode an inline eval records (one environment: each
    replica holds one action queue)."""
    port = free_port()
    server = subprocess.Popen(
        [
            str(PYTHON),
            "-c",
            "from seq.cli import main; main()",
            "policy",
            "serve",
            "lerobot",
            "--param",
            f"pretrained={checkpoints['act']}",
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    try:
        deadline = time.monotonic() + 300
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None and time.monotonic() < deadline, server.stderr.read()
            time.sleep(0.5)
        served = seq_cli(
            "eval",
            "run",
            "--benchmark",
            "pusht",
            "--policy-url",
            f"ws://127.0.0.1:{port}",
            "--param",
            "obs_type=pixels_agent_pos",
            "--seeds",
            "0",
            "--max-steps",
            "30",
            "--envs",
            "1",
        )
    finally:
        server.terminate()
        server.wait(timeout=60)
    inline = seq_cli(
        "eval",
        "run",
        "lerobot",
        "--benchmark",
        "pusht",
        "--param",
        f"pretrained={checkpoints['act']}",
        "--seeds",
        "0",
        "--max-steps",
        "30",
        "--envs",
        "1",
    )
    (remote,) = seq_episodes(eval_id_of(served), tmp_path / "served")
    (local,) = seq_episodes(eval_id_of(inline), tmp_path / "inline")
    assert remote["status"] == local["status"] == "ok"
    assert remote["steps"] == local["steps"] == 30
    # the server computes in a thread of its own, where torch may sum in another order
    assert remote["metrics"]["return"] == pytest.approx(local["metrics"]["return"], rel=1e-6)
    assert local["metrics"]["return"] > 0
