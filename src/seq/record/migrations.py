"""Bring a record written by an older seq up to the current schema, one version at a time.

The version is SQLite's `PRAGMA user_version`: 0 for a record of seq before versioning (whatever
its tables held then), then 1, 2, … Each step is frozen: it reads and writes the layout of its own
two versions (never the current types), runs in the same transaction as the others, and keeps
every eval (nothing is dropped). A record newer than this seq is refused, not guessed at.

To change the schema: edit `seq.record.schema`, bump `SCHEMA_VERSION` and add the step from the
previous version here, with a test that opens a record of that version.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.record.schema import COLUMNS, SCHEMA, SCHEMA_VERSION

# Version 1: the tables as seq wrote them last without a version (git ac28b40).
V1_TABLES = """
CREATE TABLE IF NOT EXISTS versions (
    kind TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL,
    sha256 TEXT NOT NULL, ref TEXT NOT NULL, declared TEXT NOT NULL,
    created_at REAL NOT NULL, removed_at REAL,
    PRIMARY KEY (kind, name, version)
);
CREATE TABLE IF NOT EXISTS evals (
    id TEXT PRIMARY KEY, created_at REAL NOT NULL, status TEXT NOT NULL,
    policy TEXT NOT NULL, policy_version INTEGER NOT NULL,
    benchmark TEXT NOT NULL, benchmark_version INTEGER NOT NULL,
    arguments TEXT NOT NULL, manifest TEXT NOT NULL,
    wall_s REAL NOT NULL DEFAULT 0, setup_cpu_s REAL NOT NULL DEFAULT 0, finished_at REAL,
    runner TEXT
);
CREATE TABLE IF NOT EXISTS items (
    eval_id TEXT NOT NULL, item_id TEXT NOT NULL, ordinal INTEGER NOT NULL,
    condition TEXT NOT NULL, trial INTEGER NOT NULL, arm TEXT NOT NULL DEFAULT '',
    claimed_by TEXT, claimed_at REAL,
    PRIMARY KEY (eval_id, item_id)
);
CREATE TABLE IF NOT EXISTS episodes (
    eval_id TEXT NOT NULL, item_id TEXT NOT NULL, status TEXT NOT NULL,
    metrics TEXT NOT NULL, steps INTEGER NOT NULL, seed INTEGER NOT NULL,
    duration_s REAL NOT NULL, cpu_s REAL NOT NULL, queries INTEGER NOT NULL,
    ended_by TEXT NOT NULL, error TEXT, finished_at REAL NOT NULL, artifacts TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (eval_id, item_id)
);
CREATE TABLE IF NOT EXISTS scores (
    eval_id TEXT NOT NULL, arm TEXT NOT NULL, group_kind TEXT NOT NULL, group_name TEXT NOT NULL,
    values_json TEXT, error TEXT,
    PRIMARY KEY (eval_id, arm, group_kind, group_name)
);
"""


def _statements(script: str) -> list[str]:
    return [part.strip() for part in script.split(";") if part.strip()]


def _to_1(db: sqlite3.Connection) -> None:
    """An unversioned record: create the tables it lacks and add each column added since it was
    written, with its default (a record of the first seq has no `arm`, `artifacts`, `runner`…)."""
    wanted = sqlite3.connect(":memory:")
    wanted.executescript(V1_TABLES)
    for statement in _statements(V1_TABLES):
        db.execute(statement)
    tables = [row[0] for row in wanted.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for table in tables:
        have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        for _, name, kind, not_null, default, _ in wanted.execute(f"PRAGMA table_info({table})"):
            if name in have:
                continue
            column = f"{name} {kind}" + (f" DEFAULT {default}" if default is not None else "")
            if not_null and default is not None:
                column += " NOT NULL"
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
    wanted.close()


V2_ARGUMENTS: dict[str, Any] = {
    "envs": None,
    "envs_per_worker": 1,
    "suites": [],
    "tasks": None,
    "seeds": None,
    "max_steps": None,
    "trials": 1,
    "threshold": 0.05,
    "record": None,
    "trajectories": False,
    "observers": [],
    "sequential": None,
    "serve": None,
    "adapter": None,
    "allow_cpu": False,
}
V2_MANIFEST: dict[str, Any] = {
    "adapter": None,
    "seeds": [],
    "parameters": {},
    "default_max_steps": None,
    "declared": {},
    "workers": None,
    "envs_per_worker": None,
    "gpu": None,
    "image": None,
    "assets": None,
    "secrets": None,
    "memory": None,
    "environment": None,
    "sequential": None,
}
V2_ARM: dict[str, Any] = {
    "params": {},
    "parameters": {},
    "in_memory": None,
    "policy_url": None,
    "protocol": "seq",
    "adapter": None,
    "observation": None,
}


def _v2_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """Every key of version 2; a record from before arms gets its one arm from `policy`/`params`."""
    arguments = dict(arguments)
    if "arms" not in arguments:
        params = arguments.pop("params", None) or {}
        given = {key: str(value) for key, value in params.items()}
        arguments["arms"] = [{"name": "", "policy": arguments.pop("policy", ""), "params": given}]
    return {
        "arms": arguments.pop("arms"),
        "benchmark": arguments.pop("benchmark", ""),
        **V2_ARGUMENTS,
        **arguments,
    }


def _v2_manifest(manifest: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Every key of version 2 (the workers' entries null until written); a record from before
    arms gets its one arm from the manifest's `policy` and `parameters`."""
    manifest = dict(manifest)
    if "arms" not in manifest:
        policy = manifest.get("policy", {})
        manifest["arms"] = [
            {
                "name": "",
                "policy": f"{policy.get('name')}@v{policy.get('version')}",
                "policy_name": policy.get("name"),
                "policy_version": policy.get("version"),
                "policy_sha256": policy.get("sha256"),
                "params": arguments["arms"][0]["params"] if arguments["arms"] else {},
                "parameters": manifest.get("parameters", {}),
            }
        ]
    manifest["arms"] = [{**V2_ARM, **arm} for arm in manifest["arms"]]
    for arm in manifest["arms"]:
        arm["parameters"] = dict(arm["parameters"])
        arm["parameters"].setdefault("eval", {"steps_per_query": None})  # before eval.steps_per_query
    return {**V2_MANIFEST, **manifest}


def _to_2(db: sqlite3.Connection) -> None:
    """The JSON columns `arguments` and `manifest` hold every key of their type, so that they are
    read strictly (`seq.record.typed`); tables are unchanged."""
    rows = db.execute("SELECT id, arguments, manifest FROM evals").fetchall()
    for eval_id, arguments_text, manifest_text in rows:
        arguments = _v2_arguments(json.loads(arguments_text))
        manifest = _v2_manifest(json.loads(manifest_text), arguments)
        db.execute(
            "UPDATE evals SET arguments = ?, manifest = ? WHERE id = ?",
            (json.dumps(arguments), json.dumps(manifest), eval_id),
        )


# Version 3: episodes numbered by attempt (the key is the item and the attempt) and told apart by
# whose failure an error is.
V3_EPISODES = """
CREATE TABLE episodes_v3 (
    eval_id TEXT NOT NULL, item_id TEXT NOT NULL, status TEXT NOT NULL,
    metrics TEXT NOT NULL, steps INTEGER NOT NULL, seed INTEGER NOT NULL,
    duration_s REAL NOT NULL, cpu_s REAL NOT NULL, queries INTEGER NOT NULL,
    ended_by TEXT NOT NULL, error TEXT, finished_at REAL NOT NULL, artifacts TEXT NOT NULL DEFAULT '{}',
    attempt INTEGER NOT NULL DEFAULT 1, failure TEXT,
    PRIMARY KEY (eval_id, item_id, attempt)
)
"""
V2_EPISODE_COLUMNS = (
    "eval_id, item_id, status, metrics, steps, seed, duration_s, cpu_s, queries, ended_by, error, "
    "finished_at, artifacts"
)


def _to_3(db: sqlite3.Connection) -> None:
    """Episodes gain `attempt` (1 for every row so far; part of the key) and `failure`. A row that
    errored because its policy server was unreachable is an infrastructure failure (its item is
    unfinished again, so `--resume` runs it), and an eval holding such a row that said `completed`
    says `incomplete`; other errors stay unclassified (None)."""
    db.execute(V3_EPISODES)
    db.execute(
        f"INSERT INTO episodes_v3 ({V2_EPISODE_COLUMNS}, attempt, failure) "
        f"SELECT {V2_EPISODE_COLUMNS}, 1, CASE WHEN status = 'error' AND ended_by = 'server_unreachable' "
        "THEN 'infrastructure' END FROM episodes"
    )
    db.execute("DROP TABLE episodes")
    db.execute("ALTER TABLE episodes_v3 RENAME TO episodes")
    db.execute(
        "UPDATE evals SET status = 'incomplete' WHERE status = 'completed' AND EXISTS "
        "(SELECT 1 FROM episodes e WHERE e.eval_id = evals.id AND e.failure = 'infrastructure')"
    )



# Version 4: leases (which runner holds an eval, and its heartbeat) and the error that failed an eval.
V4_LEASES = """
CREATE TABLE IF NOT EXISTS leases (
    eval_id TEXT NOT NULL, holder TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,
    pid_scope TEXT, process_start TEXT, acquired_at REAL NOT NULL, heartbeat_at REAL NOT NULL,
    PRIMARY KEY (eval_id, holder)
)
"""


def _to_4(db: sqlite3.Connection) -> None:
    """Add `leases` and `evals.error`. A running eval's `runner` (`host:pid`) becomes its lease,
    with the migration as its heartbeat: a runner of an older seq still alive on this host keeps
    the eval running; one elsewhere, which beats no heartbeat, lapses like any silent runner."""
    db.execute(V4_LEASES)
    if "error" not in {row[1] for row in db.execute("PRAGMA table_info(evals)")}:
        db.execute("ALTER TABLE evals ADD COLUMN error TEXT")
    now = time.time()
    for eval_id, runner in db.execute(
        "SELECT id, runner FROM evals WHERE status = 'running' AND runner LIKE '%:%'"
    ).fetchall():
        host, _, pid = runner.rpartition(":")
        if pid.isdigit():
            db.execute(
                "INSERT OR IGNORE INTO leases (eval_id, holder, host, pid, acquired_at, heartbeat_at) "
                "VALUES (?, '', ?, ?, ?, ?)",
                (eval_id, host, int(pid), now, now),
            )


# Version 5: scheduled evals (`seq eval schedule`) and each time one fired.
V5_SCHEDULES = """
CREATE TABLE IF NOT EXISTS schedules (
    id INTEGER PRIMARY KEY, policy TEXT NOT NULL, benchmark TEXT NOT NULL, every TEXT NOT NULL,
    trials INTEGER NOT NULL, max_core_hours REAL, options TEXT NOT NULL, enabled INTEGER NOT NULL,
    created_at REAL NOT NULL, anchor_at REAL NOT NULL, seen_version INTEGER,
    UNIQUE (policy, benchmark, every)
);
CREATE TABLE IF NOT EXISTS schedule_runs (
    schedule_id INTEGER NOT NULL, started_at REAL NOT NULL, due_at REAL NOT NULL,
    missed INTEGER NOT NULL, cause TEXT NOT NULL, policy_version INTEGER, eval_id TEXT,
    status TEXT NOT NULL, core_s REAL NOT NULL, finished_at REAL, note TEXT,
    PRIMARY KEY (schedule_id, started_at)
)
"""


# Version 6: the files of what an eval's processes printed, and each benchmark version's check.
V6_LOGS = """
CREATE TABLE IF NOT EXISTS logs (
    eval_id TEXT NOT NULL, stream TEXT NOT NULL, side TEXT NOT NULL, instance INTEGER NOT NULL,
    path TEXT NOT NULL, started_at REAL NOT NULL, ended_at REAL,
    PRIMARY KEY (eval_id, stream)
);
CREATE TABLE IF NOT EXISTS checks (
    name TEXT NOT NULL, version INTEGER NOT NULL, status TEXT NOT NULL, output TEXT NOT NULL,
    figures TEXT NOT NULL, error TEXT, checked_at REAL NOT NULL,
    PRIMARY KEY (name, version)
)
"""


def _to_5_schedules(db: sqlite3.Connection) -> None:
    """Add `schedules` and `schedule_runs`, empty: no eval of an older record was scheduled."""
    for statement in _statements(V5_SCHEDULES):
        db.execute(statement)


def _to_6_logs(db: sqlite3.Connection) -> None:
    """Add `logs` and `checks`, empty: evals run before kept no logs, versions deployed before
    were not checked."""
    for statement in _statements(V6_LOGS):
        db.execute(statement)


# Each step is keyed by the version it starts from. Renumbering a step is moving its key.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    0: _to_1,
    1: _to_2,
    2: _to_3,
    3: _to_4,
    4: _to_5_schedules,
    5: _to_6_logs,
}


def user_version(db: sqlite3.Connection, schema: str = "main") -> int:
    return db.execute(f"PRAGMA {schema}.user_version").fetchone()[0]


def check_readable(version: int, path: Path | str) -> None:
    """Refuse a record newer than this seq: its meaning is not ours to guess."""
    if version > SCHEMA_VERSION:
        raise SeqInputError(
            f"{path}: the record has schema version {version}, written by a newer seq; this seq "
            f"reads versions up to {SCHEMA_VERSION} (upgrade seq to open it)."
        )


def migrate(db: sqlite3.Connection, path: Path | str) -> int:
    """Bring the record open on `db` (autocommit) to `SCHEMA_VERSION` in one transaction; a
    fresh file gets the current schema. Returns the version it had."""
    found = user_version(db)
    check_readable(found, path)
    if found == SCHEMA_VERSION:
        return found
    db.execute("BEGIN IMMEDIATE")  # one process migrates; the others wait, then see it done
    try:
        found = version = user_version(db)
        check_readable(found, path)
        empty = not db.execute("SELECT 1 FROM sqlite_master WHERE type='table'").fetchone()
        if empty:
            for statement in _statements(SCHEMA):
                db.execute(statement)
            version = SCHEMA_VERSION
        while version < SCHEMA_VERSION:
            MIGRATIONS[version](db)
            version += 1
        check_layout(db, path)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return found


def check_layout(db: sqlite3.Connection, path: Path | str) -> None:
    """Refuse a record whose tables lack a column of this schema version."""
    for table, names in COLUMNS.items():
        have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        missing = [name for name in names if name not in have]
        if missing:
            raise SeqInputError(
                f"{path}: table {table} lacks column(s) {', '.join(missing)} after migration."
            )
