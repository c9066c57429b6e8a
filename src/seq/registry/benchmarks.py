"""Python twins of `seq benchmark ls / rm` (`evals` and `compare` run or read evals: `seq.eval`)."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from typing import Any

from seq.errors import SeqInputError
from seq.record.checks import read_check
from seq.record.lease import LeaseRow, this_process
from seq.record.schedules import Schedules
from seq.record.store import RUNNING, Store
from seq.registry.builtins import BUILTIN_BENCHMARKS


def benchmarks(store: Store | None = None, internal: bool = False) -> list[dict[str, Any]]:
    """Every benchmark usable by name (built-in and deployed): latest version, its check at deploy
    (`status` ready, failed check or unchecked; `check`: what it measured) and latest eval.
    `internal`: also those seq keeps for itself (`seq evolve`'s candidates and reruns)."""
    store = store or Store()
    latest_version = {
        row.name: row
        for row in store.versions("benchmark")
        if internal or not row.declared.get("internal")
    }
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


CANCEL_WAIT_S = 60.0  # how long `force` waits for the runners it stopped to record what ran


@dataclass(frozen=True)
class Removal:
    """What removing a deployed benchmark touches (`seq benchmark rm NAME --dry-run`)."""

    name: str
    versions: list[int]
    evals: int  # evals that ran it: they keep their reports
    running: list[str]  # evals running on it: the removal is refused unless forced, which cancels them
    runners: dict[str, list[str]]  # each running eval's live runners (`host:pid …`)
    schedules: list[str]  # schedules naming it: their runs are refused until the name is deployed again


def plan_removal(name: str, store: Store | None = None) -> Removal:
    """What `remove_benchmark(name)` would touch, touching nothing."""
    store = store or Store()
    if name in BUILTIN_BENCHMARKS:
        raise SeqInputError(f"{name!r} is a built-in benchmark and cannot be removed.")
    versions = store.versions("benchmark", name)
    if not versions:
        raise SeqInputError(f"no deployed benchmark is named {name!r} (seq benchmark ls lists them).")
    evals = store.evals(benchmark=name)
    running = [row.id for row in evals if row.status == RUNNING or store.live_leases(row.id)]
    schedules = [
        f"{row.label} ({row.every}{'' if row.enabled else ', off'})"
        for row in Schedules(store).find()
        if row.benchmark.partition("@")[0] == name
    ]
    return Removal(
        name=name,
        versions=[row.version for row in versions],
        evals=len(evals),
        running=running,
        runners={eval_id: [lease.describe() for lease in store.live_leases(eval_id)] for eval_id in running},
        schedules=schedules,
    )


def remove_benchmark(name: str, store: Store | None = None, force: bool = False) -> int:
    """Remove a deployed benchmark's versions: the name is free at once, numbers are never reused,
    and evals that ran it keep their reports. Refused while an eval runs on it, unless `force`,
    which cancels those evals first (their runners stop as on Ctrl-C, keeping what ran). Schedules
    naming it stay; their runs are refused until a benchmark of that name is deployed again.
    Returns how many versions went."""
    store = store or Store()
    removal = plan_removal(name, store)
    if removal.running and not force:
        raise SeqInputError(
            f"benchmark {name!r} is in use by running eval(s) {', '.join(removal.running)}; "
            "--force (force=True) cancels them."
        )
    _cancel(removal.running, store)
    return store.remove_versions("benchmark", name)


def _cancel(eval_ids: list[str], store: Store) -> None:
    """Stop the runners of these evals as Ctrl-C would (each marks its eval canceled, keeping what
    ran) and wait for them; every runner is checked reachable before any is stopped."""
    here = this_process()
    runners: list[LeaseRow] = []
    for eval_id in eval_ids:
        for lease in store.live_leases(eval_id):
            if not lease.on_this_host(here) or lease.pid == here.pid:
                where = "this process" if lease.pid == here.pid else lease.describe(here)
                raise SeqInputError(
                    f"eval {eval_id} runs in {where}, which --force cannot stop from here: stop it "
                    "there (Ctrl-C), then remove the benchmark."
                )
            runners.append(lease)
    for lease in runners:  # `live_leases` checked each pid is still its runner (its start time)
        try:
            os.kill(lease.pid, signal.SIGINT)
        except ProcessLookupError:
            pass  # it ended meanwhile
    deadline = time.monotonic() + CANCEL_WAIT_S
    while any(store.live_leases(eval_id) for eval_id in eval_ids):
        if time.monotonic() > deadline:
            raise SeqInputError(
                f"the runners of eval(s) {', '.join(eval_ids)} did not stop within "
                f"{CANCEL_WAIT_S:.0f} s of Ctrl-C; nothing was removed."
            )
        time.sleep(0.2)
