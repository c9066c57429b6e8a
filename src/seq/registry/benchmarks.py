"""Python twins of `seq benchmark ls / evals / rm`."""

from __future__ import annotations

from typing import Any

from seq.errors import SeqInputError
from seq.record.store import RUNNING, Store
from seq.registry.builtins import BUILTIN_BENCHMARKS


def benchmarks(store: Store | None = None) -> list[dict[str, Any]]:
    """Every benchmark usable by name (built-in and deployed): latest version and latest eval."""
    store = store or Store()
    latest_version = {row.name: row for row in store.versions("benchmark")}
    rows = []
    for name in sorted(set(BUILTIN_BENCHMARKS) | set(latest_version)):
        version = latest_version.get(name)
        evals = store.evals(benchmark=name, limit=1)
        rows.append(
            {
                "name": name,
                "version": version.version if version else None,
                "builtin": name in BUILTIN_BENCHMARKS,
                "latest_eval": evals[0].id if evals else None,
                "latest_eval_status": evals[0].status if evals else None,
            }
        )
    return rows


def benchmark_evals(name: str, store: Store | None = None) -> list[dict[str, Any]]:
    """Every eval run on a benchmark, across policies, newest first."""
    from seq.eval import ls

    return ls(benchmark=name, store=store)


def remove_benchmark(name: str, store: Store | None = None) -> int:
    """Remove a deployed benchmark's versions: the name is free at once, numbers are never reused,
    and evals that ran it keep their reports. Refused while an eval runs it."""
    store = store or Store()
    if name in BUILTIN_BENCHMARKS:
        raise SeqInputError(f"{name!r} is a built-in benchmark and cannot be removed.")
    if not store.versions("benchmark", name):
        raise SeqInputError(f"no deployed benchmark is named {name!r} (seq benchmark ls lists them).")
    running = [row.id for row in store.evals(benchmark=name) if row.status == RUNNING]
    if running:
        raise SeqInputError(f"benchmark {name!r} is in use by running eval(s) {', '.join(running)}.")
    return store.remove_versions("benchmark", name)


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
    params: dict[str, Any] | None = None,
    store: Store | None = None,
) -> Any:
    """Two versions of a benchmark (a CPU benchmark and its GPU port, say) with the same policy on the
    same tasks and seeds, paired episode by episode: each one's rate, B − A with its interval,
    McNemar's exact test and the verdict. `evals=(E1, E2)` reads two finished evals instead."""
    from seq import eval as evals_api
    from seq.stats import check_threshold

    check_threshold(threshold)  # before any eval runs
    store = store or Store()
    if evals is None:
        if policy is None:
            raise SeqInputError("seq benchmark compare needs --policy (or --evals E1 E2).")
        ran = [
            evals_api.run(
                policy,
                benchmark=name,
                trials=trials,
                envs=envs,
                seeds=seeds,
                tasks=tasks,
                params=params,
                store=store,
            ).eval_id
            for name in (first, second)
        ]
        evals = (ran[0], ran[1])
    return evals_api.compare(evals[0], evals[1], threshold, store)
