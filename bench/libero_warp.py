"""libero-warp against libero: its images and its speed, side by side in one run.

    python bench/libero_warp.py SCENE [--starts 10] [--worlds 1,10] [--steps 20] [--save DIR]
    python bench/libero_warp.py SCENE --direct [--starts 50] [--episodes 100] [--worlds 10]

SCENE is an export of the shelf's `libero` (`seq benchmark export libero ... -o SCENE`). For its
first `--starts` starts:

1. pixels: the first observation's `agentview_image` and `wrist_image` as `libero` gives them
   (LIBERO's renderer, in the `libero` image) and as `libero-warp` draws them (classic MuJoCo
   4 of the world's state, in the port image): PSNR per camera, mean and lowest over the starts;
2. speed: control steps/s of `libero` (`obs_mode=state`, one env, the starts one after another)
   and of `libero-warp`'s worlds at each of `--worlds` (the starts put in the worlds in turn),
   `--steps` control steps of a still arm each, on the same machine in one run.

With `--direct`, episodes instead: `libero-scripted`'s own function driving `--episodes`
episodes of the first `--starts` starts (in turn) on `--worlds` worlds of `libero-warp`, in
waves, in this Python where it has MuJoCo Warp (else the port image's), on Warp's default device
(the GPU where there is one): the success rate and control steps/s. No seq eval, no images.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

LIBERO_SIDE = r"""
import json, sys, time
import numpy as np
from seq.port import scene as layout
from seq.shelf.libero_env import LiberoEnv
from seq.shelf.libero_tasks import SUITES
folder, out, count, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
entries = layout.read_manifest(folder)["starts"][:count]
suite_of = {name: suite for suite in ("libero_spatial", "libero_object", "libero_goal", "libero_10")
            for name, _, _ in SUITES[suite]}
frames, times = {}, []
for index, entry in enumerate(entries):
    env = LiberoEnv(suite_of[entry["task"]], entry["task"], obs="pixels")
    obs, _ = env.reset(seed=entry["seed"])
    frames[f"agentview_{index}"], frames[f"wrist_{index}"] = obs["agentview_image"], obs["wrist_image"]
    env.close()
    env = LiberoEnv(suite_of[entry["task"]], entry["task"], obs="state")
    env.reset(seed=entry["seed"])
    began = time.perf_counter()
    for _ in range(steps):
        env.step([0, 0, 0, 0, 0, 0, -1])
    times.append(time.perf_counter() - began)
    env.close()
np.savez(out + "/libero.npz", **frames)
json.dump({"steps_per_s": steps * len(times) / sum(times)}, open(out + "/libero.json", "w"))
"""

PORT_SIDE = r"""
import json, sys, time
import numpy as np
from pathlib import Path
from seq.port import scene as layout
from seq.shelf.libero_warp import LiberoWarpEnv, SceneWorlds
folder, out, count, steps = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
worlds_counts = [int(n) for n in sys.argv[5].split(",")]
manifest = layout.read_manifest(folder)
entries = manifest["starts"][:count]
scene = entries[0]["scene"]
same = [e for e in manifest["starts"] if e["scene"] == scene]
worlds = SceneWorlds(folder, scene, same, 1, cameras=True, resolution=256)
frames = {}
for index, entry in reversed(list(enumerate(entries))):  # one renderer: later starts undo earlier ones
    start = next(s for s in worlds.worlds.starts if s.task == entry["task"] and s.seed == entry["seed"])
    env = LiberoWarpEnv(worlds, start, "pixels")
    obs, _ = env.reset()
    frames[f"agentview_{index}"], frames[f"wrist_{index}"] = obs["agentview_image"], obs["wrist_image"]
    env.release()
np.savez(out + "/port.npz", **frames)
rates = {}
for nworld in worlds_counts:
    batch = SceneWorlds(folder, scene, same, nworld, cameras=False, resolution=256)
    envs = []
    for world in range(nworld):
        entry = entries[world % len(entries)]
        start = next(s for s in batch.worlds.starts if s.task == entry["task"] and s.seed == entry["seed"])
        envs.append(LiberoWarpEnv(batch, start, "state"))
        envs[-1].reset()
    for env in envs:
        env.stage([0, 0, 0, 0, 0, 0, -1])
    batch.step()  # the first step's kernels are loaded: not timed
    began = time.perf_counter()
    for _ in range(steps):
        for env in envs:
            env.stage([0, 0, 0, 0, 0, 0, -1])
        batch.step()
        for env in envs:
            env.outcome()
    rates[nworld] = steps * nworld / (time.perf_counter() - began)
json.dump({"steps_per_s": rates}, open(out + "/port.json", "w"))
"""

DIRECT = r"""
import json, sys, time
import warp
from pathlib import Path
from seq.port import scene as layout
from seq.shelf.libero_scripted import scripted_action
from seq.shelf.libero_warp import MAX_STEPS, LiberoWarpEnv, SceneWorlds
from seq.shelf.libero_tasks import SUITES
folder, out, count, episodes, nworld = Path(sys.argv[1]), sys.argv[2], *map(int, sys.argv[3:6])
suite_of = {name: suite for suite in MAX_STEPS for name, _, _ in SUITES[suite]}
manifest = layout.read_manifest(folder)
entries = manifest["starts"][:count]
scene = entries[0]["scene"]
entries = [e for e in entries if e["scene"] == scene]
worlds = SceneWorlds(folder, scene, entries, nworld, cameras=False, resolution=256)
starts = {(s.task, s.seed): s for s in worlds.worlds.starts}
queue = [entries[i % len(entries)] for i in range(episodes)]
began = time.perf_counter()
worlds.step()  # compiles (or loads) Warp's kernels before timing
loaded, successes, steps = time.perf_counter() - began, 0, 0
began = time.perf_counter()
while queue:
    wave, queue = queue[:nworld], queue[nworld:]
    envs = [LiberoWarpEnv(worlds, starts[e["task"], e["seed"]], "state") for e in wave]
    observations = [env.reset()[0] for env in envs]
    limits = [MAX_STEPS[suite_of[e["task"]]] for e in wave]
    running, step = list(range(len(wave))), 0
    while running:
        for i in running:
            envs[i].stage(scripted_action(observations[i]))
        worlds.step()
        steps, step = steps + len(running), step + 1
        for i in list(running):
            observations[i], _, done, _, _ = envs[i].outcome()
            if done or step >= limits[i]:  # the episode ends: its world is released
                successes += int(done)
                running.remove(i)
                envs[i].release()
seconds = time.perf_counter() - began
json.dump({"device": str(warp.get_device()), "worlds": nworld, "episodes": episodes,
           "successes": successes, "control_steps": steps, "seconds": seconds,
           "first_step_s": loaded}, open(out + "/direct.json", "w"))
"""


def direct(scene: Path, starts: int, episodes: int, nworld: int) -> None:
    """libero-scripted on libero-warp's worlds in one process (module doc, `--direct`)."""
    from seq.isolation.images import ensure_image
    from seq.port.environment import PORT_IMAGE

    try:
        import mujoco_warp  # noqa: F401

        python = sys.executable
    except ImportError:
        python = str(ensure_image(PORT_IMAGE, log=lambda line: print(line, file=sys.stderr)).python)
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([python, "-c", DIRECT, str(scene.resolve()), out, str(starts), str(episodes),
                        str(nworld)], check=True)
        figures = json.loads(Path(out, "direct.json").read_text())
    rate = figures["successes"] / figures["episodes"]
    print(f"libero-scripted on libero-warp, {figures['episodes']} episodes of the first {starts} starts of "
          f"{scene}")
    print(f"  {figures['worlds']} worlds on Warp's {figures['device']}: success {figures['successes']}"
          f"/{figures['episodes']} ({rate:.2f}), {figures['control_steps']} control steps in "
          f"{figures['seconds']:.1f} s = {figures['control_steps'] / figures['seconds']:.1f} steps/s "
          f"(first step, kernels loaded: {figures['first_step_s']:.1f} s)")


def psnr(first, second) -> float:
    import numpy as np

    error = np.mean((first.astype(np.float64) - second.astype(np.float64)) ** 2)
    return float("inf") if error == 0 else float(10 * np.log10(255.0**2 / error))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("scene", type=Path, help="a libero export folder (seq benchmark export libero)")
    parser.add_argument("--starts", type=int, default=10, help="the export's first N starts")
    parser.add_argument("--worlds", default="1,10", help="Warp worlds to time, comma-separated")
    parser.add_argument("--steps", type=int, default=20, help="control steps timed (a speed needs 20+)")
    parser.add_argument("--save", type=Path,
                        help="write each pair of first images here as PNG: libero left, libero-warp right")
    parser.add_argument("--direct", action="store_true", help="episodes of libero-scripted instead")
    parser.add_argument("--episodes", type=int, default=100, help="with --direct: episodes in all")
    args = parser.parse_args()
    if min(args.starts, args.steps, args.episodes) < 1:
        parser.error("--starts, --steps and --episodes must be 1 or more")
    if args.direct:
        direct(args.scene, args.starts, args.episodes, int(args.worlds.split(",")[-1]))
        return
    import numpy as np

    from seq.isolation.images import ensure_image
    from seq.port.environment import PORT_IMAGE
    from seq.shelf.libero import IMAGE

    def log(line: str) -> None:
        print(line, file=sys.stderr)

    libero_python, port_python = (str(ensure_image(image, log=log).python) for image in (IMAGE, PORT_IMAGE))
    with tempfile.TemporaryDirectory() as out:
        common = [str(args.scene.resolve()), out, str(args.starts), str(args.steps)]
        subprocess.run([libero_python, "-c", LIBERO_SIDE, *common], check=True)
        subprocess.run([port_python, "-c", PORT_SIDE, *common, args.worlds], check=True)
        libero, port = np.load(f"{out}/libero.npz"), np.load(f"{out}/port.npz")
        count = len(libero.files) // 2
        if args.save:
            from PIL import Image

            args.save.mkdir(parents=True, exist_ok=True)
            for key in libero.files:
                pair = np.concatenate([libero[key], port[key]], axis=1)
                Image.fromarray(pair).save(args.save / f"{key}.png")
        print(f"pixels, {count} starts of {args.scene}")
        print("  (PSNR of libero-warp's first images against libero's):")
        for camera in ("agentview", "wrist"):
            values = [psnr(libero[f"{camera}_{i}"], port[f"{camera}_{i}"]) for i in range(count)]
            print(f"  {camera:9} mean {np.mean(values):5.1f} dB, lowest {min(values):5.1f} dB")
        rates = json.loads(Path(out, "libero.json").read_text())["steps_per_s"]
        print(f"speed, {args.steps} control step{'s' * (args.steps > 1)} of a still arm "
              "(control steps/s, all worlds together):")
        print(f"  {'libero, obs_mode=state, one env':34} {rates:8.1f}  1.00x")
        for nworld, rate in json.loads(Path(out, "port.json").read_text())["steps_per_s"].items():
            print(f"  {f'libero-warp, {nworld:>4} world(s)':34} {rate:8.1f}  {rate / rates:.2f}x")


if __name__ == "__main__":
    main()
