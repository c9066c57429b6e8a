"""Benchmarks and policies that ship with `seq`, usable by name without `seq deploy`."""

from __future__ import annotations

BUILTIN_BENCHMARKS: dict[str, tuple[str, str]] = {
    "metaworld": ("seq.benchmarks.metaworld", "MetaWorld"),
}

BUILTIN_POLICIES: dict[str, tuple[str, str]] = {
    "metaworld-expert": ("seq.policies.metaworld", "MetaWorldExpert"),
    "noisy-expert": ("seq.policies.metaworld", "NoisyExpert"),
    "random": ("seq.policies.random", "RandomPolicy"),
}

BUILTINS = {"benchmark": BUILTIN_BENCHMARKS, "policy": BUILTIN_POLICIES}
