"""Budgets and their enforcement: one algorithm process, watched for wall time and memory.

The runner starts each `learn`/`infer` call in its own process group, waits on it from a thread
(`os.wait4`, which also gives the child's peak resident memory), and polls from the caller: past
`wall_s`, or above `memory_mb` of resident memory, the whole group is killed with SIGKILL and the
call is recorded as over budget. Checkpoint size and example counts are checked around the call.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from seq.errors import SeqInputError

POLL_S = 0.05
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
OK, OVER_BUDGET, FAILED = "ok", "over_budget", "failed"


@dataclass(frozen=True)
class Budget:
    """Limits of one call; `checkpoint_mb` and `examples` apply to `learn` only."""

    wall_s: float = 600.0
    memory_mb: float = 4096.0
    checkpoint_mb: float | None = None
    examples: int | None = None

    @classmethod
    def from_spec(cls, data: object, where: str) -> Budget:
        """Read a budget mapping from a spec, naming the key that is wrong."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise SeqInputError(f"{where}: expected a mapping of wall_s, memory_mb, checkpoint_mb, examples.")
        known = {"wall_s", "memory_mb", "checkpoint_mb", "examples"}
        for key, value in data.items():
            if key not in known:
                raise SeqInputError(
                    f"{where}: unknown budget key '{key}' (known: {', '.join(sorted(known))})."
                )
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise SeqInputError(f"{where}.{key}: expected a positive number, found {value!r}.")
        return cls(**data)

    def to_json(self, operation: str) -> dict:
        """The budget file handed to the algorithm."""
        return {"operation": operation, **{k: v for k, v in asdict(self).items() if v is not None}}


@dataclass
class ProcessOutcome:
    """How one process ended: exit code, wall time, peak memory, and why it was killed if it was."""

    status: str
    exit_code: int | None
    wall_s: float
    max_rss_mb: float
    reason: str = ""


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * PAGE_BYTES / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def run_within_budget(
    argv: list[str], budget: Budget, log_dir: Path, cwd: Path | None = None
) -> ProcessOutcome:
    """Run argv to completion or until it goes over `budget` (then kill its process group)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    with (log_dir / "stdout.log").open("wb") as out, (log_dir / "stderr.log").open("wb") as err:
        start = time.perf_counter()
        try:
            process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd, start_new_session=True
            )
        except OSError as error:
            return ProcessOutcome(FAILED, None, 0.0, 0.0, f"could not start {argv[0]}: {error.strerror}")
        ended: dict = {}
        done = threading.Event()

        def reap() -> None:
            _, status, usage = os.wait4(process.pid, 0)
            ended.update(status=status, usage=usage, at=time.perf_counter())
            done.set()

        threading.Thread(target=reap, daemon=True).start()
        reason = ""
        while not done.wait(POLL_S):
            elapsed = time.perf_counter() - start
            if elapsed > budget.wall_s:
                reason = f"killed after {elapsed:.1f} s: over its wall-time budget of {budget.wall_s:g} s"
            elif _rss_mb(process.pid) > budget.memory_mb:
                reason = f"killed: resident memory over its budget of {budget.memory_mb:g} MB"
            if reason:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                done.wait()
                break
    process.returncode = os.waitstatus_to_exitcode(ended["status"])
    wall = ended["at"] - start
    peak = ended["usage"].ru_maxrss / 1024.0
    if not reason and peak > budget.memory_mb:
        reason = f"peak resident memory {peak:.0f} MB over its budget of {budget.memory_mb:g} MB"
    if reason:
        return ProcessOutcome(OVER_BUDGET, process.returncode, wall, peak, reason)
    if process.returncode != 0:
        return ProcessOutcome(
            FAILED, process.returncode, wall, peak, f"exited with code {process.returncode}"
        )
    return ProcessOutcome(OK, 0, wall, peak)


def stderr_tail(log_dir: Path, lines: int = 12) -> str:
    """The last lines the algorithm wrote on stderr, for the diagnostics."""
    path = log_dir / "stderr.log"
    if not path.is_file():
        return ""
    text = path.read_bytes()[-8192:].decode("utf-8", "replace")
    return "\n".join(text.splitlines()[-lines:])
