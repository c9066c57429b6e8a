"""Gathers one replica's act requests into batches and runs them.

A batch closes at `max_batch_size` requests, `max_wait_ms` after its first request arrived, or as
soon as every connection of the replica has a request waiting (clients act in lockstep: a client
sends one message — one act, or the acts of its worker's side-by-side episodes — and waits for
the answer, so no other request can come). A policy whose `@seq.infer` is not batched gets
requests one at a time, with no waiting.

The batcher lives on its replica's event loop, in the replica's own thread: a ready batch runs
right there, in the callback that received the request completing it, and the answers are written
from the same thread. No request crosses a thread on its way, and the server's front loop, which
accepts connections and answers health checks, never waits for a policy.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import traceback
from collections import Counter, deque
from typing import Any

from seq.serving.host import PolicyHost, Request

log = logging.getLogger("seq.serving")


class Stats:
    """Request and batch counts of all replicas, read from any thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.histogram: Counter[int] = Counter()
        self.requests = self.errors = 0
        self.busy_s = 0.0

    def add(self, size: int, errors: int, seconds: float) -> None:
        with self.lock:
            self.histogram[size] += 1
            self.requests += size
            self.errors += errors
            self.busy_s += seconds

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            batches = sum(self.histogram.values())
            return {
                "requests": self.requests,
                "batches": batches,
                "batch_size_histogram": dict(sorted(self.histogram.items())),
                "mean_batch_size": self.requests / batches if batches else 0.0,
                "errors": self.errors,
                "busy_s": round(self.busy_s, 6),
            }


class Batcher:
    """One replica's queue; every method runs on the replica's event loop."""

    def __init__(
        self, host: PolicyHost, index: int, max_batch_size: int, max_wait_ms: float, stats: Stats
    ) -> None:
        self.host, self.index, self.stats = host, index, stats
        self.max_batch_size = max_batch_size
        self.max_wait_s = max_wait_ms / 1000.0
        self.batched = host.spec.batched and max_batch_size > 1
        self.connections = 0  # this replica's open connections: each has at most one message pending
        self._queue: deque[Request] = deque()
        self._waiting: Counter[int] = Counter()  # queued requests by the connection they came from
        self._timer: asyncio.TimerHandle | None = None
        self._scheduled = self._running = False

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def submit(self, *requests: Request) -> None:
        """Queue requests (the acts of one message, together); each `reply` is called with its
        outcome (at once, when the batch it completes is ready and nothing else is running)."""
        arrived = self._loop.time()
        for request in requests:
            request.arrived = arrived
            self._queue.append(request)
            self._waiting[request.source] += 1
        if self._running:
            self._schedule()
        else:
            self._run_ready()

    def connection_closed(self) -> None:
        """One client fewer: a batch waiting for it may be ready now."""
        self.connections -= 1
        self._schedule()

    def _schedule(self) -> None:
        if not self._scheduled:  # run after the current callback, not inside it
            self._scheduled = True
            self._loop.call_soon(self._run_ready)

    def _ready(self) -> bool:
        if not self.batched or len(self._queue) >= self.max_batch_size:
            return True
        if len(self._waiting) >= self.connections:  # every client is waiting: nobody else can come
            return True
        deadline = self._queue[0].arrived + self.max_wait_s
        if self._loop.time() >= deadline:
            return True
        if self._timer is None:
            self._timer = self._loop.call_at(deadline, self._on_timer)
        return False

    def _on_timer(self) -> None:
        self._timer = None
        self._run_ready()

    def _run_ready(self) -> None:
        self._scheduled = False
        if self._running:  # an answer's callback submitted again: the loop below picks it up
            return
        self._running = True
        try:
            while self._queue and self._ready():
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None
                size = min(self.max_batch_size, len(self._queue)) if self.batched else 1
                self._run([self._take() for _ in range(size)])
        finally:
            self._running = False

    def _take(self) -> Request:
        request = self._queue.popleft()
        self._waiting[request.source] -= 1
        if not self._waiting[request.source]:
            del self._waiting[request.source]
        return request

    def _run(self, batch: list[Request]) -> None:
        start = time.perf_counter()
        try:
            outcomes = self.host.run(self.index, batch)
        except BaseException:  # never leave a request unanswered
            outcomes = [(False, traceback.format_exc())] * len(batch)
        self.stats.add(len(batch), sum(1 for ok, _ in outcomes if not ok), time.perf_counter() - start)
        for request, outcome in zip(batch, outcomes, strict=True):
            try:
                request.reply(outcome)
            except Exception:  # one connection's failure to answer must not strand the others
                log.exception("answering a request failed")

    def stop(self) -> None:
        """Answer what is still queued with an error."""
        if self._timer is not None:
            self._timer.cancel()
        while self._queue:
            self._take().reply((False, "the server stopped before this request ran."))

    @property
    def queued(self) -> int:
        return len(self._queue)
