"""What a worker's Python environment is: recorded in each eval's reproducibility manifest."""

from __future__ import annotations

import platform
import sys
from importlib import metadata
from typing import Any

# Distributions whose versions decide what a simulated episode computes.
TRACKED = (
    "seq",
    "numpy",
    "scipy",
    "mujoco",
    "metaworld",
    "gymnasium",
    "gym",
    "dm-control",
    "robosuite",
    "gymnasium-robotics",
    "gym-pusht",
    "gym-aloha",
    "mani-skill",
    "sapien",
    "torch",
    "jax",
)


def describe_environment() -> dict[str, Any]:
    packages = {}
    for name in TRACKED:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "packages": packages,
    }
