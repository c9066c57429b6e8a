"""Leases: the record alone says whether a runner holds an eval (`seq.record.lease`)."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from conftest import refused_in_one_line, run_cli

import seq
from seq.record.lease import EXPIRES_AFTER_S, WHOLE_EVAL, EvalHeld, Lease, LeaseLost, LeaseRow, this_process
from seq.record.migrations import MIGRATIONS

FIXTURES = Path(__file__).parent / "fixtures"


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def _short_eval(toy_file: Path) -> str:
    seq.deploy(toy_file)
    return seq.eval.run("line-controller", benchmark="line", tasks=["near"], seeds=[0], envs=1).eval_id


def _lease(pid: int, **fields) -> LeaseRow:
    here = this_process()
    values = {
        "eval_id": "ev-x",
        "holder": WHOLE_EVAL,
        "host": here.host,
        "pid": pid,
        "pid_scope": here.pid_scope,
        "process_start": None,
        "acquired_at": time.time(),
        "heartbeat_at": time.time(),
    }
    return LeaseRow(**{**values, **fields})


def test_a_running_eval_of_a_version_2_record_keeps_its_live_runner(seq_home):
    """Step 4 turns `evals.runner` into a lease: a live runner of an older seq keeps its eval."""
    seq_home.mkdir(parents=True)
    database = seq_home / "seq.db"
    shutil.copyfile(FIXTURES / "v1_record.db", database)
    old = sqlite3.connect(database, isolation_level=None)
    for step in (0, 1):
        MIGRATIONS[step](old)
    old.execute("PRAGMA user_version = 2")
    alive, dead = [row[0] for row in old.execute("SELECT id FROM evals ORDER BY id LIMIT 2")]
    host = socket.gethostname()
    old.execute("UPDATE evals SET status='running', runner=? WHERE id=?", (f"{host}:{os.getpid()}", alive))
    old.execute("UPDATE evals SET status='running', runner=? WHERE id=?", (f"{host}:{_dead_pid()}", dead))
    old.close()

    store = seq.Store()
    assert store.migrated_from == 2
    assert store.get_eval(alive).status == "running" and store.get_eval(dead).status == "interrupted"
    assert [lease.pid for lease in store.leases(alive)] == [os.getpid()]
    assert store.get_eval(alive).error is None


def test_removing_an_eval_removes_its_leases(toy_file):
    eval_id = _short_eval(toy_file)
    store = seq.Store()
    with store.transaction() as db:  # a runner killed with SIGKILL leaves its lease behind
        db.execute("UPDATE evals SET status='running' WHERE id=?", (eval_id,))
        db.execute(
            "INSERT INTO leases (eval_id, holder, host, pid, acquired_at, heartbeat_at) "
            "VALUES (?, '', ?, ?, 0, 0)",
            (eval_id, socket.gethostname(), _dead_pid()),
        )
    assert seq.eval.ls()[0]["status"] == "interrupted"
    seq.eval.rm(eval_id)
    assert store._db.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0


def test_a_reused_pid_a_zombie_or_another_namespace_is_not_the_runner():
    here = this_process()
    assert _lease(os.getpid(), process_start=here.process_start).alive()
    assert not _lease(os.getpid(), process_start="1").alive()  # the pid now names another process
    assert not _lease(_dead_pid()).alive()

    zombie = subprocess.Popen(["true"])
    try:
        deadline = time.monotonic() + 10
        while Path(f"/proc/{zombie.pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert not _lease(zombie.pid).alive()
    finally:
        zombie.wait()

    elsewhere = _lease(_dead_pid(), pid_scope="another-container:1")  # same host name, other pids
    assert elsewhere.alive()  # judged by its heartbeat, which is fresh
    stale = time.time() - EXPIRES_AFTER_S - 1
    assert not _lease(_dead_pid(), pid_scope="another-container:1", heartbeat_at=stale).alive()


def test_shards_hold_leases_of_their_own(toy_file):
    eval_id = _short_eval(toy_file)
    path = seq.Store().path
    with Lease.acquire(path, eval_id, "shard-0-of-2"), Lease.acquire(path, eval_id, "shard-1-of-2"):
        with pytest.raises(EvalHeld, match="shard shard-0-of-2 of eval .* is being run by"):
            Lease.acquire(path, eval_id, "shard-0-of-2")
        with pytest.raises(EvalHeld, match=r"is being run by .* \(as shard-0-of-2\)"):
            Lease.acquire(path, eval_id, WHOLE_EVAL)
        refused_in_one_line(run_cli("eval", "run", "--resume", eval_id), eval_id, "is being run by")
        refused_in_one_line(run_cli("eval", "rm", eval_id), eval_id, "is running")
    Lease.acquire(path, eval_id).release()  # both released: the whole eval is free
    assert seq.Store().leases(eval_id) == []


def test_the_heartbeat_adds_wall_time_and_a_lapsed_lease_records_nothing(toy_file):
    eval_id = _short_eval(toy_file)
    store = seq.Store()
    before = store.get_eval(eval_id).wall_s
    with Lease.acquire(store.path, eval_id) as lease:
        lease.start_clock()
        time.sleep(0.05)
        lease.beat()
        assert store.get_eval(eval_id).wall_s >= before + 0.05
        lease.check()
        store._db.execute("DELETE FROM leases")  # another runner judged it lapsed and took over
        lease.beat()
        with pytest.raises(LeaseLost, match="another runner took the eval over"):
            lease.check()
        store.set_eval_status(eval_id, "failed", add_wall_s=5.0, error="x", lease=lease.key)
    row = store.get_eval(eval_id)
    assert (row.status, row.error) == ("completed", None) and row.wall_s < before + 5.0
