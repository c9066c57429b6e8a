"""What one client may make the server hold, and the server's warnings when clients outrun it.

A client that sends and never reads would otherwise have the server queue its frames and its
replies without end. Per connection, the server holds at most:

- `MAX_WAITING_FRAMES` frames read and not yet handled (frames are answered one at a time, in
  order): past that it stops reading the socket, and the client's own sends block;
- `WRITE_HIGH_BYTES` of replies not yet taken by the client (asyncio's write buffer limit): past
  that it neither reads nor starts another frame until the client has read down to
  `WRITE_LOW_BYTES`. A connection held so for the server's `idle_timeout_s` is dropped;
- one reply of at most the server's reply budget (`max_reply_bytes`, by default its
  `max_message_bytes`): a request whose reply would hold more (acts × action values, known
  from the episode's action space before anything is computed, and the chunks' real size after)
  is answered with an error naming the budget, and nothing is computed or packed.

So a never-reading client costs the server one reply and the buffers above, and the server goes
on answering everyone else. `InFlight` logs vla-eval's backpressure warning when as many clients
were waiting on the policy as vla-eval's threshold, checked as often as vla-eval checks it. It
counts as vla-eval does, where each client waits on one observation: a client waiting on one
message (a seq worker's side-by-side acts sent together count once), and the most since the last
check, where vla-eval reads the count of the moment (a peak between two checks is not missed).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

log = logging.getLogger("seq.serving")

MAX_WAITING_FRAMES = 8  # frames read from one client and not yet handled
WRITE_HIGH_BYTES = 1 * 2**20  # one client's replies not yet read: stop reading it past this
WRITE_LOW_BYTES = 256 * 2**10  # … and read it again once it has taken its replies down to this
ACTION_VALUE_BYTES = 8  # a served action value, at most (float64)

# vla-eval's `model_servers.serve`: its threshold, how often it looks, how often it may warn
BACKPRESSURE_THRESHOLD = 4
BACKPRESSURE_CHECK_INTERVAL_S = 5.0
BACKPRESSURE_COOLDOWN_S = 30.0


def budget_problem(acts: int, values: int, limit: int) -> str | None:
    """Why a request of `acts` acts answered with `values` action values in all (from their
    episodes' action spaces) would answer with more than `limit` bytes; None if it would not."""
    needed = values * ACTION_VALUE_BYTES
    if needed <= limit:
        return None
    return (
        f"the reply to {acts:,} act(s) would hold {values:,} action values ({needed:,} bytes as "
        f"float64), over the server's reply budget of {limit:,} bytes (max_reply_bytes); send "
        "fewer acts at once."
    )


def reply_problem(nbytes: int, limit: int) -> str | None:
    """Why a computed reply of `nbytes` bytes of actions may not be sent; None if it may."""
    if nbytes <= limit:
        return None
    return (
        f"the policy's actions for this request are {nbytes:,} bytes, over the server's reply "
        f"budget of {limit:,} bytes (max_reply_bytes)."
    )


class InFlight:
    """Warns, as vla-eval's server does, when `threshold` or more requests wait on the policy.

    `count()` (the most clients waiting since it was last called) is read every
    `BACKPRESSURE_CHECK_INTERVAL_S` on the server's front loop, which a policy computing never
    blocks, and a warning is logged at most every `BACKPRESSURE_COOLDOWN_S`."""

    def __init__(self, count: Callable[[], int], threshold: int = BACKPRESSURE_THRESHOLD) -> None:
        self.count, self.threshold = count, threshold
        self._warned = -float("inf")

    def check(self) -> None:
        waiting = self.count()
        if waiting < self.threshold:
            return
        now = time.monotonic()
        if now - self._warned >= BACKPRESSURE_COOLDOWN_S:
            self._warned = now
            log.warning(
                "Backpressure detected — %d observations in-flight for inference. "
                "Model server throughput may be insufficient for the current shard count.",
                waiting,
            )

    async def watch(self) -> None:
        """Check until cancelled."""
        while True:
            await asyncio.sleep(BACKPRESSURE_CHECK_INTERVAL_S)
            self.check()
