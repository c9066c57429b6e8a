"""Benchmarks and policies that ship with `seq`, usable by name without `seq deploy`."""

from __future__ import annotations

BUILTIN_BENCHMARKS: dict[str, tuple[str, str]] = {
    "metaworld": ("seq.shelf.metaworld", "MetaWorld"),
    "pusht": ("seq.shelf.pusht", "PushT"),
    "fetch": ("seq.shelf.fetch", "Fetch"),
    "robosuite": ("seq.shelf.robosuite", "Robosuite"),
    "aloha": ("seq.shelf.aloha", "Aloha"),
    "maniskill": ("seq.shelf.maniskill", "ManiSkill"),
    "libero": ("seq.shelf.libero", "Libero"),
    "libero-compatible": ("seq.shelf.libero", "LiberoCompatible"),
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
}

BUILTINS = {"benchmark": BUILTIN_BENCHMARKS, "policy": BUILTIN_POLICIES}
