"""Repeated identical server errors are logged once, then counted.

A server at the open-files limit fails every accept and every hand-off the same way, thousands
of times a second; logged each time, the same traceback filled 21.5 MB of log. While a server
runs, its loggers (`seq.serving`, websockets' and asyncio's) pass the first warning or error of
each kind (logger, level, the message's first line, and the exception's type, text and place:
asyncio's accept retries at that limit multiply, each with a message of its own after the first
line), then drop the same one for `WINDOW_S`; the next that passes says how many were dropped,
and when the server stops, each kind still counting is told once with its count.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

WINDOW_S = 60.0  # an error logged is not logged again, the same, for this long
MAX_KINDS = 256  # kinds remembered at once (the oldest are forgotten first)
LOGGERS = ("seq.serving", "seq.serving.websockets", "asyncio")

Kind = tuple[str, int, str, str]


def _kind(record: logging.LogRecord) -> Kind:
    where = ""
    if record.exc_info and record.exc_info[1] is not None:
        error, trace = record.exc_info[1], record.exc_info[2]
        while trace is not None and trace.tb_next is not None:
            trace = trace.tb_next
        place = f"{trace.tb_frame.f_code.co_filename}:{trace.tb_lineno}" if trace is not None else ""
        where = f"{type(error).__name__}: {str(error)[:200]} at {place}"
    first_line = record.getMessage()[:500].partition("\n")[0]  # asyncio's context follows it
    return (record.name, record.levelno, first_line, where)


class RepeatFilter(logging.Filter):
    """Passes a warning or error once per kind and window; counts the ones it drops."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._kinds: OrderedDict[Kind, list] = OrderedDict()  # kind -> [first passed at, dropped since]

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        kind, now = _kind(record), time.monotonic()
        with self._lock:
            seen = self._kinds.get(kind)
            if seen is not None and now - seen[0] < WINDOW_S:
                seen[1] += 1
                return False
            dropped = seen[1] if seen is not None else 0
            self._kinds[kind] = [now, 0]
            self._kinds.move_to_end(kind)
            while len(self._kinds) > MAX_KINDS:
                self._kinds.popitem(last=False)
        if dropped:
            record.msg, record.args = f"{record.getMessage()} ({_times(dropped)} more before this)", ()
        return True

    def unreported(self) -> list[tuple[Kind, int]]:
        """Each kind dropped since it last passed, with how many times."""
        with self._lock:
            return [(kind, seen[1]) for kind, seen in self._kinds.items() if seen[1]]


def _times(count: int) -> str:
    return f"the same {count:,} time{'s' if count != 1 else ''}"


_installed: list[RepeatFilter] = []
_install_lock = threading.Lock()


@contextmanager
def counting_repeats() -> Iterator[RepeatFilter]:
    """Count repeats on the server's loggers while in the block (servers of one process share
    one filter); on leaving, the last server reports what was dropped."""
    with _install_lock:
        current = _installed[0] if _installed else RepeatFilter()
        if not _installed:
            for name in LOGGERS:
                logging.getLogger(name).addFilter(current)
        _installed.append(current)
    try:
        yield current
    finally:
        with _install_lock:
            _installed.pop()
            last = not _installed
            if last:
                for name in LOGGERS:
                    logging.getLogger(name).removeFilter(current)
        if last:
            for (name, level, message, where), count in current.unreported():
                detail = f" ({where})" if where else ""
                said = "%s%s: %s since it was last logged"
                logging.getLogger(name).log(level, said, message, detail, _times(count))
