"""Leases: which runner holds an eval now, judged from the record alone.

A runner (`seq eval run`, a resume, each shard) takes a lease on its eval before it touches it: a
row naming its host, its pid and when that process started, with a heartbeat a thread refreshes
every `HEARTBEAT_S`. A lease is alive while its process is: on this host (same pid namespace) the
pid is looked up, which is exact; a runner elsewhere is judged by its heartbeat, which lapses
after `EXPIRES_AFTER_S`. A second runner of a live eval is refused (`EvalHeld`); a dead lease is
cleared by the next runner. The heartbeat also adds the runner's wall time to the eval, so a
runner killed with SIGKILL loses at most one interval of it.
"""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from seq.errors import SeqInputError
from seq.record.integrity import GuardedConnection
from seq.record.schema import insert, select

HEARTBEAT_S = 2.0
EXPIRES_AFTER_S = 5 * HEARTBEAT_S  # a runner elsewhere silent this long is gone
WHOLE_EVAL = ""  # the holder of a runner that runs the whole eval; a shard holds its own name
LeaseKey = tuple[str, str, str, int]  # (eval_id, holder, host, pid): what `held_clause()` takes

log = logging.getLogger("seq.record")


class EvalHeld(SeqInputError):
    """The eval (or this shard of it) is being run by a live runner; a second one is refused."""


class LeaseLost(RuntimeError):
    """This runner's lease lapsed and another runner took the eval over: it stops recording."""


@dataclass(frozen=True)
class Identity:
    """A runner process as the record names it. `pid_scope` (boot id and pid namespace) says
    where its pid means this process; `process_start` tells a reused pid from the runner."""

    host: str
    pid: int
    pid_scope: str | None
    process_start: str | None


def this_process() -> Identity:
    pid = os.getpid()
    return Identity(socket.gethostname(), pid, _pid_scope(), _process_stat(pid)[1])


@dataclass(frozen=True)
class LeaseRow:
    eval_id: str
    holder: str
    host: str
    pid: int
    pid_scope: str | None
    process_start: str | None
    acquired_at: float
    heartbeat_at: float

    @property
    def runner(self) -> str:
        return f"{self.host}:{self.pid}"

    def on_this_host(self, here: Identity) -> bool:
        """Whether the pid can be looked up here: same host, same pid namespace (where known)."""
        scopes = (self.pid_scope, here.pid_scope)
        return self.host == here.host and (None in scopes or scopes[0] == scopes[1])

    def alive(self, here: Identity | None = None, now: float | None = None) -> bool:
        here = here or this_process()
        if self.on_this_host(here):
            return _process_alive(self.pid, self.process_start)
        return (now or time.time()) - self.heartbeat_at < EXPIRES_AFTER_S

    def describe(self, here: Identity | None = None) -> str:
        """`host:pid (this host)` or `host:pid (last heartbeat 3 s ago)`."""
        if self.on_this_host(here or this_process()):
            return f"{self.runner} (a process on this host)"
        return f"{self.runner} (last heartbeat {max(0.0, time.time() - self.heartbeat_at):.0f} s ago)"


def lease_rows(db: sqlite3.Connection, eval_id: str) -> list[LeaseRow]:
    rows = db.execute(select("leases") + " WHERE eval_id = ? ORDER BY holder", (eval_id,)).fetchall()
    return [LeaseRow(*row) for row in rows]


def held_clause() -> str:
    """SQL that is true while the lease keyed by (eval_id, holder, host, pid) is still in the record."""
    return "EXISTS (SELECT 1 FROM leases WHERE eval_id = ? AND holder = ? AND host = ? AND pid = ?)"


class Lease:
    """This process's hold on one eval (or one shard of it), with its heartbeat thread.

    Use as a context manager: `Lease.acquire(...)` refuses a held eval, `release()` (at exit)
    stops the heartbeat and clears the row. `start_clock()` starts counting the eval's wall time,
    which each heartbeat adds to the record, as does the runner with each episode it writes
    (`untallied_wall()`).
    """

    def __init__(self, path: Path, row: LeaseRow) -> None:
        self.path, self.row = path, row
        self.lost = False
        self._db = sqlite3.connect(
            path, timeout=30, isolation_level=None, check_same_thread=False, factory=GuardedConnection
        )
        self._db.path = path
        self._lock = threading.Lock()
        self._clock: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"seq-lease-{row.eval_id}", daemon=True)

    @classmethod
    def acquire(cls, path: Path, eval_id: str, holder: str = WHOLE_EVAL) -> Lease:
        """Take the lease on `eval_id` for `holder` in one transaction: dead leases are cleared; a
        live one that conflicts (any, for the whole eval; the whole eval's or this shard's, for a
        shard) refuses with `EvalHeld`."""
        here, now = this_process(), time.time()
        row = LeaseRow(eval_id, holder, here.host, here.pid, here.pid_scope, here.process_start, now, now)
        lease = cls(path, row)
        db = lease._db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                for other in lease_rows(db, eval_id):
                    if not other.alive(here, now):
                        forget = "DELETE FROM leases WHERE eval_id = ? AND holder = ?"
                        db.execute(forget, (eval_id, other.holder))
                    elif holder == WHOLE_EVAL or other.holder in (WHOLE_EVAL, holder):
                        raise EvalHeld(_held_message(other, holder, here))
                db.execute(insert("leases"), _values(row))
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except BaseException:
            db.close()
            raise
        lease._thread.start()
        return lease

    @property
    def key(self) -> LeaseKey:
        """The arguments of `held_clause()`."""
        return (self.row.eval_id, self.row.holder, self.row.host, self.row.pid)

    def start_clock(self) -> None:
        with self._lock:
            self._clock = time.perf_counter()

    @property
    def started(self) -> bool:
        """Whether the runner has started its clock: its episodes are under way."""
        return self._clock is not None

    def untallied_wall(self) -> float:
        """Wall time since the last tally, now counted as tallied: the caller records it."""
        with self._lock:
            return self._take_wall()

    def beat(self) -> None:
        """One heartbeat: refresh it and add the wall time since the last tally, in one
        transaction, if the lease is still held (else it is `lost`)."""
        with self._lock:
            self._refresh()

    def check(self) -> None:
        """Raise `LeaseLost` once another runner has taken the eval over: nothing more may be
        recorded by this one."""
        if self.lost:
            raise LeaseLost(
                f"eval {self.row.eval_id}: this runner's lease lapsed and another runner took the "
                "eval over; this one stopped recording."
            )

    def release(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        with self._lock:
            try:
                self._db.execute(
                    "DELETE FROM leases WHERE eval_id = ? AND holder = ? AND host = ? AND pid = ?", self.key
                )
            except sqlite3.Error as error:  # the record stays consistent: a dead lease is cleared later
                log.warning("could not clear the lease on eval %s: %s", self.row.eval_id, error)
            self._db.close()

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            try:
                self.beat()
            except (sqlite3.Error, SeqInputError) as error:  # busy for long, or damaged: next beat
                log.warning("the heartbeat of eval %s failed: %s", self.row.eval_id, error)
            if self.lost:
                return

    def _refresh(self) -> None:
        """One transaction: the heartbeat, and the wall time since the last one, if still held."""
        if self.lost:
            return
        wall = self._take_wall()
        self._db.execute("BEGIN IMMEDIATE")
        try:
            held = self._db.execute(
                "UPDATE leases SET heartbeat_at = ? WHERE eval_id = ? AND holder = ? AND host = ? "
                "AND pid = ?",
                (time.time(), *self.key),
            ).rowcount
            if held:
                add = "UPDATE evals SET wall_s = wall_s + ? WHERE id = ?"
                self._db.execute(add, (wall, self.row.eval_id))
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        self.lost = not held

    def _take_wall(self) -> float:
        if self._clock is None:
            return 0.0
        now = time.perf_counter()
        wall, self._clock = now - self._clock, now
        return wall


def _values(row: LeaseRow) -> tuple:
    return (
        row.eval_id,
        row.holder,
        row.host,
        row.pid,
        row.pid_scope,
        row.process_start,
        row.acquired_at,
        row.heartbeat_at,
    )


def _held_message(other: LeaseRow, holder: str, here: Identity) -> str:
    what = f"eval {other.eval_id}"
    if holder and other.holder == holder:
        what = f"shard {holder} of {what}"
    by = f" (as {other.holder})" if other.holder and other.holder != holder else ""
    return (
        f"{what} is being run by {other.describe(here)}{by}; wait for it to end or stop it "
        "before running it again."
    )


def _pid_scope() -> str | None:
    """This boot and pid namespace (Linux): a pid recorded in the same scope is this host's."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None
    return f"{boot}:{namespace}"


def _process_stat(pid: int) -> tuple[str | None, str | None]:
    """A process's state letter and start time (clock ticks after boot) from /proc, where there is one."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None, None
    fields = stat.rpartition(")")[2].split()  # the name, in parentheses, may hold spaces
    return fields[0], fields[19]


def _process_alive(pid: int, started: str | None) -> bool:
    """Whether `pid` is still the runner: it exists, is not a zombie, and started when it did."""
    if pid <= 0:  # never a process group
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, as another user's process
    state, start = _process_stat(pid)
    if state == "Z":
        return False
    return started is None or start is None or start == started
