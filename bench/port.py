"""Physics throughput of a ported scene: MuJoCo Warp at 1, 64 and 1,024 worlds against classic
MuJoCo with one process per core, measured side by side in one run.

    python bench/port.py SCENE [--worlds 1,64,1024] [--steps 20] [--cores N] [--engine-worlds 1,8]

SCENE is a folder written by `seq benchmark export` (robosuite's Lift:
`seq benchmark export robosuite --tasks Lift --seeds 0-7 -o lift/). Both sides run in the port
environment (`seq.port.environment`): classic MuJoCo 4.0.0 steps each start in `--cores`
processes at once (the CPU benchmark with `--envs` = cores, physics only); MuJoCo Warp steps
every world together on its default device (the GPU where there is one, else the CPU), worlds
cycling through the exported starts. Warp's kernels are compiled before timing (cached after the
first run). Prints world-steps/s of each and the ratio; the seed's goal on a GPU is >= 20x the
2-core CPU figure at 1,024 worlds.

`--engine-worlds`: also the same scene scaffolded (`seq benchmark scaffold`, its controller the
TODO's: actions are actuator inputs) and run by seq's engine as an eval, one worker stepping N
worlds (`--envs 1 --envs-per-worker N`) with a batched policy of zeros: world-steps/s of the
whole loop (policy, physics, observation, check), from the episodes' own durations (the worker's
start and Warp's kernel load left out). `--engine-worlds ''` skips it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

CLASSIC = """
import sys, time, json, mujoco, numpy as np
from pathlib import Path
from seq.port import scene as layout
from seq.port.mujoco_state import apply_fields, pin_options, set_state
directory, steps = Path(sys.argv[1]), int(sys.argv[2])
manifest = layout.read_manifest(directory)
start = layout.read_start(directory, manifest["starts"][0])
options = json.loads((directory / layout.SCENES / start.scene / layout.OPTIONS).read_text())["scene"]
model = mujoco.MjModel.from_xml_path(str(layout.scene_xml(directory, start.scene)))
pin_options(model, options); apply_fields(model, start.model_changes)
data = mujoco.MjData(model); set_state(mujoco, model, data, start.state)
began = time.perf_counter()
for t in range(steps):
    data.ctrl[:] = start.controls.ctrl[t % len(start.controls.ctrl)]
    mujoco.mj_step(model, data)
print(json.dumps({"steps": steps, "seconds": time.perf_counter() - began}))
"""

WARP = """
import sys, time, json, numpy as np
from seq.port.worlds import WarpWorlds
directory, nworld, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
worlds = WarpWorlds(directory, nworld)
starts = [worlds.starts[i % len(worlds.starts)] for i in range(nworld)]
worlds.set_starts(list(range(nworld)), starts)
ctrl = lambda t: np.stack([s.controls.ctrl[t % len(s.controls.ctrl)] for s in starts])
worlds.step(ctrl(0))  # compiles (or loads) the kernels
worlds.data.qpos.numpy()
began = time.perf_counter()
for t in range(1, steps + 1):
    worlds.step(ctrl(t))
worlds.data.qpos.numpy()  # waits for the device
import warp
print(json.dumps({"steps": steps * nworld, "seconds": time.perf_counter() - began,
                  "device": str(warp.get_device())}))
"""


ZEROS = """
import numpy as np
import seq


@seq.policy(name="zeros")
class Zeros(seq.Policy):
    @seq.infer(batched=True)
    def infer(self, obs, *, seed=None, instruction=None):
        return [np.zeros(self.action_space.shape, dtype=np.float32) for _ in obs]
"""


def engine_rate(scene: str, nworld: int, steps: int) -> float:
    """World-steps/s of a scaffold of `scene` run as an eval: one worker, `nworld` worlds."""
    sys.path.insert(0, str(SRC))
    os.environ.setdefault("SEQ_IMAGES", str(Path(tempfile.gettempdir()) / "seq-bench-images"))
    with tempfile.TemporaryDirectory() as home:
        os.environ["SEQ_HOME"] = home
        import seq
        from seq.port.manifest import read_manifest
        from seq.port.scaffold import scaffold

        name = f"bench-warp-{nworld}"
        out = Path(home) / name
        made = scaffold(scene, envs=nworld, out=out, name=name)
        if made["volume"]:  # a large scene (Lift's) is read from a volume, as its README says
            from seq.isolation.volumes import put_volume

            shutil.copytree(scene, Path(home) / "volume" / "scene", ignore=shutil.ignore_patterns("*.mjb"))
            put_volume(made["volume"], Path(home) / "volume", kind="dataset")
        (Path(home) / "zeros.py").write_text(ZEROS)
        seq.deploy(out / "benchmark.py")
        seq.deploy(Path(home) / "zeros.py")
        trials = math.ceil(nworld / len(read_manifest(Path(scene))["starts"]))
        report = seq.eval.run("zeros", benchmark=name, envs=1, envs_per_worker=nworld, trials=trials,
                              max_steps=steps)
        if report.status != "completed" or any(e.status != "ok" for e in report.episodes):
            raise SystemExit(f"the engine's run of {name} failed: {report.episodes[0].error}")
        episodes = report.episodes  # `nworld` at a time, side by side: each one's time is shared
        return nworld * sum(e.steps for e in episodes) / sum(e.duration_s for e in episodes)


def port_python() -> str:
    sys.path.insert(0, str(SRC))
    from seq.port.environment import port_python as find

    return str(find(log=lambda line: print(line, file=sys.stderr)))


def run(python: str, code: str, *args: str) -> dict:
    out = subprocess.run([python, "-c", code, *args], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(SRC)}, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def classic_rate(python: str, scene: str, cores: int, steps: int) -> float:
    command = [python, "-c", CLASSIC, scene, str(steps)]
    environment = {**os.environ, "PYTHONPATH": str(SRC)}
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=environment)
                 for _ in range(cores)]
    results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in processes]
    return sum(r["steps"] for r in results) / max(r["seconds"] for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("scene")
    parser.add_argument("--worlds", default="1,64,1024")
    parser.add_argument("--steps", type=int, default=20, help="Warp steps timed at each size.")
    parser.add_argument("--classic-steps", type=int, default=2000)
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--engine-worlds", default="1,8", help="Worlds of seq's batched eval ('': none).")
    parser.add_argument("--engine-steps", type=int, default=10, help="Steps of each episode of that eval.")
    args = parser.parse_args()
    python = port_python()
    cpu = classic_rate(python, args.scene, args.cores, args.classic_steps)
    print(f"classic MuJoCo, {args.cores} process(es): {cpu:,.0f} steps/s")
    for nworld in (int(n) for n in args.worlds.split(",")):
        result = run(python, WARP, args.scene, str(nworld), str(args.steps))
        rate = result["steps"] / result["seconds"]
        print(f"MuJoCo Warp ({result['device']}), {nworld:>5} worlds: {rate:,.0f} world-steps/s "
              f"({rate / cpu:.2f}x the CPU)")
    for nworld in (int(n) for n in args.engine_worlds.split(",") if n):
        rate = engine_rate(args.scene, nworld, args.engine_steps)
        print(f"seq eval, batched, 1 worker, {nworld:>5} worlds: {rate:,.0f} world-steps/s "
              f"({rate / cpu:.2f}x the CPU)")


if __name__ == "__main__":
    main()
