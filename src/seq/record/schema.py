"""The record's current schema: its tables, their columns in order, and its version.

A change to a table or to what a JSON column holds bumps `SCHEMA_VERSION` and adds the step that
brings a record of the previous version up to it (`seq.record.migrations`). Every statement names
its columns (`COLUMNS`), so nothing depends on the order in which a migration added them.

`evals.runner` is the process that last ran the eval (`host:pid`), `evals.error` the exception
that failed it; whether a runner holds the eval now is the `leases` table's (`seq.record.lease`).
`schedules` and `schedule_runs` are the scheduled evals and each time one fired
(`seq.record.schedules`); `logs` names each file of what an eval's processes printed
(`seq.record.logs`); `checks` holds each benchmark version's check at deploy (`seq.record.checks`).
"""

from __future__ import annotations

SCHEMA_VERSION = 6

SCHEMA = """
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
    runner TEXT, error TEXT
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
    attempt INTEGER NOT NULL DEFAULT 1, failure TEXT,
    PRIMARY KEY (eval_id, item_id, attempt)
);
CREATE TABLE IF NOT EXISTS scores (
    eval_id TEXT NOT NULL, arm TEXT NOT NULL, group_kind TEXT NOT NULL, group_name TEXT NOT NULL,
    values_json TEXT, error TEXT,
    PRIMARY KEY (eval_id, arm, group_kind, group_name)
);
CREATE TABLE IF NOT EXISTS leases (
    eval_id TEXT NOT NULL, holder TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,
    pid_scope TEXT, process_start TEXT, acquired_at REAL NOT NULL, heartbeat_at REAL NOT NULL,
    PRIMARY KEY (eval_id, holder)
);
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
);
CREATE TABLE IF NOT EXISTS logs (
    eval_id TEXT NOT NULL, stream TEXT NOT NULL, side TEXT NOT NULL, instance INTEGER NOT NULL,
    path TEXT NOT NULL, started_at REAL NOT NULL, ended_at REAL,
    PRIMARY KEY (eval_id, stream)
);
CREATE TABLE IF NOT EXISTS checks (
    name TEXT NOT NULL, version INTEGER NOT NULL, status TEXT NOT NULL, output TEXT NOT NULL,
    figures TEXT NOT NULL, error TEXT, checked_at REAL NOT NULL,
    PRIMARY KEY (name, version)
);
"""

COLUMNS: dict[str, tuple[str, ...]] = {
    "versions": ("kind", "name", "version", "sha256", "ref", "declared", "created_at", "removed_at"),
    "evals": (
        "id",
        "created_at",
        "status",
        "policy",
        "policy_version",
        "benchmark",
        "benchmark_version",
        "arguments",
        "manifest",
        "wall_s",
        "setup_cpu_s",
        "finished_at",
        "runner",
        "error",
    ),
    "items": ("eval_id", "item_id", "ordinal", "condition", "trial", "arm", "claimed_by", "claimed_at"),
    "episodes": (
        "eval_id",
        "item_id",
        "status",
        "metrics",
        "steps",
        "seed",
        "duration_s",
        "cpu_s",
        "queries",
        "ended_by",
        "error",
        "finished_at",
        "artifacts",
        "attempt",
        "failure",
    ),
    "scores": ("eval_id", "arm", "group_kind", "group_name", "values_json", "error"),
    "leases": (
        "eval_id",
        "holder",
        "host",
        "pid",
        "pid_scope",
        "process_start",
        "acquired_at",
        "heartbeat_at",
    ),
    "schedules": (
        "id",
        "policy",
        "benchmark",
        "every",
        "trials",
        "max_core_hours",
        "options",
        "enabled",
        "created_at",
        "anchor_at",
        "seen_version",
    ),
    "schedule_runs": (
        "schedule_id",
        "started_at",
        "due_at",
        "missed",
        "cause",
        "policy_version",
        "eval_id",
        "status",
        "core_s",
        "finished_at",
        "note",
    ),
    "logs": ("eval_id", "stream", "side", "instance", "path", "started_at", "ended_at"),
    "checks": ("name", "version", "status", "output", "figures", "error", "checked_at"),
}


def columns(table: str, prefix: str = "") -> str:
    """`a, b, c`: the table's columns, each with `prefix` (such as `o.`)."""
    return ", ".join(prefix + name for name in COLUMNS[table])


def insert(table: str, given: tuple[str, ...] | None = None, verb: str = "INSERT") -> str:
    """`INSERT INTO t (a, b) VALUES (?, ?)` for the `given` columns (default: all of them)."""
    names = given or COLUMNS[table]
    return f"{verb} INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})"


def select(table: str, alias: str = "") -> str:
    """`SELECT a, b, c FROM t [alias]`."""
    prefix = f"{alias}." if alias else ""
    return f"SELECT {columns(table, prefix)} FROM {table}" + (f" {alias}" if alias else "")
