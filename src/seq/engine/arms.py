"""Arms: the policies (or parameter values) an eval runs side by side on the same episodes.

An eval of one policy has one arm. `--vs` adds a second, `--sweep` one per value; every arm runs
the same conditions, seeds and trials, so its episodes pair up with the first arm's.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from seq.errors import SeqInputError


@dataclass(frozen=True)
class Arm:
    """One policy and the parameter values it runs with, under a name the report uses.

    >>> seq.eval.run("noisy-expert", benchmark="metaworld",
    ...              arms=[seq.Arm("noisy-expert", {"noise": 0.0}), seq.Arm("noisy-expert", {"noise": 1.0})])
    """

    policy: Any
    params: Mapping[str, Any] = field(default_factory=dict)
    name: str | None = None
    flags: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)  # key -> its flag

    def flag(self, key: str) -> str:
        """The command-line flag that set `key` on this arm (`--param` unless `--sweep`/`--vs-param`)."""
        return self.flags.get(key, "--param")


def _policy_label(policy: Any) -> str:
    return policy.__name__ if isinstance(policy, type) else str(policy)


def _named(arms: list[Arm]) -> list[Arm]:
    """Give unnamed arms the names that tell them apart: the policy and the parameters that differ."""
    if len(arms) == 1:
        return [Arm(arms[0].policy, arms[0].params, arms[0].name or "", arms[0].flags)]
    policies = {_policy_label(arm.policy) for arm in arms}
    keys = sorted({key for arm in arms for key in arm.params})
    varying = [k for k in keys if len({str(arm.params.get(k)) for arm in arms}) > 1]
    named = []
    for index, arm in enumerate(arms):
        parts = [_policy_label(arm.policy)] if len(policies) > 1 else []
        parts += [f"{key.rpartition('.')[2]}={arm.params.get(key, 'default')}" for key in varying]
        named.append(Arm(arm.policy, arm.params, arm.name or " ".join(parts) or chr(65 + index), arm.flags))
    names = [arm.name for arm in named]
    if len(set(names)) != len(names):
        named = [Arm(a.policy, a.params, f"{chr(65 + i)}: {a.name}", a.flags) for i, a in enumerate(named)]
    return named


def build_arms(
    policy: Any,
    params: Mapping[str, Any] | None = None,
    *,
    vs: Any = None,
    vs_params: Mapping[str, Any] | None = None,
    sweep: Mapping[str, Sequence[Any]] | None = None,
    arms: Sequence[Arm] | None = None,
) -> list[Arm]:
    """The arms of an eval: explicit `arms`, else `policy` with `params`, swept over `sweep`
    (every combination of the listed values), plus `vs` with `vs_params` as a last arm."""
    if arms:
        if policy is not None or vs is not None or sweep:
            raise SeqInputError("give either arms= or policy/vs/sweep, not both.")
        return _named([a if isinstance(a, Arm) else Arm(a) for a in arms])
    params = dict(params or {})
    built = [Arm(policy, params)]
    if sweep:
        for key, values in sweep.items():
            if isinstance(values, (str, bytes)) or not list(values):
                raise SeqInputError(f"--sweep {key}: expected a list of values, such as {key}=0.0,0.5,1.0.")
            if key in params:
                raise SeqInputError(
                    f"--sweep {key}: the parameter is also set with --param; set it in one place."
                )
        keys = list(sweep)
        built = [
            Arm(
                policy,
                {**params, **dict(zip(keys, combo, strict=True))},
                flags=dict.fromkeys(keys, "--sweep"),
            )
            for combo in itertools.product(*sweep.values())
        ]
    if vs is not None:
        built.append(Arm(vs, dict(vs_params or {}), flags=dict.fromkeys(vs_params or {}, "--vs-param")))
    return _named(built)
