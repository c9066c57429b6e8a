"""The scheduler: run each schedule that is due, once, as an ordinary eval within its budget.

`run_due` looks once (what `seq scheduler run --once` does, from a systemd timer or cron);
`run_scheduler` looks again every `poll_s` seconds in the foreground (for a service manager).
A schedule whose fires fell due while no scheduler ran runs once, standing for all of them
(`ScheduleRun.missed` says how many). A `--every deploy` schedule runs when the policy's latest
version is newer than the one it last saw.
"""

from __future__ import annotations

import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from seq.errors import EvalCanceled, SeqInputError
from seq.record.episode import EpisodeResult
from seq.record.schedules import (
    RUN_BUDGET,
    RUN_REFUSED,
    RUN_RUNNING,
    RUN_SKIPPED,
    ScheduleRow,
    ScheduleRun,
    Schedules,
)
from seq.record.store import CANCELED, COMPLETED, FAILED, EvalRow, Store
from seq.scheduling.every import DEPLOY, due_fire, next_fire

Say = Callable[[str], None]
OnStart = Callable[[EvalRow], None]
OnResult = Callable[[EpisodeResult], None]


class BudgetSpent(KeyboardInterrupt):
    """Raised from an eval's result callback once the schedule's budget is spent: the engine stops
    the eval as it stops one canceled with Ctrl-C, keeping what ran."""


@dataclass
class _Fire:
    cause: str  # "time" or "deploy"
    due_at: float
    missed: int
    version: int | None  # the policy version to run (deploy), else the latest at run time


def _due(row: ScheduleRow, book: Schedules, store: Store, now: float) -> _Fire | None:
    """This schedule's fire, claimed for this process; None when none is due or another took it."""
    if row.every == DEPLOY:
        versions = store.versions("policy", row.policy)
        latest = versions[-1].version if versions else None
        if latest is None or latest <= (row.seen_version or 0):
            return None
        if not book.claim_version(row.id, row.seen_version, latest):
            return None
        return _Fire("deploy", now, 1, latest)
    found = due_fire(row.every, row.anchor_at, now)
    if found is None or not book.claim_time(row.id, row.anchor_at, now):
        return None
    return _Fire("time", found[0], found[1], None)


class _Budget:
    """Stops an eval (`BudgetSpent`) once the schedule's earlier runs and this eval together have
    used its core-hours; the eval's cost is counted as its report counts it."""

    def __init__(
        self,
        store: Store,
        spent_s: float,
        limit_s: float | None,
        on_start: OnStart | None = None,
        on_result: OnResult | None = None,
    ) -> None:
        self.store, self.spent_s, self.limit_s = store, spent_s, limit_s
        self.then_start, self.then_result = on_start, on_result  # the caller's (its progress)
        self.eval_id: str | None = None
        self.episodes_s = 0.0
        self.tripped = False

    def on_start(self, row: EvalRow) -> None:
        self.eval_id = row.id
        if self.then_start is not None:
            self.then_start(row)

    def on_result(self, result: EpisodeResult) -> None:
        self.episodes_s += result.cpu_s
        if self.then_result is not None:
            self.then_result(result)
        if self.limit_s is not None and self.spent_s + self.used_s() >= self.limit_s and not self.tripped:
            self.tripped = True
            raise BudgetSpent

    def used_s(self) -> float:
        row = self.store.get_eval(self.eval_id) if self.eval_id else None
        return self.episodes_s + (row.setup_cpu_s if row else 0.0)


def _run(
    row: ScheduleRow,
    fire: _Fire,
    book: Schedules,
    store: Store,
    say: Say,
    on_start: OnStart | None = None,
    on_result: OnResult | None = None,
) -> ScheduleRun:
    """Run one fire as an eval and record how it ended."""
    import seq.eval

    limit_s = row.max_core_hours * 3600 if row.max_core_hours is not None else None
    spent_s = book.spent_core_s(row.id)
    run = ScheduleRun(
        row.id, time.time(), fire.due_at, fire.missed, fire.cause, fire.version, None, RUN_RUNNING, 0.0,
        None, None,
    )  # fmt: skip
    if limit_s is not None and spent_s >= limit_s:
        spent = f"{spent_s / 3600:.3g} used"
        note: str | None = f"its budget of {row.max_core_hours:g} core-hours is spent ({spent})"
        run = replace(run, status=RUN_SKIPPED, finished_at=time.time(), note=note)
        book.finish_run(run)
        say(f"{row.label}: skipped, {note}")
        return run
    book.start_run(run)
    policy = f"{row.policy}@v{fire.version}" if fire.version is not None else row.policy
    budget = _Budget(store, spent_s, limit_s, on_start, on_result)
    missed = f" ({fire.missed} fires missed, run once)" if fire.missed > 1 else ""
    say(f"{row.label}: running {policy}{missed}")
    status: str = FAILED
    note, eval_id, stop = None, None, None
    try:
        report = seq.eval.run(
            policy,
            benchmark=row.benchmark,
            trials=row.trials,
            store=store,
            on_start=budget.on_start,
            on_result=budget.on_result,
            **row.options,
        )
        status, eval_id = report.status, report.eval_id
    except EvalCanceled as canceled:
        eval_id = str(canceled)
        if budget.tripped:
            status = RUN_BUDGET
            note = f"stopped when its budget of {row.max_core_hours:g} core-hours was spent"
            store.set_eval_status(eval_id, CANCELED, error=f"schedule #{row.id} {note} (seq scheduler)")
        else:
            status, stop = CANCELED, KeyboardInterrupt()  # Ctrl-C or SIGTERM: the scheduler stops too
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM before the eval started (or after it ended)
        status, stop, eval_id = CANCELED, KeyboardInterrupt(), budget.eval_id
        ended = store.get_eval(eval_id) if eval_id is not None else None
        if ended is not None and ended.status == COMPLETED:  # it ended before the signal: not canceled
            status = COMPLETED
    except SeqInputError as error:
        status, note, eval_id = RUN_REFUSED, str(error), budget.eval_id
    except Exception as error:  # one eval failing never stops the scheduler
        note = "".join(traceback.format_exception_only(error)).strip()
        eval_id = budget.eval_id
    version = fire.version
    if eval_id is not None:
        eval_row = store.get_eval(eval_id)
        version = eval_row.policy_version if eval_row else version
    run = replace(
        run,
        eval_id=eval_id,
        policy_version=version,
        status=status,
        core_s=budget.used_s(),
        finished_at=time.time(),
        note=note,
    )
    book.finish_run(run)
    say(f"{row.label}: {status}" + (f", eval {eval_id}" if eval_id else "") + (f": {note}" if note else ""))
    if stop is not None:
        raise stop
    return run


def run_due(
    now: float | None = None,
    store: Store | None = None,
    say: Say | None = None,
    on_start: OnStart | None = None,
    on_result: OnResult | None = None,
) -> list[ScheduleRun]:
    """Run every schedule that is due at `now` (default: the clock's time), once each, and return
    the runs. A fire another scheduler process took is left to it. `on_start(row)` and
    `on_result(episode)` are passed to each eval's `seq.eval.run` (its progress)."""
    store = store or Store()
    book = Schedules(store)
    now = time.time() if now is None else now
    ran = []
    for row in book.find():
        if not row.enabled:
            continue
        fire = _due(row, book, store, now)
        if fire is not None:
            ran.append(_run(row, fire, book, store, say or (lambda line: None), on_start, on_result))
    return ran


def _next_wake(store: Store, now: float, poll_s: float) -> float:
    """When to look again: the next time a schedule fires, or after `poll_s` (deploys are polled)."""
    wake = now + poll_s
    for row in Schedules(store).find():
        if row.enabled and row.every != DEPLOY:
            fire = next_fire(row.every, max(row.anchor_at, now - 1e-6))
            wake = wake if fire is None else min(wake, fire)
    return max(wake, now + 0.05)


@contextmanager
def _sigterm_stops() -> Iterator[None]:
    """A service manager stops the scheduler with SIGTERM: treat it as Ctrl-C (the eval running
    is canceled with what ran, and the loop ends)."""

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield
        return
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_scheduler(
    poll_s: float = 30.0,
    once: bool = False,
    store: Store | None = None,
    say: Say | None = None,
    on_start: OnStart | None = None,
    on_result: OnResult | None = None,
) -> int:
    """Run due schedules until stopped (Ctrl-C or SIGTERM), looking again at each schedule's next
    fire and at least every `poll_s` seconds; `once`: look once and return. Returns how many
    runs started."""
    if not poll_s > 0:
        raise SeqInputError(f"--poll {poll_s!r}: expected a number of seconds above 0.")
    store = store or Store()
    started = 0
    with _sigterm_stops():
        try:
            while True:
                started += len(run_due(store=store, say=say, on_start=on_start, on_result=on_result))
                if once:
                    return started
                time.sleep(max(0.0, _next_wake(store, time.time(), poll_s) - time.time()))
        except KeyboardInterrupt:
            return started
