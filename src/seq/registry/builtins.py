"""Benchmarks and policies that ship with `seq`, usable by name without `seq deploy`."""

from __future__ import annotations

BUILTIN_BENCHMARKS: dict[str, tuple[str, str]] = {
    "metaworld": ("seq.shelf.metaworld", "MetaWorld"),
}

BUILTIN_POLICIES: dict[str, tuple[str, str]] = {
    "metaworld-expert": ("seq.shelf.metaworld", "MetaWorldExpert"),
    "noisy-expert": ("seq.shelf.metaworld", "NoisyExpert"),
    "random": ("seq.shelf.random", "RandomPolicy"),
}

BUILTINS = {"benchmark": BUILTIN_BENCHMARKS, "policy": BUILTIN_POLICIES}
