"""The record never claims what did not happen: a second runner of a live eval is refused, a runner
that fails leaves the eval `failed` with its exception, a killed runner keeps its wall time and takes
its workers with it, and a damaged record is one sentence naming the file."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import default_ctrl_c, refused_in_one_line, run_cli

import seq
from seq.record.lease import EXPIRES_AFTER_S

CLI = [sys.executable, "-c", "from seq.cli import main; main()"]


def _start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """`seq ARGS` in a process group of its own (so that a test can kill all of it at the end)."""
    return subprocess.Popen(
        [*CLI, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=default_ctrl_c,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def _slow_eval() -> subprocess.Popen:
    """6 episodes of about a second each, on one worker."""
    return _start(
        "eval", "run", "line-controller", "--benchmark", "line", "--envs", "1", "--param", "delay=0.05"
    )


def _wait(condition, process: subprocess.Popen | None = None, limit_s: float = 120, what: str = "") -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        if process is not None:
            assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"timed out waiting for {what or condition}"
        time.sleep(0.05)


def _episodes(home: Path) -> int:
    try:
        with sqlite3.connect(home / "seq.db", timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def test_a_second_runner_of_a_live_eval_is_refused_in_one_sentence(toy_file, seq_home):
    """Seen: both runners worked the same items, the slower crashed on a raw IntegrityError and
    marked the eval `completed`; once the first was killed, ls said "completed, 22/40"."""
    assert run_cli("deploy", str(toy_file)).returncode == 0
    first = _slow_eval()
    try:
        _wait(lambda: _episodes(seq_home) >= 1, first, what="the first episode")
        (row,) = seq.eval.ls()
        second = run_cli("eval", "run", "--resume", row["id"], "--envs", "1")
        refused_in_one_line(second, row["id"], "is being run by", f":{first.pid}")
        assert second.stdout == ""  # refused before the eval's header or its progress bar
        with pytest.raises(seq.SeqInputError, match="is being run by"):
            seq.eval.run(resume=row["id"][:6], envs=1)  # the Python twin, by an id prefix
        assert seq.eval.ls()[0]["status"] == "running"
    finally:
        _kill_group(first)
    (row,) = seq.eval.ls()
    assert row["status"] == "interrupted" and 1 <= row["done"] < 6

    resumed = run_cli("eval", "run", "--resume", row["id"], "--envs", "2")  # the runner is gone
    assert resumed.returncode == 0, resumed.stderr
    report = seq.eval.report(row["id"])
    assert (report.status, report.done, report.total) == ("completed", 6, 6)
    assert len({e.item_id for e in report.episodes}) == 6


def test_an_unexpected_exception_fails_the_eval_and_the_record_says_why(toy_file):
    seq.deploy(toy_file)

    def tracker_gone(episode: seq.EpisodeResult) -> None:
        raise ConnectionError("the experiment tracker went away")

    with pytest.raises(ConnectionError):
        seq.eval.run("line-controller", benchmark="line", envs=1, on_result=tracker_gone)
    (row,) = seq.eval.ls()
    assert row["status"] == "failed" and row["done"] == 1 and row["total"] == 6
    assert row["error"] == "ConnectionError: the experiment tracker went away"
    report = seq.eval.report(row["id"])
    assert report.partial and "tracker_gone" in report.error  # the whole traceback is kept

    shown = run_cli("eval", "report", row["id"])
    assert shown.returncode == 0, shown.stderr
    assert f"eval {row['id']} · failed, 1/6 episodes" in shown.stdout
    assert "the eval failed: ConnectionError: the experiment tracker went away" in shown.stdout
    listed = run_cli("eval", "ls")
    assert "failed: ConnectionError: the experiment tracker went away" in listed.stdout

    assert seq.eval.run(resume=row["id"], envs=1).status == "completed"
    assert seq.eval.ls()[0]["error"] is None


NEEDS_WEIGHTS = textwrap.dedent("""
    import numpy as np

    import seq


    @seq.policy(name="needs-weights")
    class NeedsWeights(seq.Policy):
        @seq.load
        def load(self, weights_dir):
            raise FileNotFoundError("checkpoint.pt: the weights were never downloaded")

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.zeros(1)
""")


def test_a_runner_that_fails_while_starting_fails_the_eval(toy_file, tmp_path):
    """Before any episode (here: serving a policy whose load raises), not left `interrupted`."""
    policy = tmp_path / "needs_weights.py"
    policy.write_text(NEEDS_WEIGHTS)
    seq.deploy(toy_file)
    seq.deploy(policy)
    with pytest.raises(FileNotFoundError):
        seq.eval.run("needs-weights", benchmark="line", serve=True, envs=1)
    (row,) = seq.eval.ls()
    assert (row["status"], row["done"]) == ("failed", 0)
    assert row["error"] == "FileNotFoundError: checkpoint.pt: the weights were never downloaded"


def test_two_runners_writing_one_item_is_a_conflict_named_as_such(toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", tasks=["near"], seeds=[0], envs=1)
    store = seq.Store()
    (episode,) = store.episodes(report.eval_id)
    with pytest.raises(RuntimeError, match=r"already has an episode, so another runner is working"):
        store.write_episode(report.eval_id, episode)


def test_a_runner_killed_with_sigkill_keeps_its_wall_time(toy_file, seq_home):
    """Seen: "cost: 0.0 s" for an eval whose runner was killed after minutes of work."""
    assert run_cli("deploy", str(toy_file)).returncode == 0
    runner = _slow_eval()
    try:
        _wait(lambda: _episodes(seq_home) >= 2, runner, what="two episodes")
    finally:
        _kill_group(runner)
    (row,) = seq.eval.ls()
    report = seq.eval.report(row["id"])
    assert report.status == "interrupted" and report.done >= 2
    # one worker ran the episodes one after the other, inside the runner's wall time
    assert report.cost["wall_s"] >= sum(e.duration_s for e in report.episodes) > 0.5
    shown = run_cli("eval", "report", row["id"])
    assert "cost: 0.0 s" not in shown.stdout and "s wall time" in shown.stdout


def test_a_lease_held_elsewhere_holds_while_its_heartbeat_beats(toy_file):
    """A runner on another machine sharing the record is judged by its heartbeat."""
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", tasks=["near"], seeds=[0, 1], envs=1)
    store = seq.Store()
    with store.transaction() as db:  # as the record reads while that machine's runner runs
        db.execute("DELETE FROM episodes WHERE eval_id=? AND item_id LIKE '%seed=1%'", (report.eval_id,))
        db.execute("UPDATE evals SET status='running' WHERE id=?", (report.eval_id,))
        db.execute(
            "INSERT INTO leases (eval_id, holder, host, pid, acquired_at, heartbeat_at) "
            "VALUES (?, '', 'gpu-box-7', 4242, ?, ?)",
            (report.eval_id, time.time(), time.time()),
        )
    assert seq.eval.ls()[0]["status"] == "running"
    refused = run_cli("eval", "run", "--resume", report.eval_id)
    refused_in_one_line(refused, "gpu-box-7:4242", "last heartbeat")

    with store.transaction() as db:  # that machine went silent
        db.execute("UPDATE leases SET heartbeat_at = ?", (time.time() - EXPIRES_AFTER_S - 1,))
    assert seq.eval.ls()[0]["status"] == "interrupted"
    resumed = seq.eval.run(resume=report.eval_id, envs=1)
    assert (resumed.status, resumed.done) == ("completed", 2)
    assert store.leases(report.eval_id) == []  # the lapsed lease is cleared, and ours released


STUCK = textwrap.dedent('''
    """A benchmark whose step blocks for good, as a simulator waiting on a dead device does."""
    import os
    import time
    from pathlib import Path

    import numpy as np

    import seq


    class StuckEnv:
        def reset(self, seed=None):
            return np.zeros(2), {}

        def step(self, action):
            Path(os.environ["SEQ_TEST_STUCK_FILE"]).write_text(str(os.getpid()))
            time.sleep(600)  # blocking: the worker never reads its socket again
            return np.zeros(2), 0.0, False, False, {}


    @seq.benchmark(name="stuck", conditions=[seq.Condition(task="block", seed=0)], max_steps=5IMAGE)
    class Stuck(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return StuckEnv()

        @seq.check
        def check(self, env):
            return seq.Step(done=False, metrics={"success": 0.0})


    @seq.policy(name="still")
    class Still(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.zeros(1)
''')


def _parent_and_state(pid: int) -> tuple[int, str] | None:
    """A process's parent pid and state letter, or None once it is gone (a zombie is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[1]), fields[0]) if fields[0] != "Z" else None


def _runner_killed_alone_takes_its_worker(tmp_path: Path, image: str = "") -> None:
    bench = tmp_path / "stuck_bench.py"
    bench.write_text(STUCK.replace("IMAGE", image))
    assert run_cli("deploy", str(bench)).returncode == 0
    marker = tmp_path / "worker.pid"
    runner = _start(
        "eval",
        "run",
        "still",
        "--benchmark",
        "stuck",
        "--envs",
        "1",
        env={"SEQ_TEST_STUCK_FILE": str(marker)},
    )
    worker = None
    try:
        _wait(lambda: marker.exists() and marker.read_text(), runner, limit_s=300, what="the stuck step")
        worker = int(marker.read_text())
        assert _parent_and_state(worker) is not None and _parent_and_state(worker)[0] == runner.pid
        os.kill(runner.pid, signal.SIGKILL)  # the runner alone, as the OOM killer or `kill -9 PID` does
        runner.wait()
        _wait(lambda: _parent_and_state(worker) is None, limit_s=20, what="the worker to die with its runner")
    finally:
        _kill_group(runner)
        if worker is not None and _parent_and_state(worker) is not None:
            os.kill(worker, signal.SIGKILL)
    assert seq.eval.ls()[0]["status"] == "interrupted"


def test_a_worker_stuck_in_a_step_dies_with_its_runner(tmp_path):
    """Seen: the worker outlived its runner with PPID 1, stuck for good."""
    _runner_killed_alone_takes_its_worker(tmp_path)


@pytest.mark.slow
def test_a_worker_of_an_image_with_another_python_dies_with_its_runner(tmp_path):
    """An image's worker runs another Python (3.12 here): the same mechanism must hold there."""
    other = "3.12" if sys.version_info[:2] != (3, 12) else "3.11"
    _runner_killed_alone_takes_its_worker(
        tmp_path, f", image=seq.Image.debian_slim(python_version={other!r})"
    )


def test_where_the_kernel_cannot_do_it_a_thread_watches_the_runner(tmp_path):
    """The fallback of platforms without PR_SET_PDEATHSIG: a thread that watches the parent."""
    child = textwrap.dedent("""
        import os, sys, time
        from seq.engine.worker_lifecycle import watch_runner
        watch_runner(os.getppid(), poll_s=0.05)
        print(os.getpid(), flush=True)
        time.sleep(600)
    """)
    parent = textwrap.dedent(f"""
        import os, subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", {child!r}], stdout=subprocess.PIPE, text=True)
        print(child.stdout.readline().strip(), flush=True)
        os._exit(0)  # the runner dies; nobody closes anything for the child
    """)
    out = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=60)
    orphan = int(out.stdout.strip())
    try:
        _wait(lambda: _parent_and_state(orphan) is None, limit_s=20, what="the orphan to end")
    finally:
        if _parent_and_state(orphan) is not None:
            os.kill(orphan, signal.SIGKILL)


# -- a damaged record -------------------------------------------------------------------------------
def _truncated(db: Path) -> None:
    os.truncate(db, db.stat().st_size // 2)


def _pages_overwritten(db: Path) -> None:
    data = bytearray(db.read_bytes())
    data[4096:] = b"\x07" * (len(data) - 4096)  # every page after the header's
    db.write_bytes(bytes(data))


def _not_sqlite(db: Path) -> None:
    db.write_bytes(b"this is not an SQLite file\n" * 40)


def _emptied(db: Path) -> None:
    db.write_bytes(b"")


DAMAGE = {
    "truncated": _truncated,
    "overwritten": _pages_overwritten,
    "not-sqlite": _not_sqlite,
    "empty": _emptied,
}


@pytest.fixture
def damaged_record(toy_file, seq_home):
    """A record holding one finished eval, then damaged by `damage(kind)`; returns the eval id."""
    seq.deploy(toy_file)
    eval_id = seq.eval.run("line-controller", benchmark="line", tasks=["near"], seeds=[0, 1], envs=1).eval_id
    db = seq_home / "seq.db"
    with sqlite3.connect(db) as connection:  # everything into the main file, as after a clean exit
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def damage(kind: str) -> Path:
        DAMAGE[kind](db)
        return db

    return eval_id, damage


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_a_damaged_record_is_one_sentence_naming_the_file(damaged_record, toy_file, kind):
    """Seen: a 45-line sqlite3.DatabaseError traceback; an empty file read as an empty record."""
    eval_id, damage = damaged_record
    db = damage(kind)
    before = db.read_bytes()
    commands = [("eval", "ls"), ("eval", "run", "line-controller", "--benchmark", "line", "--seeds", "0")]
    if kind == "truncated":  # every command, once
        commands += [
            ("eval", "report", eval_id),
            ("eval", "status", eval_id),
            ("eval", "rm", eval_id),
            ("deploy", str(toy_file)),
            ("policy", "ls"),
            ("benchmark", "ls"),
        ]
    for command in commands:
        refused_in_one_line(run_cli(*command), str(db), "the record is damaged")
    with pytest.raises(seq.SeqInputError, match="the record is damaged"):
        seq.eval.ls()
    assert db.read_bytes() == before  # refused, not repaired into something else (an empty record)


def test_a_record_check_names_what_sqlite_finds(damaged_record):
    eval_id, damage = damaged_record
    sound = run_cli("record", "check")
    assert sound.returncode == 0, sound.stderr
    assert (
        "sound" in sound.stdout and f"schema version {seq.Store.schema_version} (this seq's)" in sound.stdout
    )
    db = damage("overwritten")
    checked = run_cli("record", "check")
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    assert f"{db}: damaged (1 problem)" in checked.stdout and "malformed" in checked.stdout
    found = seq.check_record()
    assert not found.ok and found.problems and found.evals is None
    assert json.loads(run_cli("record", "check", "--json").stdout)["ok"] is False
