"""The one dispatcher: which worker runs which work item, and what happens when one dies or hangs.

Every backend (local processes, Ray actors, this process) runs an eval through `Dispatcher.run`.
A backend only starts workers and moves messages (`Backend`); the dispatcher decides everything
else, the same way for all of them:

- work items are handed out one at a time to a ready worker with a free slot, preferring a task the
  worker has already run (a benchmark that builds one env per task then builds it once per worker);
- `rounds` are released one at a time, once every item before them has finished and
  `after_round()` said go on (a sequential test);
- a worker that dies costs the episodes it was running (each recorded as an infrastructure
  failure naming why: their items stay unfinished) and is replaced; one that keeps dying before it
  is ready stops the eval (`WorkersFailed`);
- an arm whose policy server could not be reached for `CIRCUIT_AFTER` episodes in a row (each
  after the client's retries) is asked no more: its remaining items are recorded as not run
  (`circuit_open`, an infrastructure failure) instead of each waiting out the retries again;
- the watchdog kills a worker whose episode ran past `timeout_s` inside a step (a blocking or native
  call the episode loop cannot interrupt) and records that episode as `timed_out`.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol

from seq.engine.failures import CIRCUIT_OPEN, WORKER_DIED
from seq.record.episode import ERROR, INFRASTRUCTURE, TIMED_OUT, EpisodeResult
from seq.record.work import WorkItem

MAX_STARTUP_DEATHS = 3
CIRCUIT_AFTER = 3  # episodes in a row whose policy server could not be reached: stop asking it
# The episode loop ends a slow episode itself at timeout_s; past this grace, the step is wedged (in C,
# or in a blocking call) and the watchdog kills the worker.
WATCHDOG_GRACE_S = 1.0

# What a backend's `receive` reports of a worker, as (kind, payload):
READY = "ready"  # set up; payload: {"environment": ..., "setup_cpu_s": ..., "slots": ..., ...}
SLOTS = "slots"  # it runs more episodes side by side from now on; payload: how many
ENDED = "ended"  # an episode ended and its result follows once its files are written; payload: item id
DONE = "done"  # an episode's result; payload: EpisodeResult
SPENT = "spent"  # the same, after which the worker exits (it ran past its memory limit)
DIED = "died"  # the worker is gone; payload: why, e.g. "the worker process died (exit code -9)"
Message = tuple[str, Any]


class WorkersFailed(RuntimeError):
    """Workers die before they are ready, again and again: no episode can run."""


class Backend(Protocol):
    """Starts workers and moves messages to and from them; the dispatcher does the rest.

    A worker is any hashable handle the backend chooses (a process, an actor)."""

    slots: int  # episodes one worker runs side by side

    def start(self) -> Hashable:
        """Start a worker; it reports `READY` through `receive` once set up."""

    def send(self, worker: Any, item: WorkItem) -> None:
        """Give a ready worker one work item."""

    def receive(self, workers: list[Any], timeout: float | None) -> list[tuple[Any, Message]]:
        """Messages from any of `workers`, waiting up to `timeout` seconds (None: until one comes).
        A worker that is gone is reported once as `DIED`, and the backend has reaped it."""

    def stop(self, worker: Any) -> None:
        """End a worker now (the watchdog, or an interrupted eval) and reap it."""

    def release(self, worker: Any) -> None:
        """Nothing is left for an idle worker: let it close its envs and exit."""

    def close(self) -> None:
        """The run is over: reap what was released, without holding up the report."""


class WorkSource(Protocol):
    """Where the dispatcher takes its next work item: a queue held in memory, or one shared through
    the record by several shards (`seq.engine.shards.SharedQueue`)."""

    def __bool__(self) -> bool: ...

    def take(self, known_tasks: set[str], claimed: set[str]) -> WorkItem | None: ...

    def extend(self, items: list[WorkItem]) -> None: ...


class TaskQueue:
    """Pending work items grouped by task, in plan order within each task."""

    def __init__(self, items: list[WorkItem]) -> None:
        self._by_task: dict[str, deque[WorkItem]] = {}
        self.extend(items)

    def extend(self, items: list[WorkItem]) -> None:
        for item in items:
            self._by_task.setdefault(item.condition.task, deque()).append(item)

    def __bool__(self) -> bool:
        return bool(self._by_task)

    def take(self, known_tasks: set[str], claimed: set[str]) -> WorkItem | None:
        """The next item for a worker that knows `known_tasks`: a task it knows, else one nobody has
        started (`claimed` holds every worker's tasks), else the largest."""
        if not self._by_task:
            return None
        known = [task for task in self._by_task if task in known_tasks]
        fresh = [task for task in self._by_task if task not in claimed]
        task = (known or fresh or [max(self._by_task, key=lambda t: len(self._by_task[t]))])[0]
        queue = self._by_task[task]
        item = queue.popleft()
        if not queue:
            del self._by_task[task]
        return item


@dataclass(eq=False)
class _Worker:
    """The dispatcher's view of one worker: what it runs, what it knows, when it is overdue."""

    handle: Any
    items: dict[str, WorkItem] = field(default_factory=dict)  # the episodes it runs, by item id
    finishing: set[str] = field(default_factory=set)  # of those, ended ones whose files it still writes
    ready: bool = False
    slots: int = 1  # episodes it runs side by side now: the backend's, or fewer until they pay
    tasks: set[str] = field(default_factory=set)
    deadlines: dict[str, float] = field(default_factory=dict)  # when the watchdog kills an episode

    @property
    def running(self) -> int:
        """Episodes that hold one of its slots."""
        return len(self.items) - len(self.finishing)

    @property
    def deadline(self) -> float | None:
        return min(self.deadlines.values(), default=None)

    def give(self, item: WorkItem) -> None:
        self.items[item.item_id] = item
        self.tasks.add(item.condition.task)
        timeout = item.condition.timeout_s
        if timeout is not None:
            self.deadlines[item.item_id] = time.monotonic() + timeout + WATCHDOG_GRACE_S

    def ended(self, item_id: str) -> None:
        """The episode ended and its result follows once its files are written: its slot is free."""
        self.finishing.add(item_id)
        self.deadlines.pop(item_id, None)

    def finished(self, result: EpisodeResult) -> None:
        self.items.pop(result.item_id, None)
        self.finishing.discard(result.item_id)
        self.deadlines.pop(result.item_id, None)

    def overdue(self) -> WorkItem:
        """The episode whose deadline passed first."""
        return self.items[min(self.deadlines, key=self.deadlines.__getitem__)]


def lost(item: WorkItem, why: str) -> EpisodeResult:
    """An episode whose worker went away: an infrastructure failure that says why."""
    return item.result(
        status=ERROR, ended_by=WORKER_DIED, failure=INFRASTRUCTURE, error=f"{why}; it was replaced."
    )


def not_run(item: WorkItem, why: str) -> EpisodeResult:
    """An item of an arm whose circuit is open: recorded as not run, and why."""
    return item.result(status=ERROR, ended_by=CIRCUIT_OPEN, failure=INFRASTRUCTURE, error=f"not run: {why}")


class Circuits:
    """Per arm: how many episodes in a row found its policy server unreachable, and the arms
    asked no more (`CIRCUIT_AFTER` in a row), with why."""

    def __init__(self) -> None:
        self.in_a_row: dict[str, int] = {}
        self.open: dict[str, str] = {}

    def seen(self, result: EpisodeResult) -> None:
        arm = result.arm
        if result.ended_by == "server_unreachable":
            self.in_a_row[arm] = self.in_a_row.get(arm, 0) + 1
            if self.in_a_row[arm] >= CIRCUIT_AFTER and arm not in self.open:
                whose = f"arm {arm}'s" if arm else "the"
                self.open[arm] = (
                    f"{whose} policy server was unreachable for {self.in_a_row[arm]} episodes in a row, "
                    "so it was asked no more"
                )
        elif not result.infrastructure:
            self.in_a_row[arm] = 0


def wedged(item: WorkItem) -> EpisodeResult:
    """An episode the watchdog ended: it ran past its timeout inside one step."""
    timeout = item.condition.timeout_s
    return item.result(
        status=TIMED_OUT,
        ended_by="watchdog",
        error=f"the episode ran past its timeout_s={timeout} inside a step (a blocking or native call); "
        "the watchdog killed its worker and started a new one.",
    )


class Dispatcher:
    """Runs work items on up to `envs` workers of one backend."""

    def __init__(self, backend: Backend, envs: int) -> None:
        self.backend = backend
        self.envs = envs

    def run(
        self,
        items: list[WorkItem] | WorkSource,
        on_result: Callable[[EpisodeResult], None],
        on_ready: Callable[[dict[str, Any]], None] | None = None,
        rounds: list[list[WorkItem]] | None = None,
        after_round: Callable[[], bool] | None = None,
    ) -> None:
        """Run every item, calling `on_result` as each episode finishes (in the calling thread).

        With `rounds`, the items of each further round are handed out only once every item before
        them has finished and `after_round()` has returned False (True stops the run there).
        """
        backend = self.backend
        later = deque(rounds or [])
        pending: WorkSource = TaskQueue(items) if isinstance(items, list) else items
        total = len(items) + sum(len(r) for r in later) if isinstance(items, list) else self.envs
        workers = [_Worker(backend.start()) for _ in range(min(self.envs, total))]
        claimed: set[str] = set()  # every task any worker, alive or gone, has started
        startup_deaths = 0
        circuits = Circuits()

        def feed(worker: _Worker) -> None:
            while worker.ready and worker.running < worker.slots:
                item = pending.take(worker.tasks, claimed)
                if item is None:
                    return
                if item.arm in circuits.open:
                    on_result(not_run(item, circuits.open[item.arm]))
                    continue
                worker.give(item)
                claimed.add(item.condition.task)
                backend.send(worker.handle, item)

        def handle(worker: _Worker, kind: str, payload: Any) -> None:
            if kind == READY:
                worker.ready = True
                worker.slots = min(backend.slots, payload.get("slots", backend.slots))
                if on_ready is not None:
                    on_ready(payload)
            elif kind == SLOTS:
                worker.slots = min(backend.slots, payload)
            elif kind == ENDED:
                worker.ended(payload)
            elif kind in (DONE, SPENT):
                worker.finished(payload)
                circuits.seen(payload)
                on_result(payload)
                if kind == SPENT:  # it ran past its memory limit and exits: replace it
                    backend.stop(worker.handle)
                    why = f"the worker stopped: {payload.item_id}, beside it, ran past its memory limit"
                    bury(worker, why)
                    return
            elif kind == DIED:
                bury(worker, payload, died=True)
                return
            feed(worker)

        def bury(worker: _Worker, why: str, died: bool = False, overdue: WorkItem | None = None) -> None:
            """The worker is gone: record the episodes it was running, count a death before it was
            ready, and start another while work remains."""
            nonlocal startup_deaths
            workers.remove(worker)
            if worker.items:
                for item in worker.items.values():
                    if item is overdue:
                        on_result(wedged(item))
                    elif not died:
                        on_result(lost(item, why))
                    elif item.item_id in worker.finishing:
                        when = "after this episode ended, before its files were written"
                        on_result(lost(item, f"{why} {when}"))
                    else:
                        on_result(lost(item, f"{why} while running this episode"))
            elif not worker.ready:
                startup_deaths += 1
                if startup_deaths >= MAX_STARTUP_DEATHS:
                    raise WorkersFailed(
                        f"{why} before it was ready, {startup_deaths} times; no episode can run."
                    )
            if pending or later:
                workers.append(_Worker(backend.start()))

        try:
            while True:
                if not pending and all(not w.items and w.ready for w in workers):
                    if later and not (after_round is not None and after_round()):
                        pending.extend(later.popleft())
                        for worker in workers:
                            feed(worker)
                        continue
                    break
                deadlines = [w.deadline for w in workers if w.deadline is not None]
                timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
                by_handle = {w.handle: w for w in workers}
                messages = backend.receive(list(by_handle), timeout)
                answered = {h for h, _ in messages}
                now = time.monotonic()
                for worker in [w for w in workers if w.deadline is not None and w.deadline <= now]:
                    if worker.handle in answered:
                        continue  # it answered just in time
                    backend.stop(worker.handle)
                    overdue = worker.overdue()
                    why = f"the watchdog killed the worker for {overdue.item_id}, which hung beside it"
                    bury(worker, why, overdue=overdue)
                for worker_handle, (kind, payload) in messages:
                    worker = by_handle[worker_handle]
                    if worker in workers:
                        handle(worker, kind, payload)
                for worker in [w for w in workers if w.ready and not w.items and not later]:
                    workers.remove(worker)
                    backend.release(worker.handle)
        finally:
            for worker in workers:  # still busy: the eval was interrupted
                backend.stop(worker.handle)
            backend.close()
