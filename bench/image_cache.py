"""What an image costs the first time and once cached.

    python bench/image_cache.py [--packages mujoco==3.2.7] [--repeats 3]

The set-up time of `seq.Image.debian_slim().uv_pip_install(*packages)` (`BuiltImage.setup_s`, what
an eval spends before its workers start), side by side in one run, each in a fresh Python:

1. first, cold: a fresh SEQ_HOME and an empty uv cache (every wheel downloaded);
2. first, warm: a fresh SEQ_HOME, uv's cache holding the wheels (another image had them);
3. second: the same SEQ_HOME again, the image already built (best of `--repeats`).

Goal: second <= 10% of first. The built image is checked to import the packages and seq.
"""

from __future__ import annotations

import argparse
import json
import os
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
    parser.add_argument("--packages", nargs="+", default=["mujoco==3.2.7"], help="what the image installs")
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
        modules = [p.split("==")[0].split(">")[0].split("<")[0].replace("-", "_") for p in args.packages]
        check = subprocess.run(
            [warm["python"], "-c", f"import seq.engine.worker, {', '.join(modules)}"],
            capture_output=True,
            text=True,
        )
        assert check.returncode == 0, check.stderr
        size = sum(f.stat().st_size for f in (scratch / "home-warm").rglob("*") if f.is_file())
        print(f"image {cold['key']}: uv_pip_install({', '.join(args.packages)}) + seq's requirements")
        print(f"  first, cold uv cache:  {cold['setup_s']:7.2f} s")
        print(f"  first, warm uv cache:  {warm['setup_s']:7.2f} s")
        print(f"  second (cached):       {best:7.3f} s  (best of {args.repeats})")
        print(
            f"second / first:  {best / cold['setup_s']:.2%} of cold, {best / warm['setup_s']:.2%} of warm"
            f"  (goal <= 10%); image {size / 2**20:.0f} MiB"
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
