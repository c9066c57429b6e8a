"""The local backend: worker processes on this machine, each a fresh `python -m seq.engine`.

Each worker is joined to the runner by a socket pair: nothing the runner imported (a simulator, a
rendering context, a thread, the `__main__` of a notebook or a piped script) leaks into it. It runs
one env at a time, or `envs_per_worker` side by side (`seq.engine.lockstep`). Which worker runs
what, and what happens when one dies, is the dispatcher's (`seq.engine.dispatch`).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

from seq.engine.dispatch import DIED, Message
from seq.engine.logs import TAG_VARIABLE
from seq.engine.wire import Channel
from seq.engine.worker_config import WorkerConfig
from seq.engine.worker_isolation import WorkerProcess
from seq.record.work import WorkItem

if TYPE_CHECKING:
    from seq.engine.logs import EvalLogs

# One env per core: a worker's numeric libraries get one thread each unless the user says otherwise,
# so that N workers do not start N × cores threads that fight over the same cores.
SINGLE_THREADED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass(eq=False)
class _Process:
    """One worker process and its end of the socket."""

    process: subprocess.Popen
    connection: Channel


def device_environment(index: int) -> dict[str, str]:
    """`SEQ_DEVICES=0,1,2` spreads workers over GPUs round-robin: worker `index` sees one device,
    set before anything in it imports CUDA or MuJoCo (as the GaP harness does). `SEQ_DEVICES_OFFSET`
    starts the round at another device (`seq grid` staggers its evals so)."""
    devices = [d.strip() for d in os.environ.get("SEQ_DEVICES", "").split(",") if d.strip()]
    if not devices:
        return {}
    offset = os.environ.get("SEQ_DEVICES_OFFSET", "0").strip()
    device = devices[(index + (int(offset) if offset.isdigit() else 0)) % len(devices)]
    return {"CUDA_VISIBLE_DEVICES": device, "MUJOCO_EGL_DEVICE_ID": device}


def _relay(stream: Any, target: Any, mask: Callable[[str], str]) -> None:
    for line in iter(stream.readline, b""):
        target.write(mask(line.decode(errors="replace")))
        target.flush()
    stream.close()


class LocalBackend:
    """Starts worker processes on this machine and moves messages over their sockets."""

    def __init__(
        self, config: WorkerConfig, process: WorkerProcess | None = None, logs: EvalLogs | None = None
    ) -> None:
        """`logs`: where the workers' output goes (`seq.engine.logs`); without, to stderr."""
        self.config = config
        self.slots = config.envs_per_worker
        self.process = process or WorkerProcess()
        self.logs = logs
        self._started = 0
        self._released: list[_Process] = []

    def start(self) -> _Process:
        if self.logs is not None:
            return self._start_logged()
        ours, theirs = socket.socketpair()
        masker = self.process.masker
        process = subprocess.Popen(
            self.process.command(theirs.fileno()),
            pass_fds=[theirs.fileno()],
            env=self._environment(),
            # What a benchmark prints is the eval's log, on stderr: stdout is the report's (--json).
            stdout=subprocess.PIPE if masker else 2,
            stderr=subprocess.PIPE if masker else None,
        )
        if masker:  # ... with its secrets masked
            for stream in (process.stdout, process.stderr):
                threading.Thread(target=_relay, args=(stream, sys.stderr, masker.text), daemon=True).start()
        return self._connect(process, ours, theirs)

    def _start_logged(self) -> _Process:
        """A worker whose stdout and stderr, merged, go to the eval's logs."""
        assert self.logs is not None
        ours, theirs = socket.socketpair()
        environment = {**self._environment(), TAG_VARIABLE: "1", "PYTHONUNBUFFERED": "1"}
        process = subprocess.Popen(
            self.process.command(theirs.fileno()),
            pass_fds=[theirs.fileno()],
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        assert process.stdout is not None
        self.logs.relay(process.stdout, self._started)
        return self._connect(process, ours, theirs)

    def _environment(self) -> dict[str, str]:
        base = {**SINGLE_THREADED, **os.environ, **device_environment(self._started)}
        return self.process.environment_for(base)

    def _connect(self, process: subprocess.Popen, ours: socket.socket, theirs: socket.socket) -> _Process:
        self._started += 1
        theirs.close()
        connection = Channel(Connection(ours.detach()))
        connection.send(self.config)
        return _Process(process, connection)

    def send(self, worker: _Process, item: WorkItem) -> None:
        worker.connection.send(item)

    def receive(self, workers: list[_Process], timeout: float | None) -> list[tuple[_Process, Message]]:
        owner = {id(w.connection): w for w in workers}
        messages = []
        connections: list[Any] = [w.connection for w in workers]  # channels: anything with fileno()
        for connection in wait(connections, timeout=timeout):
            worker = owner[id(connection)]
            try:
                messages.append((worker, worker.connection.recv()))
            except (EOFError, OSError):
                self.stop(worker)
                messages.append((worker, (DIED, self._died(worker.process.returncode))))
        return messages

    def _died(self, exitcode: int | None) -> str:
        why = f"the worker process died (exit code {exitcode})"
        if self.process.memory_bytes is not None:
            why += f" (its memory limit was {self.process.memory_text()}: it may have run past it)"
        return why

    def stop(self, worker: _Process) -> None:
        worker.process.kill()
        worker.process.wait()
        worker.connection.close()

    def release(self, worker: _Process) -> None:
        worker.connection.close()  # the worker closes its envs and exits on EOF
        self._released.append(worker)

    def close(self) -> None:
        # Released workers are closing their envs; reap them without holding up the report.
        released, self._released = self._released, []
        threading.Thread(target=lambda: [w.process.wait() for w in released], daemon=True).start()
