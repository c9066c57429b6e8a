"""The states the record keeps are stored as the texts records of older versions hold, so those
read the same and these read in an older `seq`."""

from __future__ import annotations

import sqlite3

import seq
from seq.record.states import EpisodeStatus, EvalStatus, Failure


def test_an_eval_stores_its_states_as_plain_texts(seq_home, toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run(
        "line-controller", benchmark="line-errors", tasks=["near", "boom-reset", "hang"], envs=1
    )
    assert report.status == EvalStatus.COMPLETED
    db = sqlite3.connect(seq_home / "seq.db")
    assert db.execute("SELECT status, typeof(status) FROM evals").fetchall() == [("completed", "text")]
    assert set(db.execute("SELECT DISTINCT status, failure FROM episodes")) == {
        ("ok", None),
        ("error", "benchmark"),
        ("timed_out", None),
    }
    assert set(db.execute("SELECT DISTINCT kind FROM versions")) == {("benchmark",), ("policy",)}
    episodes = seq.eval.report(report.eval_id).episodes
    assert {(e.status, e.failure) for e in episodes} == {
        (EpisodeStatus.OK, None),
        (EpisodeStatus.ERROR, Failure.BENCHMARK),
        (EpisodeStatus.TIMED_OUT, None),
    }
