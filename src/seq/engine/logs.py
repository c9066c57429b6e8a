"""Capturing what an eval's processes print into its logs (`seq.record.logs`), masked.

- Benchmark workers (local backend): each worker's stdout and stderr, merged into one pipe, are
  read by a relay thread here and written to the worker's stream. A worker says which arm its
  next lines belong to with a tag line on that same pipe (`tag_line`), so a line is filed under
  the arm of the episode that printed it; lines outside any episode, or while a worker runs
  episodes of several arms side by side, have no arm.
- Policy servers seq starts in this process (`--serve`, or a benchmark with secrets): what their
  threads print through `sys.stdout` / `sys.stderr` (print, logging's last resort) goes to the
  arm's stream instead of the terminal.

Nothing reaches the terminal unless `echo` (`seq eval run -v`): then each masked line is also
written to stderr, as it was printed.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

from seq.record.logs import BENCHMARK_SIDE, POLICY_SIDE, StreamWriter, end_streams, open_stream

if TYPE_CHECKING:
    from seq.isolation.secrets import Masker
    from seq.record.store import Store

TAG_VARIABLE = "SEQ_LOG_TAGS"  # set in a worker whose output is relayed: it writes tag lines
TAG_PREFIX = "\x1eseq-arm:"  # a tag line: this prefix, then the arm as JSON
DRAIN_S = 2.0  # at the end of an eval, how long relays get to read what workers still print


def tag_line(arm: str) -> bytes:
    """The line a worker writes to say its next lines are `arm`'s ("" for none)."""
    return (TAG_PREFIX + json.dumps(arm) + "\n").encode()


class _Router:
    """Stands in for `sys.stdout` / `sys.stderr`: text written from a routed thread goes to its
    route, line by line; any other thread's goes where it went before (and everything else —
    `isatty`, `fileno`, `encoding` — is the original's, so a progress display is unchanged)."""

    def __init__(self, original: IO[str], routes: dict[int, Callable[[str], None]]) -> None:
        self.original = original
        self.routes = routes
        self._partial: dict[int, str] = {}

    def write(self, text: str) -> int:
        thread = threading.get_ident()
        route = self.routes.get(thread)
        if route is None:
            return self.original.write(text)
        pending = self._partial.pop(thread, "") + text
        *lines, rest = pending.split("\n")
        for line in lines:
            route(line)
        if rest:
            self._partial[thread] = rest
        return len(text)

    def flush(self) -> None:
        self.original.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno …: the original's
        return getattr(self.original, name)


class EvalLogs:
    """One eval's log streams while it runs."""

    def __init__(self, store: Store, eval_id: str, masker: Masker | None = None, echo: bool = False) -> None:
        self.store, self.eval_id = store, eval_id
        self.masker, self.echo = masker, echo
        self._writers: list[StreamWriter] = []
        self._relays: list[threading.Thread] = []
        self._routes: dict[int, Callable[[str], None]] = {}
        self._routers: list[tuple[str, _Router]] = []
        self._echo_to = sys.stderr

    def stream(self, side: str, instance: int) -> StreamWriter:
        """A new stream (call from the thread that holds the record)."""
        writer = open_stream(self.store, self.eval_id, side, instance)
        self._writers.append(writer)
        return writer

    def line(self, writer: StreamWriter, text: str, arm: str = "") -> None:
        """Write one line (any thread): masked, and echoed with `echo`."""
        if self.masker:
            text = self.masker.text(text) or ""
        writer.write(text, arm)
        if self.echo:
            self._echo_to.write(text.rstrip("\r\n") + "\n")
            self._echo_to.flush()

    def relay(self, pipe: IO[bytes], instance: int) -> None:
        """Read a worker's merged stdout and stderr into a new benchmark stream, following its tags."""
        writer = self.stream(BENCHMARK_SIDE, instance)

        def read() -> None:
            arm = ""
            for raw in iter(pipe.readline, b""):
                text = raw.decode(errors="replace")
                if text.startswith(TAG_PREFIX):
                    try:
                        arm = str(json.loads(text[len(TAG_PREFIX) :]))
                    except ValueError:
                        arm = ""
                    continue
                self.line(writer, text, arm)
            pipe.close()

        thread = threading.Thread(target=read, name=f"seq-log-relay-{instance}", daemon=True)
        thread.start()
        self._relays.append(thread)

    @contextmanager
    def policy_server(self, instance: int, arm: str) -> Iterator[None]:
        """Around starting an arm's policy server in this process: what this thread prints while
        it loads, and what the threads it starts print from then on, go to the arm's stream."""
        writer = self.stream(POLICY_SIDE, instance)
        self._route_standard_streams()

        def route(text: str) -> None:
            self.line(writer, text, arm)

        before = {thread.ident for thread in threading.enumerate()}
        caller = threading.get_ident()
        self._routes[caller] = route
        try:
            yield
        finally:
            del self._routes[caller]
            for thread in threading.enumerate():
                if thread.ident is not None and thread.ident not in before:
                    self._routes[thread.ident] = route

    def _route_standard_streams(self) -> None:
        if self._routers:
            return
        for name in ("stdout", "stderr"):
            router = _Router(getattr(sys, name), self._routes)
            setattr(sys, name, router)
            self._routers.append((name, router))
        self._echo_to = self._routers[1][1].original

    def close(self, drain_s: float = DRAIN_S) -> None:
        """The eval's run is over: let the relays read what is left (up to `drain_s`), put the
        standard streams back and mark the streams ended."""
        deadline = time.monotonic() + drain_s
        for thread in self._relays:
            thread.join(max(0.0, deadline - time.monotonic()))
        for name, router in self._routers:
            if getattr(sys, name) is router:
                setattr(sys, name, router.original)
        self._routers.clear()
        self._routes.clear()
        end_streams(self.store, self._writers)
        if not any(thread.is_alive() for thread in self._relays):  # else a late line still lands
            for writer in self._writers:
                writer.close()
