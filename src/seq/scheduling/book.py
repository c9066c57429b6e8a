"""Python twins of `seq eval schedule` and `seq eval schedules`: create, change, switch off and
list scheduled evals.

>>> seq.schedule("my-policy", benchmark="line", every="daily", trials=2, max_core_hours=1.0)
>>> seq.schedule("my-policy", benchmark="line", every="deploy")
>>> seq.schedule("my-policy", benchmark="line", off=True)
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict
from typing import Any

from seq.engine.request import request_fields
from seq.errors import SeqInputError
from seq.record.schedules import ScheduleRow, ScheduleRun, Schedules
from seq.record.store import Store
from seq.registry.deploy import resolve
from seq.scheduling.every import DEPLOY, NEVER, check_every, check_fires, due_fire, next_fire
from seq.scheduling.metric import primary_metric

# Options of `seq.eval.run` a schedule may not carry: the schedule decides them, or they name one
# eval (a resume, a shard) rather than a fresh one each time.
NOT_SCHEDULED = {
    "policy", "benchmark", "trials", "save", "resume", "rerun_failed", "eval_id", "shard_id",
    "num_shards", "requeue_unhealthy", "arms", "policy_url", "policy_name",
}  # fmt: skip


def _check_options(options: dict[str, Any]) -> dict[str, Any]:
    known = {item.name for item in request_fields()} - NOT_SCHEDULED
    for name, value in options.items():
        if name not in known:
            raise SeqInputError(
                f"schedule option {name!r}: a schedule takes the options of seq.eval.run other "
                f"than {', '.join(sorted(NOT_SCHEDULED))}."
            )
        try:
            json.dumps(value)
        except TypeError:
            raise SeqInputError(
                f"schedule option {name}={value!r}: a schedule stores its options, so each must be "
                "a plain value (a name, a number, a list of them)."
            ) from None
    return {name: value for name, value in options.items() if value is not None}


def _latest_version(store: Store, policy: str) -> int | None:
    rows = store.versions("policy", policy)
    return rows[-1].version if rows else None


def schedule(
    policy: str,
    benchmark: str | None = None,
    every: str | None = None,
    *,
    trials: int = 1,
    max_core_hours: float | None = None,
    off: bool = False,
    store: Store | None = None,
    **options: Any,
) -> list[ScheduleRow]:
    """Evaluate `policy` on `benchmark` on a schedule: `every` is daily, weekly, hourly, a cron
    expression, or deploy (each time `seq deploy` registers a new version of the policy). Each run
    is an ordinary eval of the policy's latest version with `trials` and `options` (those of
    `seq.eval.run`: `tasks=`, `seeds=`, `envs=`, `adapter=`, `params=` …), run by `seq scheduler`.

    `max_core_hours`: the schedule's budget; the run that spends it is stopped there and the
    schedule runs nothing more until it is raised. The same policy, benchmark and `every` again
    changes that schedule (and switches it back on); `off=True` switches off the pairing's
    schedules (only the one of `every`, where given). Returns the schedules it touched."""
    store = store or Store()
    book = Schedules(store)
    name = str(policy)
    if benchmark is None:
        raise SeqInputError("seq eval schedule needs --benchmark NAME.")
    if off:
        found = book.find(name, str(benchmark), check_every(every) if every else None)
        if not found:
            raise SeqInputError(
                f"no schedule evaluates {name} on {benchmark} (seq eval schedules lists them)."
            )
        book.set_enabled([row.id for row in found], False)
        return [book.get(row.id) for row in found]  # type: ignore[misc]
    if every is None:
        raise SeqInputError("seq eval schedule needs --every daily|weekly|hourly|deploy|CRON (or --off).")
    every = check_fires(check_every(every))
    if not isinstance(trials, int) or trials < 1:
        raise SeqInputError(f"--trials {trials!r}: expected a whole number of at least 1.")
    if max_core_hours is not None and not (max_core_hours > 0 and math.isfinite(max_core_hours)):
        raise SeqInputError(
            f"--max-core-hours {max_core_hours!r}: expected a finite number of hours above 0."
        )
    if every == DEPLOY and "@" in name:
        raise SeqInputError(
            f"--every deploy follows a policy's new versions; name the policy without a version "
            f"({name.partition('@')[0]}), not {name}."
        )
    options = _check_options(options)
    resolve("policy", name, store)  # refused now, not at the first run: unknown names, bad options
    resolve("benchmark", str(benchmark), store)
    from seq.eval import dry_run

    dry_run(name, benchmark=str(benchmark), trials=trials, store=store, **options)
    row = book.put(
        name,
        str(benchmark),
        every,
        trials,
        max_core_hours,
        options,
        time.time(),
        _latest_version(store, name.partition("@")[0]),
    )
    return [row]


def schedules(store: Store | None = None, now: float | None = None) -> list[dict[str, Any]]:
    """Every schedule with its next run (`next_run`: a time, `"on deploy"`, `"never fires"`, or None
    when off), how much of its budget is spent, and its last run with that eval's primary metric."""
    store = store or Store()
    book = Schedules(store)
    now = time.time() if now is None else now
    listed = []
    for row in book.find():
        runs = book.runs(row.id)
        spent_h = book.spent_core_s(row.id) / 3600
        listed.append(
            {
                **asdict(row),
                "next_run": _next_run(row, now),
                "due_now": _due_now(row, now, store),
                "spent_core_hours": spent_h,
                "budget_spent": row.max_core_hours is not None and spent_h >= row.max_core_hours,
                "runs": len(runs),
                "last_run": _last_result(runs[-1], store) if runs else None,
            }
        )
    return listed


def _next_run(row: ScheduleRow, now: float) -> float | str | None:
    if not row.enabled:
        return None
    if row.every == DEPLOY:
        return "on deploy"
    fire = next_fire(row.every, row.anchor_at)
    return NEVER if fire is None else fire


def _due_now(row: ScheduleRow, now: float, store: Store) -> bool:
    if not row.enabled:
        return False
    if row.every == DEPLOY:
        latest = _latest_version(store, row.policy)
        return latest is not None and latest > (row.seen_version or 0)
    return due_fire(row.every, row.anchor_at, now) is not None


def _last_result(run: ScheduleRun, store: Store) -> dict[str, Any]:
    """A run as the list shows it: its status and eval, and that eval's primary metric."""
    result = asdict(run)
    result["metric"] = None
    if run.eval_id and store.get_eval(run.eval_id) is not None:
        from seq.report.eval_report import build_report

        report = build_report(run.eval_id, store)
        metric = primary_metric(report)
        if metric is not None:
            result["metric"] = asdict(metric)
    return result
