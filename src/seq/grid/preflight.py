"""Before any cell runs: every server the grid uses must answer.

A policy given by `url` is probed with a short websocket handshake (fail fast, naming the URL,
rather than erroring cells mid-grid); one with a `start_cmd` is started here, waited for on
`/health`, and stopped when the grid ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence

from seq.errors import SeqInputError
from seq.grid.config import PolicyEntry

PROBE_TIMEOUT_S = 5.0


def probe(url: str, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """None when a websocket server answers the handshake at `url`, else why not in a few words.
    A server that answers but refuses (a token missing, say) is reachable: the eval will say more."""
    from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI
    from websockets.sync.client import connect

    try:
        with connect(url, open_timeout=timeout_s, close_timeout=1.0, max_size=None):
            return None
    except InvalidStatus:
        return None
    except (OSError, TimeoutError, InvalidHandshake, ConnectionClosed, InvalidURI, ValueError) as error:
        return str(error) or type(error).__name__


def _health_url(url: str) -> str:
    rest = url.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0]
    scheme = "https" if url.startswith("wss://") else "http"
    return f"{scheme}://{rest}/health"


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(_health_url(url), timeout=2.0) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _stop(process: subprocess.Popen) -> None:
    """Stop the start_cmd's whole process group (the shell and the server it started), waiting
    until none of it is left, so that the port is free when the grid returns."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while _group_alive(process.pid) and time.monotonic() < deadline:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _start(entry: PolicyEntry, source: str) -> subprocess.Popen:
    assert entry.url is not None and entry.start_cmd is not None
    # the server's banner and logs go to stderr: stdout is the grid's (`--json` prints only JSON there)
    process = subprocess.Popen(entry.start_cmd, shell=True, start_new_session=True, stdout=2)
    deadline = time.monotonic() + entry.startup_timeout_s
    while time.monotonic() < deadline:
        if _healthy(entry.url):
            return process
        if process.poll() is not None:
            raise SeqInputError(
                f"{source}: policy {entry.id!r}: its start_cmd exited with code {process.returncode} "
                f"before {_health_url(entry.url)} answered."
            )
        time.sleep(0.2)
    _stop(process)
    raise SeqInputError(
        f"{source}: policy {entry.id!r}: {_health_url(entry.url)} did not answer within "
        f"startup_timeout_s={entry.startup_timeout_s:g} after its start_cmd."
    )


@contextlib.contextmanager
def servers(entries: Sequence[PolicyEntry], source: str) -> Iterator[None]:
    """Start the managed servers and probe the others; stop the managed ones on the way out."""
    started: list[subprocess.Popen] = []
    try:
        for entry in entries:
            if entry.start_cmd is not None:
                started.append(_start(entry, source))
        for entry in entries:
            if entry.url is not None and entry.start_cmd is None:
                why = probe(entry.url)
                if why is not None:
                    raise SeqInputError(
                        f"{source}: policy {entry.id!r}: no policy server answers at {entry.url} "
                        f"({why}); start it first, or give the entry a start_cmd."
                    )
        yield
    finally:
        for process in started:
            _stop(process)
