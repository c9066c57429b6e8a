"""What an image costs the first time and once cached.

    python bench/image_cache.py [--packages metaworld==3.1.1 mujoco==3.3.0 ...] [--repeats 3]

The set-up time of `seq.Image.debian_slim().uv_pip_install(*packages)` (`BuiltImage.setup_s`, what
an eval spends before its workers start), side by side in one run, each in a fresh Python:

1. first, cold: a fresh SEQ_HOME and an empty uv cache (every wheel downloaded);
2. first, warm: a fresh SEQ_HOME, uv's cache holding the wheels (another image had them);
3. second: the same SEQ_HOME again, the image already built (best of `--repeats`).

Then the same at the level of an eval: the time from `seq.eval.run` to its first finished episode
(a one-step benchmark that declares the image: the eval's whole set-up, workers included), for a
first eval (fresh SEQ_HOME, empty uv cache), a second one, and the same benchmark with no image
(what starting any eval costs: a worker process and its imports).

Goal: second <= 10% of first. The built image is checked to import the packages and seq.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ENSURE = """
import json, sys
import seq
from seq.isolation.images import ensure_image
built = ensure_image(seq.Image.debian_slim().uv_pip_install(*sys.argv[1:]))
print(json.dumps({"key": built.key, "setup_s": built.setup_s, "cached": built.cached,
                  "python": str(built.python)}))
"""


BENCHMARK = """
import numpy as np
import seq

PACKAGES = {packages!r}


class OneStep:
    action_space = None

    def reset(self, seed=None):
        return np.zeros(2), {{}}

    def step(self, action):
        return np.zeros(2), 0.0, True, False, {{}}


@seq.benchmark(name="in-an-image", conditions=[seq.Condition("one")], max_steps=1,
               image=seq.Image.debian_slim().uv_pip_install(*PACKAGES) if PACKAGES else None)
class InAnImage(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return OneStep()

    @seq.check
    def check(self, env):
        return seq.Step(done=True, metrics={{"success": 1.0}})


@seq.policy(name="still")
class Still(seq.Policy):
    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None):
        return np.zeros(1)
"""

EVAL = """
import json, sys, time
import seq
seq.deploy(sys.argv[1])
started, first = time.perf_counter(), []
seq.eval.run("still", benchmark="in-an-image", envs=1, on_result=lambda r: first.append(time.perf_counter()))
print(json.dumps({"to_first_episode_s": first[0] - started}))
"""


def eval_setup(source: Path, home: Path, uv_cache: Path) -> float:
    """Seconds from `seq.eval.run` to the first finished episode, in a fresh Python."""
    env = {**os.environ, "SEQ_HOME": str(home), "UV_CACHE_DIR": str(uv_cache)}
    done = subprocess.run(
        [sys.executable, "-c", EVAL, str(source)], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"the eval failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])["to_first_episode_s"]


def ensure(packages: list[str], home: Path, uv_cache: Path) -> dict:
    """`ensure_image` in a fresh Python with this SEQ_HOME and uv cache."""
    env = {**os.environ, "SEQ_HOME": str(home), "UV_CACHE_DIR": str(uv_cache)}
    done = subprocess.run(
        [sys.executable, "-c", ENSURE, *packages], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"ensure_image failed: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--packages",
        nargs="+",
        default=["metaworld==3.1.1", "mujoco==3.3.0", "gymnasium>=1.0", "packaging"],  # MetaWorld's image
        help="what the image installs",
    )
    parser.add_argument("--repeats", type=int, default=3, help="cached set-ups measured (best counts)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="seq-bench-images-"))
    try:
        uv_cache = scratch / "uv-cache"
        cold = ensure(args.packages, scratch / "home-cold", uv_cache)
        warm = ensure(args.packages, scratch / "home-warm", uv_cache)
        assert not cold["cached"] and not warm["cached"] and cold["key"] == warm["key"]
        second = [ensure(args.packages, scratch / "home-warm", uv_cache) for _ in range(args.repeats)]
        assert all(run["cached"] for run in second)
        best = min(run["setup_s"] for run in second)
        modules = [re.split("[=<>!~]", p)[0].replace("-", "_") for p in args.packages]
        check = subprocess.run(
            [warm["python"], "-c", f"import seq.engine.worker, {', '.join(modules)}"],
            capture_output=True,
            text=True,
        )
        assert check.returncode == 0, check.stderr
        size = sum(f.stat().st_size for f in (scratch / "home-warm").rglob("*") if f.is_file())
        source = scratch / "in_an_image.py"
        source.write_text(BENCHMARK.format(packages=list(args.packages)))
        first_eval = eval_setup(source, scratch / "home-eval", scratch / "uv-cache-eval")
        second_eval = min(
            eval_setup(source, scratch / "home-eval", scratch / "uv-cache-eval") for _ in range(args.repeats)
        )
        plain = scratch / "no_image.py"  # the same benchmark in seq's own environment
        plain.write_text(BENCHMARK.format(packages=[]))
        no_image = min(
            eval_setup(plain, scratch / "home-plain", scratch / "uv-cache-eval") for _ in range(args.repeats)
        )
        print(f"image {cold['key']}: uv_pip_install({', '.join(args.packages)}) + seq's requirements")
        print(f"  first, cold uv cache:  {cold['setup_s']:7.2f} s")
        print(f"  first, warm uv cache:  {warm['setup_s']:7.2f} s")
        print(f"  second (cached):       {best:7.3f} s  (best of {args.repeats})")
        print(
            f"second / first:  {best / cold['setup_s']:.2%} of cold, {best / warm['setup_s']:.2%} of warm"
            f"  (goal <= 10%); image {size / 2**20:.0f} MiB"
        )
        print("an eval of a one-step benchmark in that image, seq.eval.run to its first episode:")
        print(f"  first eval (image built, empty uv cache):  {first_eval:6.2f} s")
        print(f"  second eval (image cached):                {second_eval:6.2f} s  (best of {args.repeats})")
        print(f"  the same eval with no image:               {no_image:6.2f} s  (best of {args.repeats})")
        print(
            f"second / first:  {second_eval / first_eval:.1%}  (goal <= 10%); what the cached image adds "
            f"to an eval's start: {second_eval - no_image:+.2f} s"
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
