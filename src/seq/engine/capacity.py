"""How many local workers this machine holds: an `--envs` beyond it is capped, and said so once.

Each local worker is a Python interpreter of its own (about 160 MiB with numpy and seq loaded,
before its env), and a worker past a few per core only waits for a core. So an eval runs at most
`WORKERS_PER_CORE` workers a core this process may use, and no more than the memory free at
launch holds at `WORKER_MEMORY` each. Ray's workers run on the cluster: not capped here.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from seq.engine.side_by_side import available_memory

WORKERS_PER_CORE = 4
WORKER_MEMORY = 160 * 2**20  # measured: 30 idle workers held 4.7 GB
_said: set[tuple[int | None, int]] = set()
log = logging.getLogger("seq")


def default_envs() -> int:
    """One worker per core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Capacity:
    """The most local workers this machine holds, and why (cores or memory)."""

    most: int
    why: str


def machine_capacity(cores: int | None = None, free: int | None = None) -> Capacity:
    """What this machine holds (`cores`, `free` bytes: default, this process's)."""
    cores = cores or default_envs()
    free = free if free is not None else available_memory()
    by_cores = cores * WORKERS_PER_CORE
    core_text = f"{cores} core{'s' if cores != 1 else ''} × {WORKERS_PER_CORE}"
    if free is None:
        return Capacity(by_cores, core_text)
    by_memory = max(1, free // WORKER_MEMORY)
    memory_text = f"{free / 2**30:.1f} GiB free at {WORKER_MEMORY // 2**20} MiB a worker"
    if by_memory < by_cores:
        return Capacity(by_memory, memory_text)
    return Capacity(by_cores, core_text)


def capped_workers(workers: int, engine: str, asked: int | None) -> int:
    """`workers`, or the most this machine holds where they are more (local engine only), with one
    sentence on stderr (the `seq` log) saying so, once a process. `asked`: the `--envs` given."""
    if engine == "ray":
        return workers
    capacity = machine_capacity()
    if workers <= capacity.most:
        return workers
    if (asked, capacity.most) not in _said:
        _said.add((asked, capacity.most))
        what = f"--envs {asked}" if asked is not None else f"{workers} workers"
        log.warning(
            "%s is more than this machine holds (%s): running %d workers instead.",
            what,
            capacity.why,
            capacity.most,
        )
    return capacity.most
