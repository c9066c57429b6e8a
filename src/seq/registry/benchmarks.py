"""Python twins of `seq benchmark ls / rm` (`evals` and `compare` run or read evals: `seq.eval`)."""

from __future__ import annotations

from typing import Any

from seq.errors import SeqInputError
from seq.record.checks import read_check
from seq.record.store import RUNNING, Store
from seq.registry.builtins import BUILTIN_BENCHMARKS


def benchmarks(store: Store | None = None) -> list[dict[str, Any]]:
    """Every benchmark usable by name (built-in and deployed): latest version, its check at deploy
    (`status` ready, failed check or unchecked; `check`: what it measured) and latest eval."""
    store = store or Store()
    latest_version = {row.name: row for row in store.versions("benchmark")}
    rows = []
    for name in sorted(set(BUILTIN_BENCHMARKS) | set(latest_version)):
        version = latest_version.get(name)
        evals = store.evals(benchmark=name, limit=1)
        check = read_check(store, name, version.version) if version else None
        rows.append(
            {
                "name": name,
                "version": version.version if version else None,
                "builtin": name in BUILTIN_BENCHMARKS,
                "status": check.status if check else ("unchecked" if version else "built-in"),
                "check": check.figures if check else None,
                "latest_eval": evals[0].id if evals else None,
                "latest_eval_status": evals[0].status if evals else None,
            }
        )
    return rows


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
