"""The in-process backend: episodes one after another in the calling process.

For a policy object that lives in the caller's memory (a model being trained, evaluated every N
steps with `seq.evaluate`): no worker process, no server, no copy of the weights. The dispatcher
drives it like any backend, so it runs the same episode loop, records the same rows and honours
the same rounds; it has one worker, this process, which the watchdog cannot stop.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from seq.engine.dispatch import DONE, READY, Message
from seq.engine.environment import describe_environment
from seq.engine.worker import _EnvCloser, build_runners, run_item
from seq.engine.worker_config import WorkerConfig
from seq.record.work import WorkItem


class _ThisProcess:
    """The one worker: its episode runners, and the items it was given, in order."""

    def __init__(self, config: WorkerConfig, closer: _EnvCloser) -> None:
        started = time.process_time()
        self.runners = build_runners(config, closer)
        self.ready: dict[str, Any] | None = {
            "environment": describe_environment(),
            "setup_cpu_s": time.process_time() - started,
        }
        self.items: deque[WorkItem] = deque()


class InProcessBackend:
    """Runs each work item in this process when the dispatcher asks for a message."""

    slots = 1

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self._closer = _EnvCloser()

    def start(self) -> _ThisProcess:
        return _ThisProcess(self.config, self._closer)

    def send(self, worker: _ThisProcess, item: WorkItem) -> None:
        worker.items.append(item)

    def receive(
        self, workers: list[_ThisProcess], timeout: float | None
    ) -> list[tuple[_ThisProcess, Message]]:
        for worker in workers:
            if worker.ready is not None:
                report, worker.ready = worker.ready, None
                return [(worker, (READY, report))]
            if worker.items:
                return [(worker, (DONE, run_item(worker.runners, worker.items.popleft())))]
        return []

    def stop(self, worker: _ThisProcess) -> None:
        worker.items.clear()

    def release(self, worker: _ThisProcess) -> None:
        pass

    def close(self) -> None:
        self._closer.close_all()
