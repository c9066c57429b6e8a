"""Python twins of `seq eval …`: run an eval, read its report and status, list evals.

>>> report = seq.eval.run("metaworld-expert", benchmark="metaworld", seeds=[0, 1, 2])
>>> report.metric("success").value
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from seq.engine.arms import Arm, build_arms
from seq.engine.prepare import EvalRequest, start_eval
from seq.engine.runner import execute_eval, resume_eval
from seq.engine.shards import Shard
from seq.errors import SeqInputError
from seq.record.episode import EpisodeResult
from seq.record.store import EvalRow, Store
from seq.registry.loader import importing_user_file
from seq.report.report import Report, build_report


def run(
    policy: Any = None,
    *,
    benchmark: Any = None,
    envs: int | None = None,
    envs_per_worker: int = 1,
    suites: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
    max_steps: int | None = None,
    trials: int = 1,
    params: Mapping[str, Any] | None = None,
    vs: Any = None,
    vs_params: Mapping[str, Any] | None = None,
    sweep: Mapping[str, Sequence[Any]] | None = None,
    arms: Sequence[Arm] | None = None,
    threshold: float = 0.05,
    record: str | None = None,
    trajectories: bool = False,
    sequential: bool = False,
    alpha: float = 0.05,
    looks: int = 5,
    metric: str = "success",
    engine: str = "local",
    address: str | None = None,
    serve: bool = False,
    max_batch_size: int | None = None,
    max_wait_ms: float = 10.0,
    policy_url: str | None = None,
    policy_protocol: str = "seq",
    policy_name: str | None = None,
    image_encoding: str = "raw",
    eval_id: str | None = None,
    allow_cpu: bool = False,
    shard: tuple[int, int] | None = None,
    requeue_unhealthy: bool = False,
    resume: str | None = None,
    adapter: Any = None,
    report_to: Sequence[str] = (),
    save: bool = True,
    on_start: Callable[[EvalRow], None] | None = None,
    on_result: Callable[[EpisodeResult], None] | None = None,
    store: Store | None = None,
) -> Report:
    """Evaluate `policy` on `benchmark` and return the report.

    - `policy`, `benchmark`: a registered name, `name@vN`, a built-in name, or a decorated class
      (registered from its file); a policy object runs in this process (see `seq.evaluate`).
    - `params`: declared parameters (`noise=0.3`, `policy.noise`, `benchmark.x`, `eval.steps_per_query`).
    - Arms, run on the same episodes and compared pair by pair: `vs=` (with `vs_params=`) adds a
      second policy, `sweep={"policy.noise": [0.0, 0.5]}` one arm per value, or `arms=[seq.Arm(...)]`.
    - `sequential=True` (two arms): pairs of up to `trials` trials in `looks` rounds, stopping as
      soon as the group-sequential test at level `alpha` decides on `metric`.
    - `record=` ("all", "first", "none") overrides the benchmark's `render=`; `trajectories=True`
      keeps every episode's steps.
    - `envs` worker processes (default: one per core) each run `envs_per_worker` episodes side by
      side and ask the policy for all their chunks at once: one message to a served policy, one
      call of a batched one (`seq.engine.lockstep`); each episode's row is the same either way.
    - `engine="ray"`: workers are Ray actors (the cluster at `address`, else a local Ray); same rows.
    - `serve=True`: each arm's policy runs behind a batching websocket server in this process
      (`max_batch_size`, default one per episode running at once; `max_wait_ms`), which every
      worker calls;
      `policy_url=` uses a server already running (`policy_protocol` "seq", "openpi" or "vla-eval"),
      recorded as `policy_name=` where given, else as the policy a seq server names, else under a
      name derived from its greeting and URL; `image_encoding=` ("raw", "jpeg", or "png" for
      vla-eval) is how a served policy is sent images.
    - `eval_id=` with `shard=(K, N)`: this process is shard K of N of one eval, claiming work items
      from the shared record (`seq.engine.shards`); an unhealthy shard raises `ShardUnhealthy`.
    - `allow_cpu=True`: run a benchmark that declares a `gpu=` card this machine lacks on the CPU.
    - `resume=EVAL_ID`: run only the eval's work items that have no finished episode.
    - `save=False`: keep nothing — the eval runs against a scratch record that is deleted after the
      report is built; with `shard=(K, N)` it runs a fixed round-robin share (no shared record).
    - `report_to=["wandb"|"trackio"]`: mirror the report's metrics to those trackers, keyed by the
      eval id (a resumed eval continues the same run).

    `adapter=` names a registered adapter (`NAME` or `NAME@vN`) that runs between the benchmark
    and every arm's policy; the eval is refused, before any episode, when a policy's declared
    inputs do not fit the benchmark's observation (through the adapter, when one is named).
    Ctrl-C raises `seq.EvalCanceled` after recording what ran.
    """
    importing = importing_user_file()
    if importing is not None:
        raise SeqInputError(
            f"{importing} starts an eval when it is imported; put the seq.eval.run call under "
            '`if __name__ == "__main__":` so that seq can load its classes.'
        )
    store = store or Store()
    if report_to:
        from seq.report.tracking import check_trackers

        check_trackers(report_to)
    if shard is not None and eval_id is None and save:
        raise SeqInputError("--shard-id needs --eval-id ID, the id every shard of the eval shares.")
    request = None
    if resume is None:
        request = _request(
            policy,
            benchmark=benchmark,
            envs=envs,
            envs_per_worker=envs_per_worker,
            suites=suites,
            tasks=tasks,
            seeds=seeds,
            max_steps=max_steps,
            trials=trials,
            params=params,
            vs=vs,
            vs_params=vs_params,
            sweep=sweep,
            arms=arms,
            threshold=threshold,
            record=record,
            trajectories=trajectories,
            sequential=sequential,
            alpha=alpha,
            looks=looks,
            metric=metric,
            serve=serve,
            max_batch_size=max_batch_size,
            max_wait_ms=max_wait_ms,
            policy_url=policy_url,
            policy_protocol=policy_protocol,
            policy_name=policy_name,
            image_encoding=image_encoding,
            eval_id=eval_id,
            adapter=adapter,
            allow_cpu=allow_cpu,
        )
    elif not save:
        raise SeqInputError("--no-save keeps no record, so there is nothing to --resume.")
    execute = {"envs": envs, "on_result": on_result, "engine": engine, "address": address}
    if save:
        row = resume_eval(resume, store) if request is None else start_eval(request, store)
        as_shard = None if shard is None else Shard(shard[0], shard[1], requeue_unhealthy)
        report = _execute(row, store, on_start, shard=as_shard, **execute)
    else:  # a scratch record, deleted once the report is built; a shard keeps its fixed share only
        with tempfile.TemporaryDirectory(prefix="seq-no-save-") as scratch:
            scratch_store = Store(Path(scratch) / "seq.db")
            scratch_store.copy_versions_from(store.path)
            row = start_eval(request, scratch_store)  # type: ignore[arg-type]
            if shard is not None:
                scratch_store.keep_share(row.id, Shard(shard[0], shard[1]).index, shard[1])
            report = _execute(row, scratch_store, on_start, **execute)
            scratch_store.close()
    if report_to:
        from seq.report.tracking import report_to as mirror

        mirror(report, report_to)
    return report


def _execute(
    row: EvalRow, store: Store, on_start: Callable[[EvalRow], None] | None, **options: Any
) -> Report:
    if on_start is not None:
        on_start(row)
    execute_eval(row, store, **options)
    return build_report(row.id, store)


def _request(
    policy: Any = None,
    *,
    benchmark: Any = None,
    envs: int | None = None,
    envs_per_worker: int = 1,
    suites: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
    max_steps: int | None = None,
    trials: int = 1,
    params: Mapping[str, Any] | None = None,
    vs: Any = None,
    vs_params: Mapping[str, Any] | None = None,
    sweep: Mapping[str, Sequence[Any]] | None = None,
    arms: Sequence[Arm] | None = None,
    threshold: float = 0.05,
    record: str | None = None,
    trajectories: bool = False,
    sequential: bool = False,
    alpha: float = 0.05,
    looks: int = 5,
    metric: str = "success",
    serve: bool = False,
    max_batch_size: int | None = None,
    max_wait_ms: float = 10.0,
    policy_url: str | None = None,
    policy_protocol: str = "seq",
    policy_name: str | None = None,
    image_encoding: str = "raw",
    eval_id: str | None = None,
    adapter: Any = None,
    allow_cpu: bool = False,
) -> EvalRequest:
    """The `EvalRequest` of `run`'s arguments (see `run`)."""
    if (policy is None and not arms and policy_url is None) or benchmark is None:
        raise SeqInputError("seq.eval.run needs a policy and a benchmark= (or resume=EVAL_ID).")
    return EvalRequest(
        arms=build_arms(policy, params, vs=vs, vs_params=vs_params, sweep=sweep, arms=arms),
        benchmark=benchmark,
        envs=envs,
        envs_per_worker=envs_per_worker,
        suites=suites,
        tasks=tasks,
        seeds=seeds,
        max_steps=max_steps,
        trials=trials,
        threshold=threshold,
        record=record,
        trajectories=trajectories,
        sequential={"alpha": alpha, "looks": looks, "metric": metric} if sequential else None,
        eval_id=eval_id,
        adapter=adapter,
        serve={
            "max_batch_size": max_batch_size or _workers(envs) * envs_per_worker,
            "max_wait_ms": max_wait_ms,
        }
        if serve
        else None,
        policy_url=policy_url,
        policy_protocol=policy_protocol,
        policy_name=policy_name,
        image_encoding=image_encoding,
        allow_cpu=allow_cpu,
    )


def dry_run(policy: Any = None, store: Store | None = None, **options: Any) -> dict[str, Any]:
    """What `run` with the same arguments would do, without running or storing anything: each
    arm's parameter values and where each came from, the episodes, and at most how many policy
    queries."""
    from seq.engine.prepare import dry_run as plan_only

    return plan_only(_request(policy, **options), store or Store())


def _workers(envs: int | None) -> int:
    from seq.engine.prepare import default_envs

    return envs or default_envs()


def report(eval_id: str, store: Store | None = None) -> Report:
    """The report of an eval, finished or not (a partial one says so)."""
    return build_report(eval_id, store)


def status(eval_id: str, store: Store | None = None) -> Report:
    """Episodes done of the total and every metric so far: the report of the eval as it stands."""
    return build_report(eval_id, store)


def ls(
    benchmark: str | None = None, limit: int | None = None, store: Store | None = None
) -> list[dict[str, Any]]:
    """Evals, newest first: id, status, policy, benchmark, episodes done of the total."""
    store = store or Store()
    rows = []
    for row in store.evals(benchmark=benchmark, limit=limit):
        rows.append(
            {
                "id": row.id,
                "status": row.status,
                "policy": f"{row.policy}@v{row.policy_version}",
                "benchmark": f"{row.benchmark}@v{row.benchmark_version}",
                "created_at": row.created_at,
                "done": len(store.episodes(row.id)),
                "total": store.count_items(row.id),
                "wall_s": row.wall_s,
            }
        )
    return rows


def compare(first: str, second: str, threshold: float = 0.05, store: Store | None = None) -> Report:
    """Two finished evals, paired episode by episode: each one's rates, the paired difference
    (B − A) with its interval, McNemar's exact test and the verdict."""
    from seq.report.compare import compare_evals

    return compare_evals(first, second, threshold, store)


def export(
    eval_id: str,
    directory: str | Path,
    store: Store | None = None,
    report_to: Sequence[str] = (),
    format: str = "seq",
) -> dict[str, Path]:
    """Write an eval's episodes (JSONL), its report (JSON) and its unfinished items into `directory`
    (and mirror its metrics to the trackers in `report_to`). `format="vla-eval"` writes vla-eval's
    result layout instead (`<benchmark>_aggregate.json`, per-episode step files): see
    `seq.report.vlaeval_export`."""
    if format not in ("seq", "vla-eval"):
        raise SeqInputError(f"--format {format!r}: expected seq or vla-eval.")
    if format == "vla-eval":
        from seq.report.vlaeval_export import export_vla_eval

        files = export_vla_eval(eval_id, directory, store)
    else:
        from seq.report.export import export_eval

        files = export_eval(eval_id, directory, store)
    if report_to:
        from seq.report.tracking import report_to as mirror

        mirror(build_report(eval_id, store), report_to)
    return files


def merge(*paths: str | Path, store: Store | None = None) -> dict[str, int]:
    """Merge other records (`seq.db` files of shards run apart) into this workspace's: for each work
    item the last committed episode wins; deployed code they ran is copied over by hash."""
    import shutil

    store = store or Store()
    totals: dict[str, int] = {}
    for path in map(Path, paths):
        if not path.is_file():
            raise SeqInputError(f"{path}: no such record to merge (expected a seq.db file).")
        for code in (path.parent / "code").glob("*.py"):
            target = store.path.parent / "code" / code.name
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(code, target)
        for key, count in store.merge_from(path).items():
            totals[key] = totals.get(key, 0) + count
    return totals


def evaluate(policy: Any, benchmark: Any, **options: Any) -> Report:
    """Evaluate a policy object from this process's memory — a model in training — and return the
    report: no registration, no server, no copy of the weights.

    The episodes run in this process with the object itself (its class must be a `@seq.policy`);
    everything else is as in `seq.eval.run` (conditions, seeds, trials, parameters, arms, the record).

    >>> for step in range(10_000):
    ...     train_one_step(model)
    ...     if step % 1000 == 0:
    ...         report = seq.evaluate(model, "metaworld", tasks=["reach-v3"], seeds=range(5))
    """
    return run(policy, benchmark=benchmark, **options)
