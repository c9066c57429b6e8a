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

A policy that takes a while (a batch of over `SLOW_BATCH_S`) is run one loop turn later instead,
and the loop turns between its batches: the frames other clients sent meanwhile are read first,
so batches fill and the queue's depth is what clients are really waiting on. As vla-eval's
`PredictModelServer` does, a queue left deeper than twice `max_batch_size` after a batch is taken
is warned of (at most every `QUEUE_DEPTH_COOLDOWN_S`).
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

SLOW_BATCH_S = 0.001  # a batch slower than this lets the loop read what came meanwhile
QUEUE_DEPTH_COOLDOWN_S = 10.0  # vla-eval's: the least time between two queue depth warnings


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
        self.connections = 0  # this replica's open connections: each has at most one message pending
        self._queue: deque[Request] = deque()
        self._waiting: Counter[int] = Counter()  # queued requests by the connection they came from
        self._timer: asyncio.TimerHandle | None = None
        self._scheduled = self._running = False
        self._slow = False  # the last batch took over SLOW_BATCH_S
        self.running = 0  # requests of the batch computing now
        self._running_sources: set[int] = set()  # the connections they came from
        self.peak_queued = self.peak_in_flight = 0
        self.recent_peak = 0  # the most clients waiting since `take_recent_peak` last read it
        self._depth_warned = -QUEUE_DEPTH_COOLDOWN_S

    @property
    def batched(self) -> bool:
        """Whether requests are gathered (a batched `@seq.infer` and batches over 1; `/config` may
        change `max_batch_size` while the server runs)."""
        return self.host.spec.batched and self.max_batch_size > 1

    @property
    def in_flight(self) -> int:
        """Requests received and not answered yet: queued or computing."""
        return len(self._queue) + self.running

    def clients_waiting(self) -> int:
        """Connections with a request queued or computing: vla-eval's count of observations in
        flight, where each client waits on one (a seq worker's acts sent together count once)."""
        running = sum(1 for source in self._running_sources if source not in self._waiting)
        return len(self._waiting) + running

    def take_recent_peak(self) -> int:
        """The most clients waiting since the last call (from any thread: a read and a reset)."""
        peak, self.recent_peak = self.recent_peak, 0
        return peak

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
        self.peak_queued = max(self.peak_queued, len(self._queue))
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        self.recent_peak = max(self.recent_peak, self.clients_waiting())
        if self._running or self._slow:
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
            if self._slow:  # a timer due now runs after the loop's next reads, a call_soon before them
                self._loop.call_later(0, self._run_ready)
            else:
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
                batch = [self._take() for _ in range(size)]
                self._warn_depth()
                self._run(batch)
                if self._slow and self._queue:  # read what came meanwhile before the next batch
                    self._schedule()
                    break
        finally:
            self._running = False

    def _take(self) -> Request:
        request = self._queue.popleft()
        self._waiting[request.source] -= 1
        if not self._waiting[request.source]:
            del self._waiting[request.source]
        return request

    def _warn_depth(self) -> None:
        """vla-eval's warning, at its threshold: more than twice `max_batch_size` left waiting."""
        depth = len(self._queue)
        if not self.batched or depth <= 2 * self.max_batch_size:
            return
        now = self._loop.time()
        if now - self._depth_warned >= QUEUE_DEPTH_COOLDOWN_S:
            self._depth_warned = now
            log.warning(
                "Batch queue depth %d exceeds 2x max_batch_size (%d). "
                "Consider increasing max_batch_size or reducing shard count.",
                depth,
                self.max_batch_size,
            )

    def _run(self, batch: list[Request]) -> None:
        start = time.perf_counter()
        self.running, self._running_sources = len(batch), {request.source for request in batch}
        try:
            outcomes = self.host.run(self.index, batch)
        except BaseException:  # never leave a request unanswered
            outcomes = [(False, traceback.format_exc())] * len(batch)
        finally:
            self.running, self._running_sources = 0, set()
        seconds = time.perf_counter() - start
        self._slow = seconds > SLOW_BATCH_S
        self.stats.add(len(batch), sum(1 for ok, _ in outcomes if not ok), seconds)
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
