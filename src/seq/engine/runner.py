"""Run an eval: resolve versions, plan and store the work items, run them, record every episode."""

from __future__ import annotations

import importlib
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from typing import Any

from seq._version import __version__, git_sha
from seq.authoring.adapter import AdapterSpec, resolve_with_adapter
from seq.authoring.benchmark import spec_of
from seq.authoring.params import Parameter, settable
from seq.authoring.policy import Policy, policy_spec_of
from seq.engine.arms import Arm
from seq.engine.compatibility import check_compatibility
from seq.engine.inprocess import InProcessBackend
from seq.engine.local import LocalBackend, WorkersFailed
from seq.engine.plan import plan
from seq.engine.scoring import score_groups
from seq.engine.sequential import check_sequential, decide, plan_rounds
from seq.engine.shards import HealthCheck, Shard, ShardUnhealthy, SharedQueue
from seq.engine.worker import ArmConfig, WorkerConfig
from seq.errors import EvalCanceled, SeqInputError
from seq.record.episode import EpisodeResult
from seq.record.store import CANCELED, COMPLETED, FAILED, RUNNING, EvalRow, Store, VersionRow, WorkItem
from seq.registry.adapters import adapter_spec, describe_transforms, load_adapter, resolve_adapter
from seq.registry.deploy import load_version, register_remote, remember_instance, resolve
from seq.registry.loader import IN_MEMORY, load_class

EVAL_PARAMETERS = {"steps_per_query": Parameter("steps_per_query", "int", None)}


def default_envs() -> int:
    """One worker per core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@dataclass
class EvalRequest:
    """The arguments of an eval, as `seq eval run` takes them (see `seq.eval.run`)."""

    arms: list[Arm]
    benchmark: Any
    envs: int | None = None
    suites: Sequence[str] | None = None
    tasks: Sequence[str] | None = None
    seeds: Sequence[int] | None = None
    max_steps: int | None = None
    trials: int = 1
    threshold: float = 0.05
    record: str | None = None  # all | first | none; None: the benchmark's render= (first) or none
    trajectories: bool = False
    sequential: dict[str, Any] | None = None  # {"alpha", "looks", "metric"}: stop when decided
    eval_id: str | None = None  # given by the user for shards: the first shard creates it
    adapter: Any = None  # NAME or NAME@vN (or an @seq.adapter class): between the benchmark and every arm
    serve: dict[str, Any] | None = None  # {"max_batch_size", "max_wait_ms"}: serve each arm's policy
    policy_url: str | None = None  # the first arm's policy is already served there
    policy_protocol: str = "seq"  # ... speaking this protocol: seq, openpi or vla-eval


def _resolve_params(
    policy_parameters: dict[str, Parameter],
    benchmark_row: VersionRow,
    params: Mapping[str, Any],
    adapter: AdapterSpec | None = None,
) -> dict:
    benchmark_spec = spec_of(load_version(benchmark_row))
    sides = {
        "policy": policy_parameters,
        "benchmark": benchmark_spec.setup_parameters,
        "eval": EVAL_PARAMETERS,
    }
    values = resolve_with_adapter(params, sides, adapter)
    steps_per_query = values["eval"]["steps_per_query"]
    if steps_per_query is not None and steps_per_query < 1:
        raise SeqInputError(
            f"--param eval.steps_per_query must be 1 or more, got {steps_per_query}; "
            f"the eval can set: {settable(sides)}."
        )
    return values


def _check_envs(envs: int | None) -> int:
    if envs is None:
        return default_envs()
    if isinstance(envs, bool) or not isinstance(envs, int) or envs < 1:
        raise SeqInputError(f"--envs must be a positive integer, got {envs!r}.")
    return envs


@dataclass(frozen=True)
class PreparedEval:
    """An eval validated and planned, not stored yet: what `start_eval` stores, `dry_run` shows."""

    eval_id: str
    policy: VersionRow
    benchmark: VersionRow
    arguments: dict[str, Any]
    manifest: dict[str, Any]
    items: list[WorkItem]


def start_eval(request: EvalRequest, store: Store) -> EvalRow:
    """Validate the request, plan the work items and store the eval before any episode runs."""
    prepared = prepare_eval(request, store)
    eval_id, arguments = prepared.eval_id, prepared.arguments
    existing = store.get_eval(eval_id)
    if existing is None:
        try:
            store.create_eval(
                eval_id, prepared.policy, prepared.benchmark, arguments, prepared.manifest, prepared.items
            )
        except sqlite3.IntegrityError:  # another shard created it a moment ago
            existing = store.get_eval(eval_id)
    if existing is not None:
        mine = {k: v for k, v in arguments.items() if k != "envs"}
        theirs = {k: v for k, v in existing.arguments.items() if k != "envs"}
        if mine != theirs:
            raise SeqInputError(
                f"--eval-id {eval_id}: an eval with this id exists with other arguments; "
                "every shard of one eval must be started with the same ones."
            )
        return existing
    return store.get_eval(eval_id)  # type: ignore[return-value]


def dry_run(request: EvalRequest, store: Store) -> dict[str, Any]:
    """What the eval would run, without running or storing it: each arm's parameter values and where
    each came from (`--param` or the declaring side's default), the episodes, and at most how many
    policy queries (every episode to `max_steps`, one query per `steps_per_query` actions)."""
    prepared = prepare_eval(request, store)
    default_steps = prepared.manifest["default_max_steps"]
    arms = []
    for arm in prepared.manifest["arms"]:
        given = arm["params"]
        mine = [item for item in prepared.items if item.arm in ("", arm["name"])]
        per_query = arm["parameters"]["eval"].get("steps_per_query") or 1
        parameters = {
            f"{side}.{name}": {
                "value": value,
                "from": "--param/--sweep"
                if f"{side}.{name}" in given or name in given
                else f"{side} default",
            }
            for side, values in arm["parameters"].items()
            for name, value in values.items()
        }
        arms.append(
            {
                "arm": arm["name"],
                "policy": arm["policy"],
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
        "adapter": prepared.arguments.get("adapter"),
    }


def prepare_eval(request: EvalRequest, store: Store) -> PreparedEval:
    """Resolve versions and parameters, check compatibility and plan the work items."""
    benchmark_row = resolve("benchmark", request.benchmark, store)
    _check_envs(request.envs)
    spec = spec_of(load_version(benchmark_row))
    adapter_row = resolve_adapter(request.adapter, store) if request.adapter is not None else None
    adapter_declared = adapter_spec(adapter_row) if adapter_row is not None else None
    arms, policies = [], []
    if request.policy_url is not None and request.serve is not None:
        raise SeqInputError("--serve starts a server for the policy, --policy-url uses one: give one.")
    for index, arm in enumerate(request.arms):
        remote = request.policy_url if index == 0 else None
        if remote is not None:
            policy_row, declared = register_remote(remote, request.policy_protocol, store)
            policy_cls = None
        else:
            policy_row = resolve("policy", arm.policy, store)
            policy_cls = type(arm.policy) if isinstance(arm.policy, Policy) else load_version(policy_row)
            declared = policy_spec_of(policy_cls).parameters
        values = _resolve_params(declared, benchmark_row, arm.params, adapter_declared)
        policies.append(policy_cls)
        arms.append(
            {
                "in_memory": remember_instance(arm.policy) if isinstance(arm.policy, Policy) else None,
                "name": arm.name or "",
                "policy": policy_row.label,
                "policy_name": policy_row.name,
                "policy_version": policy_row.version,
                "policy_sha256": policy_row.sha256,
                "params": {k: str(v) for k, v in arm.params.items()},
                "parameters": values,
                "policy_url": remote,
                "protocol": request.policy_protocol if remote else "seq",
            }
        )
    items = plan(
        spec,
        suites=request.suites,
        tasks=request.tasks,
        seeds=request.seeds,
        max_steps=request.max_steps,
        trials=request.trials,
        arms=[arm["name"] for arm in arms] if len(arms) > 1 else (),
    )
    _check_compatibility(arms, policies, benchmark_row, adapter_row, items)
    first = store.version("policy", arms[0]["policy_name"], arms[0]["policy_version"])
    assert first is not None
    if request.sequential is not None:
        check_sequential(request.sequential, len(arms))
    eval_id = request.eval_id or "ev-" + uuid.uuid4().hex[:10]
    observers = _observer_specs(spec, items, request, store.path.parent / "artifacts" / eval_id)
    arguments = {
        "arms": [{"name": a["name"], "policy": a["policy"], "params": a["params"]} for a in arms],
        "benchmark": benchmark_row.label,
        "envs": request.envs,
        "suites": list(request.suites or [spec.default_suite]),
        "tasks": list(request.tasks or []) or None,
        "seeds": None if request.seeds is None else list(request.seeds),
        "max_steps": request.max_steps,
        "trials": request.trials,
        "threshold": request.threshold,
        "record": request.record,
        "trajectories": request.trajectories,
        "observers": observers,
        "sequential": request.sequential,
        "serve": request.serve,
        "adapter": adapter_row.label if adapter_row is not None else None,
    }
    manifest = {
        "seq": {"version": __version__, "git_sha": git_sha()},
        "benchmark": {
            "name": benchmark_row.name,
            "version": benchmark_row.version,
            "sha256": benchmark_row.sha256,
        },
        "policy": {"name": first.name, "version": first.version, "sha256": first.sha256},
        "adapter": arms[0].get("adapter"),
        "arms": arms,
        "seeds": sorted({item.condition.seed for item in items}),
        "parameters": arms[0]["parameters"],
        "default_max_steps": spec.max_steps,
        "declared": spec.describe()["declared"],
    }
    return PreparedEval(eval_id, first, benchmark_row, arguments, manifest, items)


def _check_compatibility(
    arms: list[dict[str, Any]],
    policies: list[type],
    benchmark_row: VersionRow,
    adapter_row: VersionRow | None,
    items: list,
) -> None:
    """Before anything is stored: refuse an arm whose policy cannot take the benchmark's observation
    (through the adapter, whose lossless labels are checked again on it), naming the keys; record
    each arm's adapter version and lossy transforms (its parameters may change them)."""
    benchmark_cls = load_version(benchmark_row)
    conditions = list({item.condition.key: item.condition for item in items}.values())
    for arm, policy_cls in zip(arms, policies, strict=True):
        adapter = None
        if adapter_row is not None:
            adapter = load_adapter(adapter_row.ref, arm["parameters"]["adapter"])
            arm["adapter"] = {
                "name": adapter_row.name,
                "version": adapter_row.version,
                "sha256": adapter_row.sha256,
                "label": adapter_row.label,
                "lossy": describe_transforms(adapter)["lossy"],
            }
        seen = check_compatibility(
            benchmark_cls,
            benchmark_row.label,
            arm["parameters"]["benchmark"],
            conditions,
            policy_cls,
            arm["policy"],
            adapter,
            adapter_row.label if adapter_row is not None else None,
        )
        if seen is not None:
            arm["observation"] = {k: v for k, v in seen.to_manifest().items() if k != "adapter"}


def _observer_specs(spec: Any, items: list, request: EvalRequest, directory: Any) -> list[dict[str, Any]]:
    """The recordings and trajectories this eval writes (see `seq.record.artifacts`)."""
    if request.trajectories or request.record not in (None, "none") or spec.declared.get("render"):
        from seq.record.artifacts import observer_specs

        return observer_specs(spec, items, request.record, request.trajectories, directory)
    return []


def worker_config(eval_row: EvalRow, store: Store) -> WorkerConfig:
    """What the eval's workers load: the benchmark's class and each arm's policy and parameters."""
    benchmark_row = store.version("benchmark", eval_row.benchmark, eval_row.benchmark_version)
    assert benchmark_row is not None
    arms = {}
    for arm in eval_row.manifest["arms"]:
        policy_row = store.version("policy", arm["policy_name"], arm["policy_version"])
        assert policy_row is not None
        values = arm["parameters"]
        ref = {**policy_row.ref, "in_memory": arm["in_memory"]} if arm.get("in_memory") else policy_row.ref
        adapter_ref = None
        if arm.get("adapter"):
            held = arm["adapter"]
            adapter_row = store.version("adapter", held["name"], held["version"])
            if adapter_row is None or adapter_row.sha256 != held["sha256"]:
                raise SeqInputError(
                    f"adapter {held['label']}: that number no longer holds the code this eval ran."
                )
            adapter_ref = adapter_row.ref
        arms[arm["name"]] = ArmConfig(
            ref,
            values["benchmark"],
            values["policy"],
            values["eval"]["steps_per_query"],
            adapter_ref,
            values.get("adapter", {}),
            arm.get("policy_url"),
            arm.get("protocol", "seq"),
        )
    return WorkerConfig(benchmark_row.ref, arms, eval_row.arguments.get("observers", []))


@contextmanager
def _served(config: WorkerConfig, settings: dict[str, Any] | None) -> Iterator[WorkerConfig]:
    """With `--serve`: a batching policy server per arm in this process, the workers pointed at it."""
    if not settings:
        yield config
        return
    from seq.serving import serve

    with ExitStack() as servers:
        arms = {}
        for name, arm in config.arms.items():
            if arm.policy_url is not None:
                arms[name] = arm
                continue
            in_memory = arm.policy_ref.get("in_memory")
            policy = IN_MEMORY[in_memory] if in_memory else load_class(arm.policy_ref)
            server = servers.enter_context(
                serve(
                    policy,
                    port=0,
                    max_batch_size=settings["max_batch_size"],
                    max_wait_ms=settings["max_wait_ms"],
                )
            )
            arms[name] = replace(arm, policy_url=server.url, protocol="seq")
        yield replace(config, arms=arms)


def _backend(
    config: WorkerConfig, workers: int, engine: str, address: str | None, shard: Shard | None, in_memory: bool
) -> Any:
    """Where the episodes run: in this process (a policy object held here), on local worker
    processes, or on Ray actors."""
    if in_memory and shard is not None:
        raise SeqInputError(
            "a policy object in this process's memory cannot be sharded; pass its name instead."
        )
    if engine not in ("local", "ray"):
        raise SeqInputError(f"--engine {engine}: expected local or ray.")
    if in_memory:
        return InProcessBackend(config)
    if engine == "ray":
        if shard is not None:
            raise SeqInputError("--engine ray runs the whole eval on the cluster; it takes no --shard-id.")
        from seq.engine.ray_backend import RayBackend

        return RayBackend(config, workers, address)
    return LocalBackend(config, workers)


def execute_eval(
    eval_row: EvalRow,
    store: Store,
    envs: int | None = None,
    on_result: Callable[[EpisodeResult], None] | None = None,
    shard: Shard | None = None,
    engine: str = "local",
    address: str | None = None,
) -> str:
    """Run the eval's unfinished work items and record each episode as it finishes.

    Returns the final status. Ctrl-C stops the workers, keeps what ran, marks the eval
    `canceled` and raises `EvalCanceled`.
    """
    benchmark_row = store.version("benchmark", eval_row.benchmark, eval_row.benchmark_version)
    assert benchmark_row is not None
    config = worker_config(eval_row, store)
    items = store.items(eval_row.id, unfinished_only=True)
    workers = _check_envs(envs if envs is not None else eval_row.arguments.get("envs"))
    store.set_eval_status(eval_row.id, RUNNING)
    environment_seen = bool(eval_row.manifest.get("environment"))

    health = HealthCheck() if shard is not None else None

    def record(result: EpisodeResult) -> None:
        store.write_episode(eval_row.id, result)
        if on_result is not None:
            on_result(result)
        if health is not None:
            health(result)

    def worker_ready(report: dict[str, Any]) -> None:
        nonlocal environment_seen
        store.add_setup_cpu(eval_row.id, report["setup_cpu_s"])
        if not environment_seen:
            store.update_manifest(eval_row.id, environment=report["environment"])
            environment_seen = True

    servers = ExitStack()
    config = servers.enter_context(_served(config, eval_row.arguments.get("serve")))
    in_memory = any("in_memory" in arm.policy_ref and arm.policy_url is None for arm in config.arms.values())
    try:
        backend = _backend(config, workers, engine, address, shard, in_memory)
    except BaseException:
        servers.close()
        raise
    started = time.perf_counter()
    if workers < default_envs() and not in_memory:
        # scipy.stats takes a second to import: do it on the spare core while the workers run
        # (where no core is spare, doing it now would only slow the workers down).
        threading.Thread(target=importlib.import_module, args=("scipy.stats",), daemon=True).start()
    status = COMPLETED
    sequential = eval_row.arguments.get("sequential")
    try:
        if sequential and not eval_row.manifest.get("sequential"):
            rounds = plan_rounds(items, store.items(eval_row.id), sequential)
            backend.run(
                rounds[0], record, worker_ready, rounds[1:], lambda: decide(eval_row, store) is not None
            )
            if not store.get_eval(eval_row.id).manifest.get("sequential"):  # type: ignore[union-attr]
                decide(eval_row, store)  # the last look: decided, or the horizon reached
        elif shard is not None:
            backend.run(SharedQueue(store, eval_row.id, shard), record, worker_ready)
        elif items and not eval_row.manifest.get("sequential"):
            backend.run(items, record, worker_ready)
    except KeyboardInterrupt:
        status = CANCELED
    except ShardUnhealthy:
        status = RUNNING
        if shard is not None and shard.requeue_unhealthy:
            store.release_claims(eval_row.id, shard.name)
        raise
    except WorkersFailed:
        status = FAILED
        raise
    finally:
        servers.close()
        if shard is not None and status == COMPLETED:
            status = store.finish_shard(eval_row.id, time.perf_counter() - started)  # or others still run
        else:
            store.set_eval_status(eval_row.id, status, add_wall_s=time.perf_counter() - started)
        if status in (COMPLETED, CANCELED):
            store.write_scores(eval_row.id, score_groups(load_version(benchmark_row), store, eval_row.id))
    if status == CANCELED:
        raise EvalCanceled(eval_row.id)
    return status


def resume_eval(eval_id: str, store: Store) -> EvalRow:
    row = store.get_eval(eval_id)
    if row is None:
        raise SeqInputError(f"--resume {eval_id}: no eval has that id (seq eval ls lists them).")
    return row
