"""What a worker's Python environment is: recorded in each eval's reproducibility manifest."""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Iterable
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
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "packages": installed_versions(TRACKED),
    }


def installed_versions(names: Iterable[str]) -> dict[str, str]:
    """The version of each of `names` that is installed, as `importlib.metadata.version` finds it:
    the first `*.dist-info` or `*.egg-info` folder on `sys.path` with that name (or the `EGG-INFO`
    of an `*.egg` folder on it, as `setup.py install` left them), its `Version`.

    Read without `importlib.metadata`, whose search took a worker ~20 ms at its start and whose
    import (its e-mail parser) ~65 ms more where nothing else imports it (a served eval's
    `websockets` does): here one listing of each `sys.path` folder does.
    """
    names = list(names)
    wanted = {_normalized(name) for name in names}
    versions: dict[str, str] = {}  # by normalized name
    for entry in sys.path:
        folder = entry or "."
        try:
            children = os.listdir(folder)
        except OSError:  # a zip, a folder since removed
            continue
        egg = os.path.basename(os.path.normpath(folder)).lower()
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                stem = low.rpartition(".")[0]
            elif low == "egg-info" and egg.endswith(".egg"):  # NAME-VERSION-pyX.Y.egg/EGG-INFO
                stem = egg.rpartition(".")[0]
            else:
                continue
            name = _normalized(stem.partition("-")[0])
            if name in wanted and name not in versions:
                version = _version_in(os.path.join(folder, child))
                if version is not None:
                    versions[name] = version
    return {name: versions[_normalized(name)] for name in names if _normalized(name) in versions}


def _normalized(name: str) -> str:
    """A distribution's name as `importlib.metadata` compares it (PEP 503, `-` as `_`)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _version_in(info: str) -> str | None:
    """The `Version:` header of a dist-info's METADATA (or an egg-info's PKG-INFO, or the
    egg-info file itself)."""
    paths = [os.path.join(info, "METADATA"), os.path.join(info, "PKG-INFO"), info]
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as file:
                for line in file:
                    if not line.strip():
                        return None  # the headers ended
                    key, _, value = line.partition(":")
                    if key.strip().lower() == "version":
                        return value.strip()
        except (IsADirectoryError, FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            return None
    return None
