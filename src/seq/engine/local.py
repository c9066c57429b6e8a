"""The local backend: N worker processes on this machine, each running one env at a time.

Work items are handed out one at a time to whichever worker is free; a worker that dies is
replaced and its episode recorded as an error. Workers are started with `spawn`, so nothing the
parent imported (a simulator, a rendering context, a thread) leaks into them.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from seq.engine.worker import WorkerConfig, worker_main
from seq.record.episode import ERROR, EpisodeResult
from seq.record.store import WorkItem

MAX_STARTUP_DEATHS = 3


class WorkersFailed(RuntimeError):
    """Workers die before they are ready, again and again: no episode can run."""


@dataclass
class _Worker:
    process: Any
    connection: Connection
    item: WorkItem | None = None
    ready: bool = False


def _lost(item: WorkItem, exitcode: int | None) -> EpisodeResult:
    condition = item.condition
    return EpisodeResult(
        item.item_id,
        condition.task,
        condition.seed,
        item.trial,
        condition.suite,
        condition.variation,
        status=ERROR,
        ended_by="error",
        error=f"the worker process died (exit code {exitcode}) while running this episode; it was replaced.",
    )


class LocalBackend:
    """Runs work items on `envs` local worker processes."""

    def __init__(self, config: WorkerConfig, envs: int) -> None:
        self.config = config
        self.envs = envs
        self._context = multiprocessing.get_context("spawn")

    def _start(self) -> _Worker:
        parent, child = self._context.Pipe()
        process = self._context.Process(target=worker_main, args=(child, self.config), daemon=True)
        process.start()
        child.close()
        return _Worker(process, parent)

    def run(
        self,
        items: list[WorkItem],
        on_result: Callable[[EpisodeResult], None],
        on_ready: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        """Run every item, calling `on_result` as each episode finishes (in the calling thread)."""
        pending = deque(items)
        workers = [self._start() for _ in range(min(self.envs, len(items)))]
        retired: list[_Worker] = []
        startup_deaths = 0

        def feed(worker: _Worker) -> None:
            worker.item = pending.popleft() if pending else None
            if worker.item is not None:
                worker.connection.send(worker.item)

        def handle(worker: _Worker, message: tuple[str, Any], give_more: bool = True) -> None:
            kind, payload = message
            if kind == "ready":
                worker.ready = True
                if on_ready is not None:
                    on_ready(payload)
            else:
                worker.item = None
                on_result(payload)
            if give_more:
                feed(worker)

        def bury(worker: _Worker) -> None:
            nonlocal startup_deaths
            try:
                while worker.connection.poll():
                    handle(worker, worker.connection.recv(), give_more=False)
            except (EOFError, OSError):
                pass
            worker.process.join(timeout=5)
            workers.remove(worker)
            if worker.item is not None:
                on_result(_lost(worker.item, worker.process.exitcode))
            elif not worker.ready:
                startup_deaths += 1
                if startup_deaths >= MAX_STARTUP_DEATHS:
                    raise WorkersFailed(
                        f"worker processes exit before they are ready (exit code {worker.process.exitcode});"
                        " no episode can run."
                    )
            if pending:
                workers.append(self._start())

        try:
            while any(w.item is not None or not w.ready for w in workers):
                owner = {id(w.connection): w for w in workers} | {id(w.process.sentinel): w for w in workers}
                ready = wait([w.connection for w in workers] + [w.process.sentinel for w in workers])
                for obj in ready:
                    worker = owner[id(obj)]
                    if worker not in workers:
                        continue
                    if obj is worker.connection:
                        try:
                            handle(worker, worker.connection.recv())
                            continue
                        except (EOFError, OSError):
                            pass
                    bury(worker)
                for worker in [w for w in workers if w.ready and w.item is None]:
                    worker.connection.close()  # nothing left for it: the worker exits on EOF
                    workers.remove(worker)
                    retired.append(worker)
        finally:
            for worker in workers:
                worker.process.kill()
            for worker in workers + retired:
                worker.process.join(timeout=10)
                if worker.process.is_alive():
                    worker.process.kill()
                    worker.process.join()
