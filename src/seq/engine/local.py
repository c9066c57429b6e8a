"""The local backend: N worker processes on this machine, each running one env at a time (or
`envs_per_worker` side by side, `seq.engine.lockstep`).

Work items are handed out one at a time to whichever worker has a free slot, preferring a task the worker
has already run (a benchmark that builds one env per task then builds each task once per worker,
not once per worker per task); a worker that dies is replaced and its episode recorded as an
error. Each worker is a fresh `python -m seq.engine` joined to the runner by a socket
pair: nothing the runner imported (a simulator, a rendering context, a thread, the `__main__` of
a notebook or a piped script) leaks into it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol

from seq.engine.isolation import WorkerProcess
from seq.engine.wire import Channel
from seq.engine.worker import WorkerConfig
from seq.record.episode import ERROR, TIMED_OUT, EpisodeResult
from seq.record.store import WorkItem

MAX_STARTUP_DEATHS = 3
# The episode loop ends a slow episode itself at timeout_s; past this grace, the step is wedged (in C,
# or in a blocking call) and the watchdog kills the worker.
WATCHDOG_GRACE_S = 1.0
# One env per core: a worker's numeric libraries get one thread each unless the user says otherwise,
# so that N workers do not start N × cores threads that fight over the same cores.
SINGLE_THREADED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


class WorkersFailed(RuntimeError):
    """Workers die before they are ready, again and again: no episode can run."""


@dataclass
class _Worker:
    process: subprocess.Popen
    connection: Channel
    items: dict[str, WorkItem] = field(default_factory=dict)  # the episodes it runs, by item id
    finishing: set[str] = field(default_factory=set)  # of those, ended ones whose files it still writes
    ready: bool = False
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
        self.connection.send(item)

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


class WorkSource(Protocol):
    """Where a backend takes its next work item: a list held in memory, or a queue shared through
    the record by several shards (`seq.engine.shards.SharedQueue`)."""

    def __bool__(self) -> bool: ...

    def take(self, known_tasks: set[str], claimed: set[str]) -> WorkItem | None: ...

    def extend(self, items: list[WorkItem]) -> None: ...


class _Queue:
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


def _lost(item: WorkItem, why: str) -> EpisodeResult:
    return item.result(status=ERROR, ended_by="error", error=f"{why}; it was replaced.")


def _died(exitcode: int | None, process: WorkerProcess, when: str = "while running this episode") -> str:
    why = f"the worker process died (exit code {exitcode}) {when}"
    if process.memory_bytes is not None:
        why += f" (its memory limit was {process.memory_text()}: it may have run past it)"
    return why


def _wedged(item: WorkItem) -> EpisodeResult:
    timeout = item.condition.timeout_s
    return item.result(
        status=TIMED_OUT,
        ended_by="watchdog",
        error=f"the episode ran past its timeout_s={timeout} inside a step (a blocking or native call); "
        "the watchdog killed its worker and started a new one.",
    )


def device_environment(index: int) -> dict[str, str]:
    """`SEQ_DEVICES=0,1,2` spreads workers over GPUs round-robin: worker `index` sees one device,
    set before anything in it imports CUDA or MuJoCo (as the GaP harness does)."""
    devices = [d.strip() for d in os.environ.get("SEQ_DEVICES", "").split(",") if d.strip()]
    if not devices:
        return {}
    device = devices[index % len(devices)]
    return {"CUDA_VISIBLE_DEVICES": device, "MUJOCO_EGL_DEVICE_ID": device}


def _relay(stream: Any, target: Any, mask: Callable[[str], str]) -> None:
    for line in iter(stream.readline, b""):
        target.write(mask(line.decode(errors="replace")))
        target.flush()
    stream.close()


class LocalBackend:
    """Runs work items on `envs` local worker processes."""

    def __init__(self, config: WorkerConfig, envs: int, process: WorkerProcess | None = None) -> None:
        self.config = config
        self.envs = envs
        self.slots = config.envs_per_worker
        self.process = process or WorkerProcess()
        self._started = 0

    def _start(self) -> _Worker:
        ours, theirs = socket.socketpair()
        masker = self.process.masker
        process = subprocess.Popen(
            self.process.command(theirs.fileno()),
            pass_fds=[theirs.fileno()],
            env=self.process.environment_for(
                {**SINGLE_THREADED, **os.environ, **device_environment(self._started)}
            ),
            # What a benchmark prints is the eval's log, on stderr: stdout is the report's (--json).
            stdout=subprocess.PIPE if masker else 2,
            stderr=subprocess.PIPE if masker else None,
        )
        if masker:  # ... with its secrets masked
            for stream in (process.stdout, process.stderr):
                threading.Thread(target=_relay, args=(stream, sys.stderr, masker.text), daemon=True).start()
        self._started += 1
        theirs.close()
        connection = Channel(Connection(ours.detach()))
        connection.send(self.config)
        return _Worker(process, connection)

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
        later = deque(rounds or [])
        pending: WorkSource = _Queue(items) if isinstance(items, list) else items
        total = len(items) + sum(len(r) for r in later) if isinstance(items, list) else self.envs
        workers = [self._start() for _ in range(min(self.envs, total))]
        retired: list[_Worker] = []
        startup_deaths = 0

        def feed(worker: _Worker) -> None:
            while worker.running < self.slots:
                claimed = set().union(*(w.tasks for w in workers + retired))
                item = pending.take(worker.tasks, claimed)
                if item is None:
                    return
                worker.give(item)

        def handle(worker: _Worker, message: tuple[str, Any]) -> None:
            kind, payload = message
            if kind == "ready":
                worker.ready = True
                if on_ready is not None:
                    on_ready(payload)
            elif kind == "ended":
                worker.ended(payload)
            else:
                worker.finished(payload)
                on_result(payload)
                if kind == "spent":  # it ran past its memory limit and exits: replace it
                    bury(worker, spent=payload.item_id)
                    return
            feed(worker)

        def bury(worker: _Worker, overdue: WorkItem | None = None, spent: str | None = None) -> None:
            """The worker's socket closed (it died, or exited after its `spent` episode ran past its
            memory limit) or the watchdog killed it for its `overdue` episode: record the episodes
            it was running, replace it."""
            nonlocal startup_deaths
            exitcode = worker.process.wait()
            worker.connection.close()
            workers.remove(worker)
            if worker.items:
                for item in worker.items.values():
                    if item is overdue:
                        on_result(_wedged(item))
                    elif overdue is not None:
                        on_result(
                            _lost(
                                item,
                                f"the watchdog killed the worker for {overdue.item_id}, which hung beside it",
                            )
                        )
                    elif spent is not None:
                        on_result(
                            _lost(
                                item,
                                f"the worker stopped: {spent}, beside it, ran past its memory limit",
                            )
                        )
                    elif item.item_id in worker.finishing:
                        why = _died(
                            exitcode, self.process, "after this episode ended, before its files were written"
                        )
                        on_result(_lost(item, why))
                    else:
                        on_result(_lost(item, _died(exitcode, self.process)))
            elif not worker.ready:
                startup_deaths += 1
                if startup_deaths >= MAX_STARTUP_DEATHS:
                    raise WorkersFailed(
                        f"worker processes exit before they are ready (exit code {exitcode}); "
                        "no episode can run."
                    )
            if pending or later:
                workers.append(self._start())

        try:
            while True:
                if not pending and all(not w.items and w.ready for w in workers):
                    if later and not (after_round is not None and after_round()):
                        pending.extend(later.popleft())
                        for worker in workers:
                            feed(worker)
                        continue
                    break
                owner = {id(w.connection): w for w in workers}
                deadlines = [w.deadline for w in workers if w.deadline is not None]
                timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
                ready = wait([w.connection for w in workers], timeout=timeout)
                for worker in [
                    w for w in workers if w.deadline is not None and w.deadline <= time.monotonic()
                ]:
                    if worker.connection in ready:
                        continue  # it answered just in time
                    worker.process.kill()
                    bury(worker, worker.overdue())
                for connection in ready:
                    worker = owner[id(connection)]
                    if worker not in workers:
                        continue
                    try:
                        message = worker.connection.recv()
                    except (EOFError, OSError):
                        bury(worker)
                        continue
                    handle(worker, message)
                for worker in [w for w in workers if w.ready and not w.items and not later]:
                    worker.connection.close()  # nothing left for it: the worker exits on EOF
                    workers.remove(worker)
                    retired.append(worker)
        finally:
            for worker in workers:  # still busy: the eval was interrupted
                worker.process.kill()
                worker.process.wait()
            # Workers told to stop are closing their envs; reap them without holding up the report.
            threading.Thread(target=lambda: [w.process.wait() for w in retired], daemon=True).start()
