"""How many episodes a worker runs side by side when the eval does not say (`envs_per_worker=None`).

A served policy costs every act a round trip, and a worker running one episode waits that long at
each step. Side by side (`seq.engine.lockstep`), a worker's episodes ask for their acts together,
in one message that the server answers as one batch, so they share the wait. Left to itself, an
eval whose every arm is a seq server (`policy_url=`, or `serve=True`) runs as many episodes per
worker as it gives each worker, at most `AUTO_MOST`, and no more envs than half the memory free
at launch (within a container's cgroup limit) holds at `env_memory` an env (the benchmark's
declaration, else `DEFAULT_ENV_MEMORY`; within its `memory=` where it declares one). Rows are the
same either way.

That count is a most: a worker runs one episode until that episode has waited on the server
longer than the worker's first episode took to start (its env built), then opens the others
(`seq.engine.lockstep`), so a policy that answers at once costs no envs built for nothing. The count
is decided again where the eval runs (a `--resume` with more workers, a shard on another machine).

Anything else runs one episode at a time: an inline policy (no wait to share; its batches are
asked for with `envs_per_worker=N`), an openpi or vla-eval server or a seq server from before
`act_batch` (one act a message), a policy object in this process, Ray's workers, a batched
benchmark (its setup makes its worlds), and episodes with a `timeout_s` (wall time, which
episodes side by side share: each would be timed out by the others' steps).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

AUTO_MOST = 64  # episodes side by side a worker, at most (bench/serving.py: 16 to 50 still gain)
DEFAULT_ENV_MEMORY = 256 * 2**20  # MetaWorld's env takes about 30 MiB beside the first
CGROUP = Path("/sys/fs/cgroup")
_UNLIMITED = 2**60  # a cgroup v1 limit this high is its "none"


@dataclass(frozen=True)
class SideBySide:
    """The episodes each worker runs at once, and why (shown with the eval's plan)."""

    count: int
    why: str
    chosen: bool = False  # by this rule (not asked, not one at a time for a reason): decided again
    # where the eval runs, its slots opened as they pay


def available_memory(cgroup: Path = CGROUP) -> int | None:
    """Bytes this process can be given without swapping or being killed: Linux's MemAvailable, or
    less where its cgroup's limit (a container's) leaves less; else its physical memory's half;
    None where neither is known."""
    free = _machine_free()
    room = cgroup_room(cgroup)
    if room is None:
        return free
    return room if free is None else min(free, room)


def _machine_free() -> int | None:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (AttributeError, ValueError, OSError):
        return None


def cgroup_room(cgroup: Path = CGROUP) -> int | None:
    """What the memory limit of this process's cgroup (v2, else v1; its own, else the root a
    container sees) leaves beside what it holds (its reclaimable page cache not counted); None
    where no limit is set. A machine's MemAvailable does not see a container's limit."""
    try:  # cgroup v2: "0::/PATH", this process's group under `cgroup`
        own = [line.split("::", 1)[1].strip() for line in Path("/proc/self/cgroup").read_text().splitlines()
               if line.startswith("0::")]
    except OSError:
        own = []
    places = [cgroup / own[0].lstrip("/")] if own and own[0] != "/" else []
    for folder, limit, usage, cache in [
        *((place, "memory.max", "memory.current", "inactive_file") for place in [*places, cgroup]),
        (cgroup / "memory", "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"),
    ]:
        try:
            limit_text = (folder / limit).read_text().strip()
            held = int((folder / usage).read_text().strip())
        except (OSError, ValueError):
            continue
        if not limit_text.isdigit() or int(limit_text) >= _UNLIMITED:
            return None  # "max" (v2) or v1's page-rounded 2**63: no limit
        return max(0, int(limit_text) - held + _stat(folder / "memory.stat", cache))
    return None


def _stat(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key and value.strip().isdigit():
                return int(value)
    except OSError:
        pass
    return 0


def auto_side_by_side(
    *,
    alone: str | None,
    items: int,
    workers: int,
    env_memory: int | None = None,
    memory: int | None = None,
    free: int | None = None,
) -> SideBySide:
    """The episodes per worker for an eval of `items` work items on `workers` workers whose arms
    are all seq servers; `alone`: why not, where they are not (one episode at a time, then).
    `env_memory`, `memory`: the benchmark's declarations; `free`: the machine's free memory
    (default: `available_memory()`)."""
    if alone is not None:
        return SideBySide(1, f"1 episode at a time a worker: {alone}")
    share = math.ceil(items / max(workers, 1))
    if share <= 1:
        return SideBySide(1, "1 episode at a time a worker: one episode each", chosen=True)
    per_env = env_memory or DEFAULT_ENV_MEMORY
    free = free if free is not None else available_memory() or 0
    budget, whose = free // 2, f"half the {_size(free)} free"
    if memory is not None and memory < budget:
        budget, whose = memory, f"the benchmark's memory= of {_size(memory)}"
    held = budget // (per_env * max(workers, 1))
    count = min(AUTO_MOST, share, max(1, held))
    most = f"up to {episodes(count)}" if count > 1 else episodes(count)
    if held < min(AUTO_MOST, share):
        envs = f"{held} env{'s' if held != 1 else ''}" if held else "no env"
        why = f"{most}: {whose} holds {envs} of {_size(per_env)} a worker"
    else:
        why = f"{most}, as the server's waits pay for their envs"
    return SideBySide(count, why, chosen=True)


def episodes(count: int) -> str:
    """`count` episodes a worker, in words: how a plan's line starts."""
    return "1 episode at a time a worker" if count == 1 else f"{count} episodes side by side a worker"


def _size(size: int) -> str:
    return f"{size / 2**30:.1f} GiB" if size >= 2**30 else f"{size / 2**20:.0f} MiB"
