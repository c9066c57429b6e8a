"""A record written by an older seq opens, keeps its evals and takes new ones."""

from __future__ import annotations

import json
import sqlite3

import seq

OLD_ITEMS = """
CREATE TABLE items (
    eval_id TEXT NOT NULL, item_id TEXT NOT NULL, ordinal INTEGER NOT NULL,
    condition TEXT NOT NULL, trial INTEGER NOT NULL,
    PRIMARY KEY (eval_id, item_id)
);
CREATE TABLE episodes (
    eval_id TEXT NOT NULL, item_id TEXT NOT NULL, status TEXT NOT NULL,
    metrics TEXT NOT NULL, steps INTEGER NOT NULL, seed INTEGER NOT NULL,
    duration_s REAL NOT NULL, cpu_s REAL NOT NULL, queries INTEGER NOT NULL,
    ended_by TEXT NOT NULL, error TEXT, finished_at REAL NOT NULL,
    PRIMARY KEY (eval_id, item_id)
);
"""


def test_an_older_record_gains_the_new_columns_and_loses_nothing(seq_home, toy_file):
    seq_home.mkdir(parents=True)
    old = sqlite3.connect(seq_home / "seq.db")
    old.executescript(OLD_ITEMS)
    condition = json.dumps({"task": "near", "seed": 0})
    old.execute("INSERT INTO items VALUES ('ev-old', 'near|seed=0', 0, ?, 0)", (condition,))
    old.execute(
        "INSERT INTO episodes VALUES ('ev-old', 'near|seed=0', 'ok', '{\"success\": 1.0}', 9, 0, 0.1, 0.1, 9,"
        " 'check', NULL, 0.0)"
    )
    old.commit()
    old.close()

    store = seq.Store()
    columns = {row[1] for row in store._db.execute("PRAGMA table_info(items)")}
    assert {"arm", "claimed_by", "claimed_at"} <= columns
    kept = store._db.execute(
        "SELECT status, steps, artifacts FROM episodes WHERE eval_id='ev-old'"
    ).fetchone()
    assert tuple(kept) == ("ok", 9, "{}")

    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", tasks=["near"], seeds=[0], envs=1)
    assert report.status == "completed"
