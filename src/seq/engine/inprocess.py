"""The in-process backend: episodes one after another in the calling process.

For a policy object that lives in the caller's memory (a model being trained, evaluated every N
steps with `seq.evaluate`): no worker process, no server, no copy of the weights. It runs the same
episode loop, records the same rows and honours the same rounds as the local backend.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from seq.engine.environment import describe_environment
from seq.engine.worker import WorkerConfig, _EnvCloser, build_runners, run_item
from seq.record.episode import EpisodeResult
from seq.record.store import WorkItem


class InProcessBackend:
    """Runs work items in this process, in plan order."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config

    def run(
        self,
        items: list[WorkItem],
        on_result: Callable[[EpisodeResult], None],
        on_ready: Callable[[dict[str, Any]], None] | None = None,
        rounds: list[list[WorkItem]] | None = None,
        after_round: Callable[[], bool] | None = None,
    ) -> None:
        closer = _EnvCloser()
        started = time.process_time()
        runners = build_runners(self.config, closer)
        if on_ready is not None:
            on_ready({"environment": describe_environment(), "setup_cpu_s": time.process_time() - started})
        try:
            for index, batch in enumerate([items, *(rounds or [])]):
                if index and after_round is not None and after_round():
                    return
                for item in batch:
                    on_result(run_item(runners, item))
        finally:
            closer.close_all()
