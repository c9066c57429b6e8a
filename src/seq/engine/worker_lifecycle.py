"""What a fresh worker process does first, before it imports anything heavy (die with the runner
that started it, take its memory limit, see its volume read-only), and last (`leave`).

Apart from `seq.engine.worker_isolation` (how the runner makes a worker of a benchmark's
declarations: images, secrets, GPUs), so that a worker's start imports none of that.
"""

from __future__ import annotations

import os
import sys
import time
from typing import NoReturn

MEMORY_VARIABLE = "SEQ_WORKER_MEMORY_BYTES"  # read by the worker before it imports anything heavy
ASSETS_VARIABLE = "SEQ_WORKER_ASSETS"
RUNNER_VARIABLE = "SEQ_RUNNER_PID"  # the worker's runner: the worker dies with it
PR_SET_PDEATHSIG = 1  # linux/prctl.h
PARENT_POLL_S = 0.5  # how often the fallback watcher looks whether the runner is still there


def die_with_runner() -> None:
    """In a fresh worker process, first of all: die when the runner that started it dies, even
    inside a step that blocks for good (the socket closing is noticed only between steps).

    On Linux the kernel sends SIGKILL at the runner's death (`prctl(PR_SET_PDEATHSIG)`, through
    ctypes: any CPython, an image's too); elsewhere a daemon thread watches the parent. A runner
    already gone by then (it died while this process started) ends it at once.
    """
    runner = os.environ.get(RUNNER_VARIABLE)
    if not runner or not runner.isdigit():
        return  # not started by a runner (run by hand): nothing to die with
    if not _kill_at_parent_death():
        watch_runner(int(runner))
    if os.getppid() != int(runner):
        os._exit(1)


def _kill_at_parent_death() -> bool:
    """Ask Linux for SIGKILL when the parent dies; False where that cannot be asked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def watch_runner(runner: int, poll_s: float = PARENT_POLL_S) -> None:
    """A daemon thread that ends this process once its parent is no longer `runner`."""
    import threading

    def watch() -> None:
        while os.getppid() == runner:
            time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, name="seq-runner-watch", daemon=True).start()


def enter_worker_limits() -> str | None:
    """In a fresh worker process, before anything heavy is imported: apply the memory limit and
    see the volume read-only. Returns how the volume is seen, for the eval's log."""
    limit = worker_memory_limit()
    if limit is not None:
        import resource

        # RLIMIT_DATA counts the heap and private mappings (numpy's arrays), not shared libraries:
        # an allocation past it raises MemoryError in the benchmark, which the worker records.
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    source = os.environ.get(ASSETS_VARIABLE)
    if source is None:
        return None
    from pathlib import Path

    from seq.isolation.assets import enter_assets

    return enter_assets(Path(source))


def worker_memory_limit() -> int | None:
    """This worker's memory limit in bytes, if its benchmark declares `memory=`."""
    limit = os.environ.get(MEMORY_VARIABLE)
    return int(limit) if limit else None


def leave() -> NoReturn:
    """End this worker as Python's own exit does, less the teardown of its modules, which the
    runner would wait for (about 50 ms with numpy and a websocket client loaded; more with a
    simulator): wait for its non-daemon threads, run its `atexit` handlers, flush its files."""
    import atexit
    import threading

    # What Python's exit runs first: threading's own exit hooks (they end the threads of a
    # ThreadPoolExecutor never shut down, which joining them alone would wait on for good), then
    # the join of the non-daemon threads.
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()  # what Python runs at exit (it prints what a handler raises)
    _flush_open_files()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed stream, a pipe nobody reads
            pass
    os._exit(0)


def _flush_open_files() -> None:
    """Write out what the files still open hold (a log a benchmark keeps in a global, a C
    library's `FILE*`): Python's teardown closes the one, the C library's exit flushes the other,
    `os._exit` neither. A few milliseconds: one pass over the objects the collector tracks."""
    import _io
    import gc

    for candidate in gc.get_objects():
        if isinstance(candidate, _io._IOBase):  # the C base: no ABC check on every object
            try:
                if not candidate.closed and candidate.writable():
                    candidate.flush()
            except Exception:  # a detached or broken file: nothing to save
                pass
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # no C library to ask (not a POSIX one)
        pass
