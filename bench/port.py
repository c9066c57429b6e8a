"""Physics throughput of a ported scene: MuJoCo Warp at 1, 64 and 1,024 worlds against classic
MuJoCo with one process per core, measured side by side in one run.

    python bench/port.py SCENE [--worlds 1,64,1024] [--steps 20] [--cores N]

SCENE is a folder written by `seq benchmark export` (robosuite's Lift:
`seq benchmark export robosuite --task Lift --seeds 8 --out lift/`). Both sides run in the port
environment (`seq.port.environment`): classic MuJoCo 4.0.0 steps each start in `--cores`
processes at once (the CPU benchmark with `--envs` = cores, physics only); MuJoCo Warp steps
every world together on its default device (the GPU where there is one, else the CPU), worlds
cycling through the exported starts. Warp's kernels are compiled before timing (cached after the
first run). Prints world-steps/s of each and the ratio; the seed's goal on a GPU is >= 20x the
2-core CPU figure at 1,024 worlds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
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
    args = parser.parse_args()
    python = port_python()
    cpu = classic_rate(python, args.scene, args.cores, args.classic_steps)
    print(f"classic MuJoCo, {args.cores} process(es): {cpu:,.0f} steps/s")
    for nworld in (int(n) for n in args.worlds.split(",")):
        result = run(python, WARP, args.scene, str(nworld), str(args.steps))
        rate = result["steps"] / result["seconds"]
        print(f"MuJoCo Warp ({result['device']}), {nworld:>5} worlds: {rate:,.0f} world-steps/s "
              f"({rate / cpu:.2f}x the CPU)")


if __name__ == "__main__":
    main()
