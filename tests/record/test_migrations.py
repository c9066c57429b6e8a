"""The record's schema version: a record of the unversioned schema (written by seq at ac28b40, in
fixtures/) opens, migrates once, and reports the same numbers; a newer one is refused."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import refused_in_one_line, run_cli

import seq
from seq.record.migrations import V1_TABLES
from seq.record.schema import COLUMNS, SCHEMA, SCHEMA_VERSION
from seq.record.typed import RecordError

FIXTURES = Path(__file__).parent / "fixtures"
BEFORE: dict[str, dict[str, Any]] = json.loads((FIXTURES / "v1_reports.json").read_text())
SINCE_V1 = ("attempt", "failure")  # episode fields added since the fixture was written (schema 3)
TOY_SHA = "459d53e05a46878eb62e5645089421d2272ab84da323534eee7b994016ee9da7"


def _old_record(seq_home: Path) -> Path:
    """The fixture record as this workspace's, with the code its versions ran (kept by hash)."""
    (seq_home / "code").mkdir(parents=True)
    shutil.copyfile(FIXTURES / "line_bench.py.txt", seq_home / "code" / f"{TOY_SHA}.py")
    shutil.copyfile(FIXTURES / "v1_record.db", seq_home / "seq.db")
    return seq_home / "seq.db"


def _numbers(report: dict[str, Any], timed: bool = True) -> dict[str, Any]:
    """What a report computes from the record's rows: counts, cost, each group's metric values
    and n, each comparison's n and difference, the problems, every episode. Intervals and
    verdicts follow from these by `seq.stats`, which may change on its own. `timed=False`
    leaves out the episodes' wall time (`duration_s`), which a rerun does not repeat."""
    groups = {
        (g["arm"], g["kind"], g["name"]): (
            g["episodes"],
            g["errors"],
            g["timed_out"],
            {
                m["name"]: (m["value"], m["n"], m["source"])
                for m in g["metrics"]
                if timed or m["name"] != "duration_s"
            },
        )
        for g in report["groups"]
    }
    comparisons = {
        (c["arm"], c["kind"], c["name"], c["comparison"]["metric"]): (
            c["comparison"]["n"],
            c["comparison"]["difference"]["difference"],
        )
        for c in report["comparisons"]
    }
    return {
        "counts": (report["status"], report["done"], report["total"], report["arms"]),
        "cost": report["cost"],
        "groups": groups,
        "comparisons": comparisons,
        "problems": [(p["where"], p["status"], p["message"]) for p in report["problems"]],
        "episodes": [{k: v for k, v in e.items() if k not in SINCE_V1} for e in report["episodes"]],
    }


def _holds(after: Any, before: Any) -> bool:
    """Whether `after` has every value of `before` (dicts may have more keys)."""
    if isinstance(before, dict):
        return isinstance(after, dict) and all(k in after and _holds(after[k], v) for k, v in before.items())
    if isinstance(before, list):
        return isinstance(after, list) and len(after) == len(before) and all(map(_holds, after, before))
    return after == before


def test_the_fixture_is_a_record_of_the_unversioned_schema():
    old = sqlite3.connect(FIXTURES / "v1_record.db")
    assert old.execute("PRAGMA user_version").fetchone()[0] == 0
    assert old.execute("SELECT COUNT(*) FROM evals").fetchone()[0] == len(BEFORE) == 5
    old.close()


def test_a_record_of_the_unversioned_schema_migrates_and_reports_the_same_numbers(seq_home):
    _old_record(seq_home)
    store = seq.Store()
    assert store.migrated_from == 0
    assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    for eval_id, before in BEFORE.items():
        after = json.loads(seq.eval.report(eval_id, store).to_json())
        assert after["schema_version"] == SCHEMA_VERSION
        assert _numbers(after) == _numbers(before), eval_id
        assert {(e["attempt"], e["failure"]) for e in after["episodes"]} <= {(1, None)}
        assert _holds(after["arguments"], before["arguments"])  # and the defaults of those added since
        assert after["arguments"]["envs_per_worker_chosen"] is False  # its count runs as stored
        assert _holds(after["manifest"], before["manifest"])  # and null for the fields added since
    sequential = seq.eval.report("ev-b5ceb390ed", store).sequential
    assert sequential is not None and sequential.pairs_used == 8
    assert seq.Store().migrated_from == SCHEMA_VERSION  # once: the next open finds it done


def test_an_eval_of_the_old_record_resumes_and_gives_the_rows_it_gave(seq_home):
    database = _old_record(seq_home)
    eval_id = "ev-67b11b7709"  # two arms, --vs with noise
    old = sqlite3.connect(database)
    dropped = old.execute("DELETE FROM episodes WHERE eval_id=? AND item_id LIKE '%seed=2%'", (eval_id,))
    assert dropped.rowcount == 4
    old.commit()
    old.close()
    assert seq.eval.report(eval_id).partial
    resumed = json.loads(seq.eval.run(resume=eval_id, envs=1).to_json())
    before = _numbers(BEFORE[eval_id], timed=False)
    after = _numbers(resumed, timed=False)
    assert after["counts"] == before["counts"] and after["groups"] == before["groups"]
    assert after["comparisons"] == before["comparisons"]

    def rows(episodes: list[dict[str, Any]]) -> list[tuple]:
        untimed = [{k: v for k, v in e["metrics"].items() if k != "duration_s"} for e in episodes]
        return [
            (e["item_id"], e["status"], e["steps"], e["seed"], e["arm"], m)
            for e, m in zip(episodes, untimed, strict=True)
        ]

    assert rows(after["episodes"]) == rows(BEFORE[eval_id]["episodes"])


def test_the_migrated_record_takes_new_evals(seq_home, toy_file):
    _old_record(seq_home)
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", tasks=["near"], seeds=[0], envs=1)
    assert report.status == "completed" and report.to_dict()["schema_version"] == SCHEMA_VERSION
    assert len(seq.eval.ls()) == len(BEFORE) + 1


def test_a_record_from_before_arms_is_read_with_its_one_arm(seq_home):
    """The first seq stored `policy` and `params` in the arguments and no `arms` in the manifest."""
    _old_record(seq_home)
    old = sqlite3.connect(seq_home / "seq.db")
    arguments = {
        "policy": "line-controller@v1",
        "benchmark": "line@v1",
        "envs": 1,
        "suites": ["default"],
        "tasks": ["near"],
        "seeds": [0],
        "max_steps": None,
        "trials": 1,
        "params": {"noise": 0.0},
    }
    manifest = {
        "seq": {"version": "0.1.0", "git_sha": None},
        "benchmark": {"name": "line", "version": 1, "sha256": TOY_SHA},
        "policy": {"name": "line-controller", "version": 1, "sha256": TOY_SHA},
        "seeds": [0],
        "parameters": {"policy": {"noise": 0.0, "chunk": 1}, "benchmark": {"delay": 0.0, "old_api": False}},
        "default_max_steps": 60,
        "declared": {},
    }
    old.execute(
        "INSERT INTO evals (id, created_at, status, policy, policy_version, benchmark, benchmark_version, "
        "arguments, manifest) VALUES ('ev-first', 0, 'completed', 'line-controller', 1, 'line', 1, ?, ?)",
        (json.dumps(arguments), json.dumps(manifest)),
    )
    old.execute(
        "INSERT INTO items (eval_id, item_id, ordinal, condition, trial) "
        """VALUES ('ev-first', 'near|seed=0', 0, '{"task": "near", "seed": 0}', 0)"""
    )
    old.commit()
    old.close()
    row = seq.Store().get_eval("ev-first")
    assert row is not None
    assert [(a.name, a.policy, a.params) for a in row.arguments.arms] == [
        ("", "line-controller@v1", {"noise": "0.0"})
    ]
    (arm,) = row.manifest.arms
    assert (arm.policy, arm.policy_version, arm.params) == ("line-controller@v1", 1, {"noise": "0.0"})
    assert arm.parameters["eval"] == {"steps_per_query": None}
    resumed = seq.eval.run(resume="ev-first", envs=1)
    assert (resumed.done, resumed.total) == (1, 1) and resumed.metric("success").value == 1.0


def test_an_older_layout_is_merged_by_column_name_and_left_as_it_was(seq_home, tmp_path):
    """Columns added by a migration come last: `arm` after `claimed_by` in a record whose items
    table was written before arms. Rows are copied by column name, never by position."""
    other = tmp_path / "shard" / "seq.db"
    other.parent.mkdir()
    old = sqlite3.connect(other)
    for statement in V1_TABLES.split(";"):
        if "CREATE TABLE IF NOT EXISTS items" in statement:
            statement = statement.replace("arm TEXT NOT NULL DEFAULT '',", "")
        if statement.strip():
            old.execute(statement)
    old.execute("ALTER TABLE items ADD COLUMN arm TEXT NOT NULL DEFAULT ''")
    source = sqlite3.connect(FIXTURES / "v1_record.db")
    tables = [row[0] for row in source.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for table in tables:  # the fixture's own tables and columns: those of version 1
        names = [row[1] for row in source.execute(f"PRAGMA table_info({table})")]
        rows = source.execute(f"SELECT {', '.join(names)} FROM {table}").fetchall()
        marks = ", ".join("?" for _ in names)
        old.executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})", rows)
    old.commit()
    order = [row[1] for row in old.execute("PRAGMA table_info(items)")]
    assert order.index("arm") > order.index("claimed_by")
    old.close()

    counts = seq.eval.merge(other)
    assert counts["evals"] == 5 and counts["episodes"] == 44
    store = seq.Store()
    arms = {row[0] for row in store._db.execute("SELECT DISTINCT arm FROM items")}
    assert arms == {"", "noise=default", "noise=0.08", "noise=0.0", "noise=0.05", "noise=0.3", "noise=0.5"}
    assert store._db.execute("SELECT COUNT(*) FROM items WHERE claimed_by IS NOT NULL").fetchone()[0] == 0
    for eval_id, before in BEFORE.items():
        assert _numbers(json.loads(seq.eval.report(eval_id, store).to_json())) == _numbers(before)
    untouched = sqlite3.connect(other)
    assert untouched.execute("PRAGMA user_version").fetchone()[0] == 0  # read through a migrated copy
    untouched.close()


def test_a_record_of_a_newer_seq_is_refused_in_one_line(seq_home):
    seq_home.mkdir(parents=True)
    newer = sqlite3.connect(seq_home / "seq.db")
    newer.executescript(SCHEMA)
    newer.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    newer.commit()
    newer.close()
    with pytest.raises(seq.SeqInputError, match="written by a newer seq"):
        seq.Store()
    refused_in_one_line(run_cli("eval", "ls"), "seq.db", f"schema version {SCHEMA_VERSION + 1}")


def test_a_manifest_takes_only_the_fields_its_type_declares(seq_home, toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", tasks=["near"], seeds=[0], envs=1)
    store = seq.Store()
    with pytest.raises(RecordError, match="unknown key 'colour'"):
        store.update_manifest(report.eval_id, colour="red")
    assert store.update_manifest(report.eval_id, workers=3).workers == 3


def test_the_column_lists_are_the_schemas_columns_in_order():
    fresh = sqlite3.connect(":memory:")
    fresh.executescript(SCHEMA)
    for table, names in COLUMNS.items():
        assert tuple(row[1] for row in fresh.execute(f"PRAGMA table_info({table})")) == names
    tables = {row[0] for row in fresh.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == set(COLUMNS)


def test_no_plane_reads_a_manifest_or_arguments_by_string_key():
    source = Path(seq.__file__).parent
    pattern = (".manifest[", ".manifest.get(", ".arguments[", ".arguments.get(")
    offending = [
        f"{path.relative_to(source)}:{number}"
        for path in source.rglob("*.py")
        if "seqbench" not in path.parts
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if any(text in line for text in pattern)
    ]
    assert offending == []


def test_a_record_of_version_2_numbers_attempts_and_reopens_evals_its_server_failures_cut_short(seq_home):
    """Version 3: episodes have an attempt (1 so far) and say whose failure an error is. An episode
    of version 2 that errored because its policy server was unreachable is the infrastructure's
    failure: its item is unfinished again, the eval that said `completed` says `incomplete`, and
    `--resume` runs that item as its second attempt."""
    from seq.record.migrations import MIGRATIONS

    database = _old_record(seq_home)
    old = sqlite3.connect(database, isolation_level=None)
    for version in (0, 1):  # bring the fixture to version 2 with the steps of that time
        MIGRATIONS[version](old)
    old.execute("PRAGMA user_version = 2")
    eval_id, item = "ev-a0fe14fd09", "far|seed=1"
    old.execute(
        "UPDATE episodes SET status='error', ended_by='server_unreachable', metrics='{}', "
        "error='the policy server at ws://127.0.0.1:9 is unreachable' WHERE eval_id=? AND item_id=?",
        (eval_id, item),
    )
    old.close()

    store = seq.Store()
    assert store.migrated_from == 2
    report = seq.eval.report(eval_id, store)
    assert (report.status, report.done, report.total) == ("incomplete", 5, 6)
    assert [(u.item_id, u.attempts) for u in report.unfinished] == [(item, 1)]
    (row,) = [r for r in store.attempts(eval_id) if r.item_id == item]
    assert (row.attempt, row.failure) == (1, "infrastructure")
    assert {(r.attempt, r.failure) for r in store.attempts(eval_id) if r.item_id != item} == {(1, None)}
    assert seq.eval.report("ev-73ff7533c7", store).status == "completed"  # its errors: unclassified

    resumed = seq.eval.run(resume=eval_id, envs=1)
    assert (resumed.status, resumed.done) == ("completed", 6)
    assert [(e.item_id, e.attempt) for e in resumed.episodes if e.attempt > 1] == [(item, 2)]
    assert len(store.attempts(eval_id)) == 7


def test_a_record_of_version_4_gains_empty_schedules_and_keeps_its_evals(seq_home):
    """Version 5 (`_to_5_schedules`): the schedules tables, empty; `v4_record.db` was written by
    seq at e6c45c2 (fixtures/make_v4_record.py)."""
    seq_home.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "v4_record.db", seq_home / "seq.db")
    old = sqlite3.connect(seq_home / "seq.db")
    assert old.execute("PRAGMA user_version").fetchone()[0] == 4
    (eval_id,) = [row[0] for row in old.execute("SELECT id FROM evals")]
    old.close()
    store = seq.Store()
    assert store.migrated_from == 4
    assert seq.schedules(store) == []
    report = seq.eval.report(eval_id, store)
    assert (report.status, report.done, report.total) == ("completed", 4, 4)
    assert report.metric("success").value == 1.0
    found = seq.trend("line-controller", "line", store=store)
    assert [point.eval_id for point in found.points] == [eval_id]


def test_a_record_of_version_4_gains_eval_logs_and_benchmark_checks(seq_home):
    """Version 6 (`_to_6_logs`): the `logs` and `checks` tables, empty (fixtures/v4_record.db,
    written by seq at e6c45c2): its eval reports as before, with no logs; its benchmark was never
    checked."""
    old = sqlite3.connect(FIXTURES / "v4_record.db")
    assert old.execute("PRAGMA user_version").fetchone()[0] == 4
    old.close()
    seq_home.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "v4_record.db", seq_home / "seq.db")
    store = seq.Store()
    assert store.migrated_from == 4
    (row,) = seq.eval.ls(store=store)
    report = seq.eval.report(row["id"], store)
    assert (report.status, report.done, report.total) == ("completed", 4, 4)
    assert list(seq.eval.logs(row["id"], store=store)) == []
    (line,) = [b for b in seq.benchmarks(store) if b["name"] == "line"]
    assert line["status"] == "unchecked" and line["check"] is None
    with pytest.raises(seq.SeqInputError, match="line@v1 was not checked"):
        seq.benchmark_logs("line", store=store)
    assert seq.eval.rm(row["id"], store=store)[0]["episodes"] == 4
