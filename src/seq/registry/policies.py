"""Python twin of `seq policy ls`: every policy built in or registered."""

from __future__ import annotations

from typing import Any

from seq.record.store import Store
from seq.registry.builtins import BUILTIN_POLICIES


def _kind(ref: dict[str, Any] | None, name: str) -> str:
    if name in BUILTIN_POLICIES:
        return "built-in"
    if ref and "remote" in ref:
        return "served"
    if ref and "in_memory" in ref:
        return "in memory"
    return "deployed"


def _builtin_parameters(name: str) -> dict[str, Any]:
    """A built-in policy's declared parameters, read from its class (its module imports no simulator)."""
    import importlib

    from seq.authoring.policy import policy_spec_of

    module, qualname = BUILTIN_POLICIES[name]
    return (
        policy_spec_of(getattr(importlib.import_module(module), qualname)).describe().get("parameters") or {}
    )


def policies(store: Store | None = None) -> list[dict[str, Any]]:
    """Every policy built in or registered (deployed, served, or an object evaluated in memory), by
    name: its latest version, where it comes from, its parameters and its latest eval (an arm of it
    counts)."""
    store = store or Store()
    latest = {row.name: row for row in store.versions("policy")}
    last_eval: dict[str, tuple[str, str]] = {}
    for row in store.evals():  # newest first: the first seen is the latest
        names = {arm.policy_name for arm in row.manifest.arms} | {row.policy}
        for name in names:
            if name:
                last_eval.setdefault(name, (row.id, row.status))
    rows = []
    for name in sorted(set(BUILTIN_POLICIES) | set(latest)):
        version = latest.get(name)
        seen = last_eval.get(name)
        rows.append(
            {
                "name": name,
                "version": version.version if version else None,
                "kind": _kind(version.ref if version else None, name),
                "parameters": _builtin_parameters(name)
                if name in BUILTIN_POLICIES
                else ((version.declared.get("parameters") if version else None) or {}),
                "latest_eval": seen[0] if seen else None,
                "latest_eval_status": seen[1] if seen else None,
            }
        )
    return rows
