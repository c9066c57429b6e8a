"""Run an eval: its workers, its backend and its servers; every episode recorded as it finishes."""

from __future__ import annotations

import importlib
import math
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import asdict, replace
from typing import Any

from seq.engine.capacity import capped_workers, default_envs
from seq.engine.dispatch import Backend, Dispatcher, WorkersFailed
from seq.engine.eval_checks import check_envs
from seq.engine.logs import EvalLogs
from seq.engine.scoring import Scores, score_eval
from seq.engine.sequential import decide, plan_rounds
from seq.engine.shards import HealthCheck, Shard, ShardUnhealthy, SharedQueue
from seq.engine.side_by_side import auto_side_by_side
from seq.engine.worker_config import ArmConfig, WorkerConfig
from seq.engine.worker_isolation import Isolation, isolate
from seq.errors import EvalCanceled, SeqInputError
from seq.record.arguments import ServeOptions
from seq.record.episode import ERROR, EpisodeResult
from seq.record.lease import WHOLE_EVAL, EvalHeld, Lease
from seq.record.paths import observers_here
from seq.record.store import (
    CANCELED,
    COMPLETED,
    FAILED,
    INCOMPLETE,
    RUNNING,
    EvalRow,
    Store,
    VersionRow,
)
from seq.registry.deploy import load_version
from seq.registry.loader import IN_MEMORY, load_class


def worker_config(eval_row: EvalRow, store: Store) -> WorkerConfig:
    """What the eval's workers load: the benchmark's class and each arm's policy and parameters."""
    benchmark_row = store.version("benchmark", eval_row.benchmark, eval_row.benchmark_version)
    assert benchmark_row is not None
    arms = {}
    for arm in eval_row.manifest.arms:
        policy_row = store.version("policy", arm.policy_name, arm.policy_version)
        assert policy_row is not None
        values = arm.parameters
        ref = {**policy_row.ref, "in_memory": arm.in_memory} if arm.in_memory else policy_row.ref
        adapter_ref = None
        if arm.adapter is not None:
            held = arm.adapter
            adapter_row = store.version("adapter", held.name, held.version)
            if adapter_row is None or adapter_row.sha256 != held.sha256:
                raise SeqInputError(
                    f"adapter {held.label}: that number no longer holds the code this eval ran."
                )
            adapter_ref = adapter_row.ref
        arms[arm.name] = ArmConfig(
            ref,
            values["benchmark"],
            values["policy"],
            values["eval"]["steps_per_query"],
            adapter_ref,
            values.get("adapter", {}),
            arm.policy_url,
            arm.protocol,
            arm.image_encoding,
        )
    return WorkerConfig(
        benchmark_row.ref,
        arms,
        observers_here(store.path.parent, eval_row.id, eval_row.arguments.observers),
        eval_row.arguments.envs_per_worker or 1,
    )


@contextmanager
def _served(
    config: WorkerConfig,
    settings: ServeOptions | None,
    engine: str = "local",
    address: str | None = None,
    policy_apart: bool = False,
    logs: EvalLogs | None = None,
) -> Iterator[WorkerConfig]:
    """With `--serve`: a batching policy server per arm — in this process, or with `--engine ray` in
    a Ray actor of its own — and the workers pointed at it.

    `policy_apart` (a benchmark with secrets) serves every arm in this process, whose environment
    holds no secret, and applies each arm's adapter there too: no code but the benchmark's runs in
    the workers. What a server in this process prints goes to the arm's stream of `logs`.
    """
    if policy_apart and not settings:
        settings = ServeOptions(max_batch_size=1, max_wait_ms=0.0)
    if not settings:
        yield config
        return
    from seq.registry.adapters import load_adapter
    from seq.serving import serve

    with ExitStack() as servers:
        arms = {}
        for index, (name, arm) in enumerate(config.arms.items()):
            if arm.policy_url is not None:
                arms[name] = arm
                continue
            in_memory = arm.policy_ref.get("in_memory")
            if engine == "ray" and not in_memory:
                from seq.engine.ray_backend import serve_on_ray

                url = servers.enter_context(serve_on_ray(arm.policy_ref, asdict(settings), address))
            else:
                policy = IN_MEMORY[in_memory] if in_memory else load_class(arm.policy_ref)
                options: dict[str, Any] = {
                    "max_batch_size": settings.max_batch_size,
                    "max_wait_ms": settings.max_wait_ms,
                }
                if policy_apart and arm.adapter_ref is not None:
                    options["adapter"] = load_adapter(arm.adapter_ref, arm.adapter_parameters)
                    arm = replace(arm, adapter_ref=None, adapter_parameters={})
                with logs.policy_server(index, name) if logs is not None else nullcontext():
                    url = servers.enter_context(serve(policy, port=0, **options)).url
            arms[name] = replace(arm, policy_url=url, protocol="seq")
        yield replace(config, arms=arms)


def _refuse_unisolated(isolation: Isolation, in_memory: bool, engine: str) -> None:
    """Isolation is honoured on local worker processes only: refuse rather than run without it."""
    if isolation.declared and (in_memory or engine == "ray"):
        where = "beside a policy object in this process" if in_memory else "on Ray (--engine ray)"
        raise SeqInputError(
            f"the benchmark declares {', '.join(k + '=' for k in isolation.declared)}, which seq honours "
            f"on local worker processes only, not {where}; "
            + ("pass the policy's name instead." if in_memory else "run it with --engine local.")
        )


def _backend(
    config: WorkerConfig,
    workers: int,
    engine: str,
    address: str | None,
    shard: Shard | None,
    in_memory: bool,
    isolation: Isolation,
    logs: EvalLogs | None = None,
) -> Backend:
    """Where the episodes run: in this process (a policy object held here), on local worker
    processes, or on Ray actors."""
    if in_memory and shard is not None:
        raise SeqInputError(
            "a policy object in this process's memory cannot be sharded; pass its name instead."
        )
    if engine not in ("local", "ray"):
        raise SeqInputError(f"--engine {engine}: expected local or ray.")
    if in_memory:
        from seq.engine.inprocess import InProcessBackend

        return InProcessBackend(config)
    if engine == "ray":
        if shard is not None:
            raise SeqInputError("--engine ray runs the whole eval on the cluster; it takes no --shard-id.")
        from seq.engine.ray_backend import RayBackend

        return RayBackend(config, workers, address)
    from seq.engine.local import LocalBackend

    return LocalBackend(config, isolation.process, logs)


def execute_eval(
    eval_row: EvalRow,
    store: Store,
    envs: int | None = None,
    on_result: Callable[[EpisodeResult], None] | None = None,
    shard: Shard | None = None,
    engine: str = "local",
    address: str | None = None,
    rerun_failed: bool = False,
    verbose: bool = False,
) -> str:
    """Run the eval's unfinished work items (with `rerun_failed`, also those whose episode
    errored, as new attempts) and record each episode as it finishes.

    Returns the final status (`final_status`). Ctrl-C stops the workers, keeps what ran, marks
    the eval `canceled` and raises `EvalCanceled`; any other exception marks it `failed`, with the
    exception recorded. The eval (or the shard) is leased to this process while it runs: a
    second runner of it is refused (`seq.record.lease`). What its workers and policy servers print
    goes to its logs (`seq.engine.logs`), and with `verbose` to stderr as well.
    """
    holder = shard.name if shard is not None else WHOLE_EVAL
    with Lease.acquire(store.path, eval_row.id, holder) as lease:
        try:
            return _execute_leased(
                eval_row, store, lease, envs, on_result, shard, engine, address, rerun_failed, verbose
            )
        except Exception as error:  # while starting (a server, a backend): bad input is only refused
            if not lease.started and not isinstance(error, SeqInputError):
                if store.get_eval(eval_row.id).status == RUNNING:  # type: ignore[union-attr]
                    failure = "".join(traceback.format_exception(error))
                    store.set_eval_status(eval_row.id, FAILED, error=failure, lease=lease.key)
            raise


def _execute_leased(
    eval_row: EvalRow,
    store: Store,
    lease: Lease,
    envs: int | None,
    on_result: Callable[[EpisodeResult], None] | None,
    shard: Shard | None,
    engine: str,
    address: str | None,
    rerun_failed: bool,
    verbose: bool = False,
) -> str:
    benchmark_row = store.version("benchmark", eval_row.benchmark, eval_row.benchmark_version)
    assert benchmark_row is not None
    config = worker_config(eval_row, store)
    items = store.items(eval_row.id, unfinished_only=True, errored=rerun_failed)
    declared = benchmark_row.declared.get("declared", {})
    envs = envs if envs is not None else eval_row.arguments.envs
    # no more workers than items, as the plan says (`prepare_eval`): the dispatcher starts no more,
    # and a benchmark's memory= is shared by those that run
    workers = min(check_envs(envs if envs is not None else declared.get("cpu")), max(len(items), 1))
    workers = capped_workers(workers, engine, envs)  # no more than the machine holds
    if engine == "ray":
        # Ray's actors run one episode at a time: a count stored by a local run (asked, or seq's
        # own: `seq.engine.side_by_side`) and resumed there runs so, with the same rows (a new eval
        # asking for more is refused before it is stored: `check_envs_per_worker`)
        config = replace(config, envs_per_worker=1)
    elif eval_row.arguments.envs_per_worker_chosen:
        # seq's own count, decided where the eval runs: these workers, the items left (a shard's
        # share of them: one whose slots open first would claim every other shard's), this
        # machine's memory; its slots opened as they pay
        chosen = auto_side_by_side(
            alone=None,
            items=len(items) if shard is None else math.ceil(len(items) / shard.count),
            workers=workers,
            env_memory=declared.get("env_memory"),
            memory=declared.get("memory"),
        )
        config = replace(config, envs_per_worker=chosen.count, open_slots_as_they_pay=chosen.count > 1)
    isolation = _isolation(eval_row, store, declared, workers, config.envs_per_worker)
    store.set_eval_status(eval_row.id, RUNNING)
    environment_seen = eval_row.manifest.environment is not None

    health = HealthCheck() if shard is not None else None

    def record(result: EpisodeResult) -> None:
        masker = isolation.process.masker
        if masker:
            result = replace(result, error=masker.text(result.error), metrics=masker.value(result.metrics))
        lease.check()  # raises if another runner took the eval over
        store.write_episode(eval_row.id, result, add_wall_s=lease.untallied_wall())
        if on_result is not None:
            on_result(result)
        if health is not None:
            health(result)

    def worker_ready(report: dict[str, Any]) -> None:
        nonlocal environment_seen
        store.add_setup_cpu(eval_row.id, report["setup_cpu_s"])
        if not environment_seen:
            stored = store.update_manifest(eval_row.id, environment=report["environment"])
            if report.get("assets") and stored.assets is not None:
                store.update_manifest(eval_row.id, assets=replace(stored.assets, seen=report["assets"]))
            environment_seen = True

    servers = ExitStack()
    in_memory = any("in_memory" in arm.policy_ref and arm.policy_url is None for arm in config.arms.values())
    logs = EvalLogs(store, eval_row.id, isolation.process.masker, echo=verbose)
    try:
        _refuse_unisolated(isolation, in_memory, engine)
        serve_settings = eval_row.arguments.serve
        config = servers.enter_context(
            _served(config, serve_settings, engine, address, isolation.policy_apart and not in_memory, logs)
        )
        backend = _backend(config, workers, engine, address, shard, in_memory, isolation, logs)
        dispatcher = Dispatcher(backend, 1 if in_memory else workers)  # in-process: this one process
    except BaseException:
        servers.close()
        logs.close()
        raise
    lease.start_clock()
    if workers < default_envs() and not in_memory and len(config.arms) > 1:
        # A comparison's statistics import scipy.stats, which takes a second: do it on the spare
        # core while the workers run (where no core is spare, doing it now would only slow the
        # workers down). One arm's report needs no scipy (`seq.stats.resampling`).
        threading.Thread(target=importlib.import_module, args=("scipy.stats",), daemon=True).start()
    status: str = COMPLETED
    failure: str | None = None
    sequential = eval_row.arguments.sequential
    try:
        if sequential is not None and eval_row.manifest.sequential is None:
            rounds = plan_rounds(items, store.items(eval_row.id), sequential)
            dispatcher.run(
                rounds[0], record, worker_ready, rounds[1:], lambda: decide(eval_row, store) is not None
            )
            if store.get_eval(eval_row.id).manifest.sequential is None:  # type: ignore[union-attr]
                decide(eval_row, store)  # the last look: decided, or the horizon reached
        elif shard is not None:
            dispatcher.run(SharedQueue(store, eval_row.id, shard), record, worker_ready)
        elif items and eval_row.manifest.sequential is None:
            dispatcher.run(items, record, worker_ready)
        if shard is None:
            status = final_status(eval_row.id, store)
    except KeyboardInterrupt:
        status = CANCELED
    except ShardUnhealthy:
        status = RUNNING
        if shard is not None and shard.requeue_unhealthy:
            store.release_claims(eval_row.id, shard.name)
        raise
    except WorkersFailed as error:
        status = INCOMPLETE  # no worker could start here: its items wait for a --resume
        raise WorkersFailed(
            f"{error} The eval {eval_row.id} is incomplete; seq eval run --resume {eval_row.id} "
            "runs its items once workers can start."
        ) from None
    except BaseException as error:  # unexpected: the eval failed, and the record says why
        status, failure = FAILED, "".join(traceback.format_exception(error))
        raise
    finally:
        servers.close()
        logs.close()
        wall = lease.untallied_wall()
        if shard is not None and status == COMPLETED:
            status = store.finish_shard(eval_row.id, wall, lease=lease.key)  # or others still run
        else:
            store.set_eval_status(eval_row.id, status, add_wall_s=wall, error=failure, lease=lease.key)
        if status in (COMPLETED, CANCELED, INCOMPLETE):
            store.write_scores(eval_row.id, _scores(eval_row, benchmark_row, config, isolation, store))
    if status == CANCELED:
        raise EvalCanceled(eval_row.id)
    return status


def final_status(eval_id: str, store: Store) -> str:
    """How an eval that ran to its end ended: `incomplete` where work items are left without a
    result (an infrastructure failure: a server unreachable, a worker dead, an import failing;
    `--resume` runs them again), `failed` where every episode errored (there is no measurement),
    else `completed`. Items a sequential test found it did not need are not left."""
    unfinished = store.unfinished(eval_id)
    row = store.get_eval(eval_id)
    assert row is not None
    if any(last is not None for _, last in unfinished) or (unfinished and row.manifest.sequential is None):
        return INCOMPLETE
    results = store.episodes(eval_id)
    if results and all(result.status == ERROR for result in results):
        return FAILED
    return COMPLETED


def _scores(
    eval_row: EvalRow, benchmark_row: VersionRow, config: WorkerConfig, isolation: Isolation, store: Store
) -> Scores:
    """The score hook's values per group, from instances set up with each arm's setup parameters:
    where the workers ran when the benchmark declares isolation, else in this process."""
    setup = {name: arm.setup_parameters for name, arm in config.arms.items()}
    apart = isolation.process if isolation.declared else None
    return score_eval(load_version(benchmark_row), benchmark_row.ref, setup, store, eval_row.id, apart)


def _isolation(
    eval_row: EvalRow, store: Store, declared: dict[str, Any], workers: int, envs_per_worker: int
) -> Isolation:
    """The benchmark's declarations resolved for this eval (the image built if need be), recorded
    in its manifest; a failed build or a missing volume or secret fails the eval before any episode."""
    try:
        isolation = isolate(
            eval_row.benchmark,
            declared,
            workers,
            eval_row.manifest.assets.version if eval_row.manifest.assets else None,
            allow_cpu=eval_row.arguments.allow_cpu,
        )
    except SeqInputError as error:
        store.set_eval_status(eval_row.id, INCOMPLETE, error=str(error))  # what ran before is kept
        raise
    store.update_manifest(
        eval_row.id,
        workers=workers,
        envs_per_worker=envs_per_worker,
        **isolation.manifest,
    )
    return isolation


def resume_eval(eval_id: str, store: Store, flag: str = "--resume") -> EvalRow:
    row = store.find_eval(eval_id)  # the id, or a unique prefix of it
    if row is None:
        raise SeqInputError(f"{flag} {eval_id}: no eval has that id (seq eval ls lists them).")
    live = store.live_leases(row.id)
    if live:  # refused before anything starts; `Lease.acquire` is what guarantees it
        raise EvalHeld(
            f"{flag} {eval_id}: eval {row.id} is being run by {live[0].describe()}; wait for it "
            "to end or stop it before resuming."
        )
    return row
