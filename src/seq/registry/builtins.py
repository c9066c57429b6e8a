"""Benchmarks and policies that ship with `seq`, usable by name without `seq deploy`."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError

BUILTIN_BENCHMARKS: dict[str, tuple[str, str]] = {
    "metaworld": ("seq.shelf.metaworld", "MetaWorld"),
    "pusht": ("seq.shelf.pusht", "PushT"),
    "fetch": ("seq.shelf.fetch", "Fetch"),
    "robosuite": ("seq.shelf.robosuite", "Robosuite"),
    "aloha": ("seq.shelf.aloha", "Aloha"),
    "maniskill": ("seq.shelf.maniskill", "ManiSkill"),
    "libero": ("seq.shelf.libero", "Libero"),
    "libero-compatible": ("seq.shelf.libero", "LiberoCompatible"),
    "libero-warp": ("seq.shelf.libero_warp", "LiberoWarp"),
}

BUILTIN_POLICIES: dict[str, tuple[str, str]] = {
    "metaworld-expert": ("seq.shelf.metaworld", "MetaWorldExpert"),
    "noisy-expert": ("seq.shelf.metaworld", "NoisyExpert"),
    "random": ("seq.shelf.random", "RandomPolicy"),
    "pusht-pusher": ("seq.shelf.pusht", "PushTPusher"),
    "fetch-scripted": ("seq.shelf.fetch", "FetchScripted"),
    "robosuite-scripted": ("seq.shelf.robosuite", "RobosuiteScripted"),
    "maniskill-motionplanner": ("seq.shelf.maniskill", "ManiSkillMotionPlanner"),
    "libero-scripted": ("seq.shelf.libero_scripted", "LiberoScripted"),
    "lerobot": ("seq.shelf.lerobot_policy", "LeRobotPolicy"),
}

BUILTINS = {"benchmark": BUILTIN_BENCHMARKS, "policy": BUILTIN_POLICIES}

# Adapters that ship with `seq`: each is its own file (an adapter is versioned as the file it is),
# registered from it by the first eval that names it.
BUILTIN_ADAPTERS: dict[str, str] = {
    "libero-to-lerobot": "seq.shelf.adapters.libero_lerobot",
    "libero-to-openpi": "seq.shelf.adapters.libero_openpi",
    "libero-to-vla-eval": "seq.shelf.adapters.libero_vla_eval",
    "metaworld-to-lerobot": "seq.shelf.adapters.metaworld_lerobot",
}

# The built-in adapter a served policy of a protocol needs on a benchmark: (benchmark, protocol).
SUGGESTED_ADAPTERS: dict[tuple[str, str], str] = {
    (benchmark, protocol): adapter
    for benchmark in ("libero", "libero-compatible")
    for protocol, adapter in (("vla-eval", "libero-to-vla-eval"), ("openpi", "libero-to-openpi"))
}


def builtin_adapter_file(name: str) -> Path:
    """The file of the built-in adapter `name`."""
    spec = importlib.util.find_spec(BUILTIN_ADAPTERS[name])
    assert spec is not None and spec.origin is not None
    return Path(spec.origin)


# What each built-in imports where it runs, and the extra of `seq` that installs it.
BUILTIN_NEEDS: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {
    ("benchmark", "metaworld"): ("metaworld", ("metaworld", "mujoco", "gymnasium")),
    ("benchmark", "pusht"): ("pusht", ("gym_pusht", "pymunk", "pygame", "gymnasium")),
    ("benchmark", "fetch"): ("fetch", ("gymnasium_robotics", "mujoco", "gymnasium")),
    ("benchmark", "aloha"): ("aloha", ("gym_aloha", "dm_control", "mujoco", "gymnasium")),
    ("benchmark", "robosuite"): ("robosuite", ("robosuite", "mujoco")),
    ("benchmark", "maniskill"): ("maniskill", ("mani_skill", "gymnasium")),
    ("policy", "metaworld-expert"): ("metaworld", ("metaworld",)),
    ("policy", "noisy-expert"): ("metaworld", ("metaworld",)),
    ("policy", "maniskill-motionplanner"): ("maniskill", ("mani_skill", "mplib")),
    ("policy", "lerobot"): ("lerobot", ("lerobot", "torch")),
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def check_installed(kind: str, name: str, ref: dict[str, Any], where: str = "here") -> None:
    """Refuse a built-in `kind` `name` (a version whose `ref` is a shelf module) whose simulator
    this Python environment lacks, naming the extra that installs it: otherwise every episode
    would fail on the import. `where` says where it would run (a benchmark's own image is checked
    when it is built, not here)."""
    needs = BUILTIN_NEEDS.get((kind, name))
    if needs is None or "module" not in ref:
        return
    extra, modules = needs
    missing = [module for module in modules if not _installed(module)]
    if missing:
        raise SeqInputError(
            f"the built-in {kind} {name} needs {', '.join(missing)}, which {where} lacks: install "
            f"it with pip install 'seq[{extra}]'."
        )
