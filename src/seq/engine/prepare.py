"""Prepare an eval, before any episode runs, in four stages; `start_eval` runs all four and
`dry_run` (`seq.engine.dry_run`) the first three:

1. Resolve (`seq.engine.resolution`): the arms asked for; the benchmark, the adapter and each
   arm's policy as versions of the record, their classes, each arm's parameter values, then the
   weights they name and the adapter loaded with them.
2. Check (`seq.engine.eval_checks`): every refusal, each group as soon as what it reads is known:
   the request alone before stage 1, the versions before their weights are read, each arm's
   observation on the planned conditions, and what only running needs just before storing.
3. Plan (`plan_eval`): the work items (`seq.engine.plan`), the workers and the episodes each runs
   side by side, and the arguments and manifest the record keeps.
4. Store (`start_eval`): the eval and its work items, once, however many shards start it.
"""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import dataclass, field
from typing import Any

from seq._version import __version__, git_sha
from seq.authoring.benchmark import BenchmarkSpec
from seq.authoring.policy import Policy
from seq.engine.arms import Arm
from seq.engine.capacity import capped_workers, default_envs
from seq.engine.eval_checks import check_observations, check_request, check_runnable, check_versions
from seq.engine.plan import plan
from seq.engine.request import EvalRequest
from seq.engine.resolution import ResolvedEval, pin_arms, resolve_eval
from seq.engine.side_by_side import SideBySide, auto_side_by_side, episodes
from seq.errors import SeqInputError
from seq.record.arguments import ArmArguments, EvalArguments, SequentialOptions, ServeOptions
from seq.record.manifest import ArmManifest, Manifest, Pinned, SeqBuild
from seq.record.paths import artifact_folder
from seq.record.states import PolicyProtocol
from seq.record.store import EvalRow, Store, VersionRow, WorkItem
from seq.registry.deploy import remember_instance


@dataclass(frozen=True)
class PreparedEval:
    """An eval validated and planned, not stored yet: what `start_eval` stores, `dry_run` shows."""

    eval_id: str
    policy: VersionRow
    benchmark: VersionRow
    arguments: EvalArguments
    manifest: Manifest
    items: list[WorkItem]
    workers: int
    side_by_side: SideBySide  # the episodes each worker runs at once, and why
    asked: list[Arm] = field(default_factory=list)  # the arms as asked: the flag that set each value


def prepare_eval(request: EvalRequest, store: Store) -> PreparedEval:
    """Stages 1 to 3: resolve, check and plan the eval `request` asks for, storing nothing of it."""
    check_request(request)  # 2: the request alone, before anything is read
    resolved = resolve_eval(request, store)  # 1
    check_versions(request, resolved)  # 2: the versions, before their weights are read
    resolved = pin_arms(resolved)  # 1: the weights and the adapter each arm names
    names = [arm.arm.name or "" for arm in resolved.arms]
    items = plan(  # 3: the work items
        resolved.spec,
        suites=request.suites,
        tasks=request.tasks,
        seeds=request.seeds,
        max_steps=request.max_steps,
        trials=request.planned_trials,
        timeout_s=request.timeout_s,
        arms=names if len(names) > 1 or names[0] else (),
    )
    observations = check_observations(resolved, items)  # 2: each arm's observation
    return plan_eval(request, resolved, items, observations, store)  # 3


def start_eval(request: EvalRequest, store: Store) -> EvalRow:
    """All four stages: the eval stored with its work items, before any episode runs (a shard that
    finds it stored by another gets that one)."""
    prepared = prepare_eval(request, store)
    eval_id, arguments = prepared.eval_id, prepared.arguments
    check_runnable(prepared.benchmark)  # before the eval is stored: it may build an image
    existing = store.get_eval(eval_id)
    if existing is None:
        try:
            store.create_eval(
                eval_id, prepared.policy, prepared.benchmark, arguments, prepared.manifest, prepared.items
            )
        except sqlite3.IntegrityError:  # another shard created it a moment ago
            existing = store.get_eval(eval_id)
    if existing is not None:
        if arguments.what() != existing.arguments.what():
            raise SeqInputError(
                f"--eval-id {eval_id}: an eval with this id exists with other arguments; "
                "every shard of one eval must be started with the same ones."
            )
        return existing
    return store.get_eval(eval_id)  # type: ignore[return-value]


def plan_eval(
    request: EvalRequest,
    resolved: ResolvedEval,
    items: list[WorkItem],
    observations: list[dict[str, Any] | None],
    store: Store,
) -> PreparedEval:
    """Stage 3 past the work items: each arm's manifest, the workers and the episodes each runs at
    once, and the arguments and manifest the record keeps. `observations`: what each arm's policy
    was checked to take."""
    spec, benchmark_row = resolved.spec, resolved.benchmark
    arms = [
        ArmManifest(
            in_memory=remember_instance(arm.arm.policy) if isinstance(arm.arm.policy, Policy) else None,
            name=arm.arm.name or "",
            policy=arm.policy.label,
            policy_name=arm.policy.name,
            policy_version=arm.policy.version,
            policy_sha256=arm.policy.sha256,
            params={k: str(v) for k, v in arm.arm.params.items()},
            parameters=arm.values,
            asked={k: str(v) for k, v in arm.asked.items()},
            policy_url=arm.policy_url,
            protocol=request.policy_protocol if arm.policy_url else PolicyProtocol.SEQ,
            server=arm.server,
            image_encoding=request.image_encoding,
            adapter=arm.adapter_pin,
            observation=observation,
            weights=arm.weights,
        )
        for arm, observation in zip(resolved.arms, observations, strict=True)
    ]
    # no more workers than episodes: the dispatcher starts no idle ones, and the plan says so
    workers = min(request.envs or spec.declared.get("cpu") or default_envs(), max(len(items), 1))
    workers = capped_workers(workers, request.engine, request.envs)  # no more than the machine holds
    side_by_side = _side_by_side(request, arms, spec, items, workers)
    first = resolved.arms[0].policy
    sequential = (
        SequentialOptions(request.alpha, request.looks, request.metric) if request.sequential else None
    )
    serve = None
    if request.serve:
        # the batches a served model takes by default: one per episode asked for (not the auto
        # count, which shares round trips and may be more than a model's memory holds at once)
        batch = request.max_batch_size or workers * (request.envs_per_worker or 1)
        serve = ServeOptions(batch, request.max_wait_ms)
    eval_id = request.eval_id or "ev-" + uuid.uuid4().hex[:10]
    observers = _observer_specs(spec, items, request, artifact_folder(store.path.parent, eval_id))
    adapter_row = resolved.adapter
    arguments = EvalArguments(
        arms=[ArmArguments(arm.name, arm.policy, arm.params) for arm in arms],
        benchmark=benchmark_row.label,
        envs=request.envs,
        envs_per_worker=side_by_side.count,
        envs_per_worker_chosen=side_by_side.chosen,
        suites=list(request.suites or [spec.default_suite]),
        tasks=list(request.tasks or []) or None,
        seeds=None if request.seeds is None else list(request.seeds),
        max_steps=request.max_steps,
        trials=request.planned_trials,
        threshold=request.threshold,
        record=request.record,
        trajectories=request.trajectories,
        observers=observers,
        sequential=sequential,
        serve=serve,
        adapter=adapter_row.label if adapter_row is not None else None,
        allow_cpu=request.allow_cpu,
    )
    manifest = Manifest(
        seq=SeqBuild(__version__, git_sha()),
        benchmark=Pinned(benchmark_row.name, benchmark_row.version, benchmark_row.sha256),
        policy=Pinned(first.name, first.version, first.sha256),
        adapter=arms[0].adapter,
        arms=arms,
        seeds=sorted({item.condition.seed for item in items}),
        parameters=arms[0].parameters,
        default_max_steps=spec.max_steps,
        declared=spec.describe()["declared"],
    )
    asked = [arm.arm for arm in resolved.arms]
    return PreparedEval(
        eval_id, first, benchmark_row, arguments, manifest, items, workers, side_by_side, asked
    )


def _side_by_side(
    request: EvalRequest, arms: list[ArmManifest], spec: BenchmarkSpec, items: list[WorkItem], workers: int
) -> SideBySide:
    """The episodes each worker runs at once: as asked, else as `seq.engine.side_by_side` decides."""
    if request.envs_per_worker is not None:
        count = request.envs_per_worker
        return SideBySide(count, f"{episodes(count)}, as asked (--envs-per-worker)")
    alone = None
    if request.engine != "local":
        alone = "Ray's workers run one"
    elif any(arm.in_memory is not None for arm in arms):
        alone = "the policy object runs in this process"
    elif any(arm.protocol != PolicyProtocol.SEQ for arm in arms):
        article = "an" if request.policy_protocol == PolicyProtocol.OPENPI else "a"
        alone = f"{article} {request.policy_protocol} server takes one act a message"
    elif not all(_takes_act_batch(arm.server) for arm in arms):
        alone = "its seq server answers one act a message (a seq from before act_batch)"
    elif not request.serve and any(arm.policy_url is None for arm in arms):
        alone = "the policy runs inline (--envs-per-worker N asks a batched one for its batches)"
    elif any(item.condition.timeout_s is not None for item in items):
        # an episode's timeout_s is wall time, which the episodes side by side share: each would
        # be timed out by the others' steps (and a worker killed by the watchdog)
        alone = "its episodes have a timeout_s, and episodes side by side share their wall time"
    elif spec.batched:  # its setup sizes its worlds: more episodes than worlds find none to claim
        alone = "a batched benchmark holds as many worlds as its setup makes (--envs-per-worker N)"
    declared = spec.declared
    return auto_side_by_side(
        alone=alone,
        items=len(items),
        workers=workers,
        env_memory=declared.get("env_memory"),
        memory=declared.get("memory"),
    )


def _takes_act_batch(server: dict[str, Any] | None) -> bool:
    """The server's greeting (an arm's `server`; None: served by this seq) offers `act_batch`."""
    if server is None:
        return True
    metadata = server.get("metadata")
    capabilities = metadata.get("capabilities") if isinstance(metadata, dict) else None
    return isinstance(capabilities, dict) and bool(capabilities.get("act_batch"))


def _observer_specs(spec: Any, items: list, request: EvalRequest, directory: Any) -> list[dict[str, Any]]:
    """The recordings and trajectories this eval writes (see `seq.capture.observers`)."""
    wanted = request.trajectories or request.traces or request.record not in (None, "none")
    if wanted or spec.declared.get("render"):
        from seq.capture.observers import observer_specs

        return observer_specs(spec, items, request.record, request.trajectories, directory, request.traces)
    return []
