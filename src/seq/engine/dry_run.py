"""A dry run: what an eval would run (`seq eval run --dry-run`), prepared as `start_eval`
prepares it (`seq.engine.prepare`), neither run nor stored."""

from __future__ import annotations

from typing import Any

from seq.engine.arms import Arm
from seq.engine.prepare import PreparedEval, prepare_eval
from seq.engine.request import EvalRequest
from seq.errors import SeqInputError
from seq.record.manifest import ArmManifest
from seq.record.store import Store
from seq.registry.builtins import SUGGESTED_ADAPTERS


def dry_run(request: EvalRequest, store: Store) -> dict[str, Any]:
    """What the eval would run, without running or storing it: each arm's parameter values and where
    each came from (a flag, the policy or the declaring side's default), the episodes, and at most how many
    policy queries (every episode to `max_steps`, one query per `steps_per_query` actions)."""
    for option, eval_id in (("resume", request.resume), ("rerun-failed", request.rerun_failed)):
        if eval_id is not None:
            raise SeqInputError(
                f"--dry-run plans a new eval, and --{option} runs a stored one: "
                f"`seq eval status {eval_id}` shows what it has left."
            )
    prepared = prepare_eval(request, store)
    default_steps = prepared.manifest.default_max_steps
    assert default_steps is not None  # a new eval's manifest has its benchmark's limit
    arms = []
    for arm, flagged in zip(prepared.manifest.arms, prepared.asked, strict=True):
        mine = [item for item in prepared.items if item.arm in ("", arm.name)]
        per_query = arm.parameters["eval"].get("steps_per_query") or 1
        parameters = {
            f"{side}.{name}": {"value": value, "from": _value_source(arm, flagged, side, name)}
            for side, values in arm.parameters.items()
            for name, value in values.items()
        }
        arms.append(
            {
                "arm": arm.name,
                "policy": arm.policy,
                "parameters": parameters,
                "episodes": len(mine),
                "max_policy_queries": sum(
                    -(-(i.condition.max_steps or default_steps) // per_query) for i in mine
                ),
            }
        )
    return {
        "benchmark": prepared.benchmark.label,
        "episodes": len(prepared.items),
        "arms": arms,
        "adapter": prepared.arguments.adapter,
        "suggestion": _suggestion(request, prepared),
        "workers": prepared.workers,
        "envs_per_worker": prepared.side_by_side.count,
        "envs_per_worker_why": prepared.side_by_side.why,
    }


def _value_source(arm: ArmManifest, flagged: Arm, side: str, name: str) -> str:
    """Where an arm's value came from: the flag that set it (`--param`, `--sweep`, `--vs-param`),
    the policy asking the benchmark for it, the server a served policy runs on, or the declaring
    side's default."""
    key = f"{side}.{name}" if f"{side}.{name}" in arm.params else name if name in arm.params else None
    if key is not None:
        return flagged.flag(key)
    if f"{side}.{name}" in arm.asked:
        return f"asked by {arm.policy}"
    if side == "policy" and arm.policy_url is not None:
        return "the server's"  # what it was started with (`--param`), else the policy's default
    return f"{side} default"


def _suggestion(request: EvalRequest, prepared: PreparedEval) -> str | None:
    """The built-in adapter a served policy's protocol needs on this benchmark, where none is given
    (a vla-eval LIBERO server reads vla-eval's LIBERO layout, not seq's observation)."""
    if request.adapter is not None or request.policy_url is None:
        return None
    adapter = SUGGESTED_ADAPTERS.get((prepared.benchmark.name, request.policy_protocol))
    if adapter is None:
        return None
    return (
        f"a {request.policy_protocol} server written for {prepared.benchmark.name} reads "
        f"{request.policy_protocol}'s observation layout, not seq's: add --adapter {adapter}"
    )
