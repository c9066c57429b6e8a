"""Python twins of `seq eval …`: run an eval, read its report, status and logs, list evals.

>>> report = seq.eval.run("metaworld-expert", benchmark="metaworld", seeds=[0, 1, 2])
>>> report.metric("success").value
"""

from __future__ import annotations

import difflib
import functools
import inspect
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar, cast

from seq.authoring.callable_policy import is_plain_callable, policy_of_callable
from seq.engine.execution import execute_eval, resume_eval
from seq.engine.prepare import start_eval
from seq.engine.request import request_of
from seq.engine.shards import Shard
from seq.errors import SeqInputError
from seq.record.episode import EpisodeResult
from seq.record.logs import LogLine
from seq.record.store import EvalRow, Store
from seq.registry.loader import importing_user_file
from seq.report.eval_report import Report, build_report

_Function = TypeVar("_Function", bound=Callable[..., Any])


def _suggests_keywords(function: _Function) -> _Function:
    """`function`, whose `TypeError` for a keyword it does not take names the closest one it does:
    `trails=3` → did you mean 'trials'?"""
    signature = inspect.signature(function)
    known = list(signature.parameters)

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        for name in kwargs:
            if name not in signature.parameters:
                close = difflib.get_close_matches(name, known, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise TypeError(
                    f"seq.eval.{function.__name__}() got an unexpected keyword argument {name!r}{hint}"
                )
        return function(*args, **kwargs)

    return cast(_Function, checked)


@_suggests_keywords
def run(
    policy: Any = None,
    *,
    benchmark: Any = None,
    adapter: Any = None,
    suites: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
    max_steps: int | None = None,
    timeout_s: float | None = None,
    trials: int | None = None,
    params: Mapping[str, Any] | None = None,
    record: str | None = None,
    trajectories: bool = False,
    traces: bool = False,
    save: bool = True,
    report_to: Sequence[str] | None = None,
    vs: Any = None,
    vs_params: Mapping[str, Any] | None = None,
    sweep: Mapping[str, Sequence[Any]] | None = None,
    arms: Sequence[Any] | None = None,
    threshold: float = 0.05,
    sequential: bool = False,
    alpha: float = 0.05,
    looks: int = 5,
    metric: str = "success",
    envs: int | None = None,
    envs_per_worker: int | None = None,
    engine: str = "local",
    address: str | None = None,
    allow_cpu: bool = False,
    verbose: bool = False,
    serve: bool = False,
    max_batch_size: int | None = None,
    max_wait_ms: float = 10.0,
    policy_url: str | None = None,
    policy_protocol: str = "seq",
    policy_name: str | None = None,
    image_encoding: str = "raw",
    eval_id: str | None = None,
    shard_id: int | None = None,
    num_shards: int | None = None,
    requeue_unhealthy: bool = False,
    resume: str | None = None,
    rerun_failed: str | None = None,
    on_start: Callable[[EvalRow], None] | None = None,
    on_result: Callable[[EpisodeResult], None] | None = None,
    store: Store | None = None,
) -> Report:
    """Evaluate `policy` on `benchmark` and return the report.

    Args:
        policy: a registered name, `name@vN`, a built-in name, or a decorated class (registered
            from its file); a policy object runs in this process (see `seq.evaluate`); a plain
            function is wrapped as a policy.
        on_start: called with the eval's row once the eval is stored.
        on_result: called with each episode's result as it finishes.
        store: the record (default: `Store()`, `$SEQ_HOME/seq.db`).

    Every other keyword argument is an option of `seq eval run`, with its default and help
    (`seq.engine.request.EvalRequest`, the one definition of both), among them:

    - `benchmark`: named as `policy` is.
    - `params`: declared parameters (`noise=0.3`, `policy.noise`, `benchmark.x`, `eval.steps_per_query`).
    - Arms, run on the same episodes and compared pair by pair: `vs=` (with `vs_params=`) adds a
      second policy, `sweep={"policy.noise": [0.0, 0.5]}` one arm per value, or `arms=[seq.Arm(...)]`.
    - `sequential=True` (two arms): pairs of up to `trials` trials (default 10) in `looks` rounds,
      stopping as soon as the group-sequential test at level `alpha` decides on `metric`.
    - `record=` ("all", "first", "none") overrides the benchmark's `render=`; `trajectories=True`
      keeps every episode's steps.
    - `envs` worker processes (default: one per core) each run `envs_per_worker` episodes side by
      side and ask the policy for all their chunks at once: one message to a served policy, one
      call of a batched one (`seq.engine.lockstep`); each episode's row is the same either way.
      Unset, a seq server's eval runs up to 64 a worker, as many as memory holds at the
      benchmark's `env_memory` (`seq.engine.side_by_side`); any other, one.
    - `engine="ray"`: workers are Ray actors (the cluster at `address`, else a local Ray); same rows.
    - `serve=True`: each arm's policy runs behind a batching websocket server in this process
      (`max_batch_size`, default workers × `envs_per_worker`, 1 unless given; `max_wait_ms`),
      which every worker calls; `policy_url=` uses a server already running (`policy_protocol` "seq",
      "openpi" or "vla-eval"), recorded as `policy_name=` where given, else as the policy a seq
      server names, else under a name derived from its greeting and URL; `image_encoding=`
      ("raw", "jpeg", or "png" for vla-eval) is how a served policy is sent images.
    - `eval_id=` with `shard_id=K, num_shards=N`: this process is shard K of N of one eval,
      claiming work items from the shared record (`seq.engine.shards`); an unhealthy shard raises
      `ShardUnhealthy`.
    - `verbose=True`: also print what the benchmark's workers and the policy servers print; it
      is kept in the eval's logs either way (`seq.eval.logs`).
    - `allow_cpu=True`: run a benchmark that declares a `gpu=` card this machine lacks on the CPU.
    - `resume=EVAL_ID`: run only the eval's work items that have no result (never run, or cut
      short by an infrastructure failure: a server unreachable, a worker dead, an import failing).
    - `rerun_failed=EVAL_ID`: as `resume`, and also run again the items whose episode errored, as
      new attempts (the record keeps every attempt; the report counts the last).
    - `save=False`: keep nothing — the eval runs against a scratch record that is deleted after the
      report is built; a shard runs a fixed round-robin share (no shared record).
    - `report_to=["wandb"|"trackio"]`: mirror the report's metrics to those trackers, keyed by the
      eval id (a resumed eval continues the same run).
    - `on_start(row)` is called once the eval is stored, `on_result(episode)` as each one finishes.

    `adapter=` names a registered adapter (`NAME` or `NAME@vN`) that runs between the benchmark
    and every arm's policy; the eval is refused, before any episode, when a policy's declared
    inputs do not fit the benchmark's observation (through the adapter, when one is named).
    Ctrl-C raises `seq.EvalCanceled` after recording what ran.

    Returns:
        The eval's `Report`. Its `status` says how it ended: `completed`; `incomplete` when an
        infrastructure failure (a policy server unreachable or gone, a worker that died, an import
        failing in the benchmark's environment) left work items without a result
        (`report.unfinished` says which and why; `resume=` runs them); `failed` when every episode
        errored. `seq eval run` exits 1 for both.

    Raises:
        SeqInputError: an option, a name or a parameter that cannot be run, before anything runs.
        EvalCanceled: Ctrl-C (or SIGTERM), after recording what ran.
    """
    request = request_of(locals())
    if is_plain_callable(request.policy):  # a function, as people try first while training
        request = replace(request, policy=policy_of_callable(request.policy))
    if is_plain_callable(request.vs):
        request = replace(request, vs=policy_of_callable(request.vs))
    importing = importing_user_file()
    if importing is not None:
        raise SeqInputError(
            f"{importing} starts an eval when it is imported; put the seq.eval.run call under "
            '`if __name__ == "__main__":` so that seq can load its classes.'
        )
    store = store or Store()
    request.check()
    if request.report_to:
        from seq.report.tracking import check_trackers

        check_trackers(request.report_to)
    execute = {
        "envs": request.envs,
        "on_result": on_result,
        "engine": request.engine,
        "address": request.address,
        "verbose": request.verbose,
    }
    shard = request.shard
    if request.save:
        if request.continued is not None:
            flag = "--resume" if request.resume is not None else "--rerun-failed"
            row = resume_eval(request.continued, store, flag)
            execute["rerun_failed"] = request.rerun_failed is not None
        else:
            row = start_eval(request, store)
        as_shard = None if shard is None else Shard(shard[0], shard[1], request.requeue_unhealthy)
        report = _execute(row, store, on_start, shard=as_shard, **execute)
    else:  # a scratch record, deleted once the report is built; a shard keeps its fixed share only
        with tempfile.TemporaryDirectory(prefix="seq-no-save-") as scratch:
            scratch_store = Store(Path(scratch) / "seq.db")
            scratch_store.copy_versions_from(store.path)
            row = start_eval(request, scratch_store)
            if shard is not None:
                scratch_store.keep_share(row.id, Shard(shard[0], shard[1]).index, shard[1])
            report = _execute(row, scratch_store, on_start, **execute)
            scratch_store.close()
    if request.report_to:
        from seq.report.tracking import report_to as mirror

        mirror(report, request.report_to)
    return report


def _execute(
    row: EvalRow, store: Store, on_start: Callable[[EvalRow], None] | None, **options: Any
) -> Report:
    if on_start is not None:
        on_start(row)
    execute_eval(row, store, **options)
    return build_report(row.id, store)


@_suggests_keywords
def dry_run(
    policy: Any = None,
    *,
    benchmark: Any = None,
    adapter: Any = None,
    suites: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
    max_steps: int | None = None,
    timeout_s: float | None = None,
    trials: int | None = None,
    params: Mapping[str, Any] | None = None,
    record: str | None = None,
    trajectories: bool = False,
    traces: bool = False,
    save: bool = True,
    report_to: Sequence[str] | None = None,
    vs: Any = None,
    vs_params: Mapping[str, Any] | None = None,
    sweep: Mapping[str, Sequence[Any]] | None = None,
    arms: Sequence[Any] | None = None,
    threshold: float = 0.05,
    sequential: bool = False,
    alpha: float = 0.05,
    looks: int = 5,
    metric: str = "success",
    envs: int | None = None,
    envs_per_worker: int | None = None,
    engine: str = "local",
    address: str | None = None,
    allow_cpu: bool = False,
    verbose: bool = False,
    serve: bool = False,
    max_batch_size: int | None = None,
    max_wait_ms: float = 10.0,
    policy_url: str | None = None,
    policy_protocol: str = "seq",
    policy_name: str | None = None,
    image_encoding: str = "raw",
    eval_id: str | None = None,
    shard_id: int | None = None,
    num_shards: int | None = None,
    requeue_unhealthy: bool = False,
    resume: str | None = None,
    rerun_failed: str | None = None,
    store: Store | None = None,
) -> dict[str, Any]:
    """What `run` with the same arguments would do, without running or storing anything: each
    arm's parameter values and where each came from, the episodes, and at most how many policy
    queries."""
    from seq.engine.dry_run import dry_run as plan_only

    request = request_of(locals())
    return plan_only(request, store or Store())


def report(eval_id: str, store: Store | None = None) -> Report:
    """The report of an eval, finished or not (a partial one says so)."""
    return build_report(eval_id, store)


def status(eval_id: str, store: Store | None = None) -> Report:
    """Episodes done of the total and every metric so far: the report of the eval as it stands."""
    return build_report(eval_id, store)


def ls(
    benchmark: str | None = None,
    limit: int | None = None,
    store: Store | None = None,
    policy: str | None = None,
) -> list[dict[str, Any]]:
    """Evals, newest first: id, status, policy (the first arm's), benchmark, each arm with the
    parameters the eval set (`arms`), episodes done of the total, and for a failed eval the
    exception's last line (`error`). `policy=` keeps the evals that ran it in any arm."""
    store = store or Store()
    rows = []
    found = store.evals(benchmark=benchmark, limit=None if policy else limit)
    if policy:
        found = [row for row in found if policy in _policy_names(row)][:limit]
    for row in found:
        rows.append(
            {
                "id": row.id,
                "status": row.status,
                "policy": f"{row.policy}@v{row.policy_version}",
                "benchmark": f"{row.benchmark}@v{row.benchmark_version}",
                "arms": [
                    {"name": arm.name, "policy": arm.policy, "params": arm.params}
                    for arm in row.arguments.arms
                ],
                "created_at": row.created_at,
                "done": len(store.episodes(row.id)),
                "total": store.count_items(row.id),
                "wall_s": row.wall_s,
                "error": row.error_line,
            }
        )
    return rows


def _policy_names(row: EvalRow) -> set[str]:
    return {row.policy} | {arm.policy_name for arm in row.manifest.arms}


def rm(*eval_ids: str, store: Store | None = None) -> list[dict[str, Any]]:
    """Remove evals (ids or unique prefixes): their work items, episodes, scores and files. Every id
    is checked before any is removed; an eval whose runner is alive is refused, an interrupted,
    failed or finished one goes. Returns what went, `{"id", "status", "episodes", "files"}` each.

    >>> seq.eval.rm("ev-3f2a")
    """
    from seq.record.paths import ARTIFACTS, remove_eval_folder
    from seq.record.store import RUNNING

    store = store or Store()
    rows = []
    for eval_id in eval_ids:
        row = store.find_eval(eval_id)
        if row is None:
            raise SeqInputError(f"no eval has id {eval_id!r} (seq eval ls lists them).")
        if row.status == RUNNING or store.live_leases(row.id):  # a runner may be preparing it
            raise SeqInputError(f"eval {row.id} is running; stop its runner (Ctrl-C) before removing it.")
        rows.append(row)
    removed = []
    for row in {row.id: row for row in rows}.values():
        episodes = store.remove_eval(row.id)
        had_files = remove_eval_folder(store.path.parent, ARTIFACTS, row.id)
        removed.append({"id": row.id, "status": row.status, "episodes": episodes, "files": had_files})
    return removed


def logs(
    eval_id: str,
    side: str | None = None,
    arm: str | None = None,
    instance: int | None = None,
    follow: bool = False,
    store: Store | None = None,
) -> Iterator[LogLine]:
    """What the eval's processes printed, in order: each benchmark worker's output (`side`
    "benchmark", `instance` its number) and each policy server's seq started ("policy"), masked,
    narrowed by `side`, `arm` and `instance`. With `follow`, lines as they are printed, until the
    eval ends. Kept `SEQ_LOG_RETENTION_DAYS` days (7).

    >>> for line in seq.eval.logs("ev-3f2a", side="benchmark"):
    ...     print(line.source, line.text)
    """
    from seq.record.logs import check_filters, read_logs

    store = store or Store()
    check_filters(side, instance)
    row = store.find_eval(eval_id)
    if row is None:
        raise SeqInputError(f"no eval has id {eval_id!r} (seq eval ls lists them).")
    if arm is not None and arm not in {a.name for a in row.manifest.arms}:
        names = ", ".join(repr(a.name) for a in row.manifest.arms)
        raise SeqInputError(f"--arm {arm}: eval {row.id} has no such arm (its arms: {names}).")
    return read_logs(store, row.id, side, arm, instance, follow)


def prune_logs(days: float | None = None, store: Store | None = None) -> int:
    """Delete the logs of streams that ended more than `days` days ago (default:
    `$SEQ_LOG_RETENTION_DAYS`, else 7); returns how many streams went. Opening the record
    prunes at the default too."""
    return (store or Store()).prune_logs(days)


def compare(first: str, second: str, threshold: float = 0.05, store: Store | None = None) -> Report:
    """Two finished evals of one benchmark (any of its versions), paired episode by episode: each
    one's rates, the paired difference (B − A) with its interval, McNemar's exact test and the verdict.
    Evals of two different benchmarks are refused: `seq.compare_benchmarks(evals=(A, B))` pairs those."""
    from seq.report.compare import compare_evals

    store = store or Store()
    rows = [store.find_eval(eval_id) for eval_id in (first, second)]
    a, b = rows
    if a is not None and b is not None and a.benchmark != b.benchmark:
        raise SeqInputError(
            f"evals {a.id} and {b.id} ran different benchmarks ({a.benchmark}@v{a.benchmark_version} "
            f"and {b.benchmark}@v{b.benchmark_version}), so their episodes are not the same episodes; "
            f"to compare two benchmarks on the same tasks and seeds, run seq benchmark compare --evals "
            f"{a.id} --evals {b.id}."
        )
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
        from seq.report.eval_export import export_eval

        files = export_eval(eval_id, directory, store)
    if report_to:
        from seq.report.tracking import report_to as mirror

        mirror(build_report(eval_id, store), report_to)
    return files


def merge(*paths: str | Path, store: Store | None = None) -> dict[str, int]:
    """Merge other records (`seq.db` files of shards run apart) into this workspace's: for each work
    item the last committed episode wins; deployed code they ran is copied over by hash. A record
    holding an eval id that cannot name a folder, or an artifact path outside its eval's artifact
    folder, is refused; the files its episodes name are copied into this workspace's artifact
    folders (`seq.record.merged`)."""
    import re
    import shutil

    from seq.record.merged import adopt_artifacts, check_merged_record

    store = store or Store()
    totals: dict[str, int] = {}
    for path in map(Path, paths):
        if not path.is_file():
            raise SeqInputError(f"{path}: no such record to merge (expected a seq.db file).")
        check_merged_record(path)
        for code in (path.parent / "code").glob("*.py"):
            if code.is_symlink() or not re.fullmatch(r"[0-9a-f]{64}\.py", code.name):
                continue  # deployed code is kept by its hash, as a plain file
            target = store.path.parent / "code" / code.name
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(code, target)
        for key, count in store.merge_from(path).items():
            totals[key] = totals.get(key, 0) + count
        totals["files"] = totals.get("files", 0) + adopt_artifacts(store, path)
    return totals


def evaluate(policy: Any, benchmark: Any, **options: Any) -> Report:
    """Evaluate a policy object from this process's memory — a model in training — and return the
    report: no registration, no server, no copy of the weights.

    The episodes run in this process with the object itself: a `@seq.policy` object, or a plain
    function `f(obs, **kw)` (`seq.authoring.callable_policy`: recorded as policy `callable-<its
    name>`, versioned by its source); everything else is as in `seq.eval.run` (conditions, seeds,
    trials, parameters, arms, the record).

    >>> for step in range(10_000):
    ...     train_one_step(model)
    ...     if step % 1000 == 0:
    ...         report = seq.evaluate(model, "metaworld", tasks=["reach-v3"], seeds=range(5))
    """
    return run(policy, benchmark=benchmark, **options)


# -- twins of `seq benchmark evals / compare`: they read and run evals, so they live here ----------
def benchmark_evals(name: str, store: Store | None = None) -> list[dict[str, Any]]:
    """Every eval run on a benchmark, across policies, newest first."""
    return ls(benchmark=name, store=store)


def compare_benchmarks(
    first: Any,
    second: Any,
    policy: Any = None,
    *,
    trials: int = 1,
    threshold: float = 0.05,
    evals: tuple[str, str] | None = None,
    envs: int | None = None,
    seeds: list[int] | None = None,
    tasks: list[str] | None = None,
    suites: list[str] | None = None,
    params: dict[str, Any] | None = None,
    adapter: Any = None,
    envs_per_worker: int = 1,
    serve: bool = False,
    max_steps: int | None = None,
    store: Store | None = None,
) -> Any:
    """Two versions of a benchmark (a CPU benchmark and its GPU port, say) with the same policy on the
    same tasks and seeds, paired episode by episode: each one's rate, B − A with its interval,
    McNemar's exact test and the verdict. `evals=(E1, E2)` reads two finished evals instead;
    `adapter` runs between both benchmarks and the policy; `suites` picks the suites both run (their
    names the same in both). `envs_per_worker` (with a batched or
    `serve`d policy) lets a batched port step its worlds together; `max_steps` shortens both."""
    from seq.stats import check_threshold

    check_threshold(threshold)  # before any eval runs
    store = store or Store()
    if evals is None:
        if policy is None:
            raise SeqInputError("seq benchmark compare needs --policy (or --evals E1 E2).")
        ran = [
            run(
                policy,
                benchmark=name,
                trials=trials,
                envs=envs,
                seeds=seeds,
                tasks=tasks,
                suites=suites,
                params=params,
                adapter=adapter,
                envs_per_worker=envs_per_worker,
                serve=serve,
                max_steps=max_steps,
                store=store,
            ).eval_id
            for name in (first, second)
        ]
        evals = (ran[0], ran[1])
    from seq.report.compare import compare_evals  # `compare` refuses two benchmarks; this is their point

    return compare_evals(evals[0], evals[1], threshold, store)
