"""Every command that opens the record refuses a damaged one the same way: one sentence naming the
file, exit code 2, the file left as it was. Seen before: after 40 KB of random bytes in the middle
of a record, `policy ls`, `benchmark ls` and `grid ls` printed normally (exit 0) while `eval ls`
refused; a `seq.db` that is a directory gave ~48-line tracebacks."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import refused_in_one_line, run_cli

import seq

COMMANDS = [
    ("eval", "ls"),
    ("policy", "ls"),
    ("benchmark", "ls"),
    ("grid", "ls"),
    ("adapter", "ls"),
    ("benchmark", "evals", "line"),
    ("benchmark", "logs", "line"),
]


@pytest.fixture
def record(toy_file: Path, seq_home: Path) -> tuple[Path, str]:
    """A record holding the toy's versions and one finished eval, all in the main file."""
    seq.deploy(toy_file)
    eval_id = seq.eval.run("line-controller", benchmark="line", seeds=[0, 1, 2], envs=1).eval_id
    db = seq_home / "seq.db"
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db, eval_id


def _random_bytes_inside(db: Path) -> None:
    """40 KB of random bytes at offset 20,000: the header and the first pages stay sound."""
    data = bytearray(db.read_bytes())
    assert len(data) > 60_000, "the record is too small to damage in its middle"
    data[20_000:60_000] = random.Random(36).randbytes(40_000)
    db.write_bytes(bytes(data))


def test_random_bytes_inside_the_record_are_refused_by_every_command(record, toy_file):
    db, eval_id = record
    _random_bytes_inside(db)
    before = db.read_bytes()
    for command in [*COMMANDS, ("eval", "report", eval_id), ("deploy", str(toy_file))]:
        refused_in_one_line(run_cli(*command), str(db), "the record is damaged")
    for call in (seq.policies, seq.benchmarks, seq.eval.ls):
        with pytest.raises(seq.SeqInputError, match="the record is damaged"):
            call()
    assert db.read_bytes() == before  # refused, never written to


def test_a_record_that_is_a_directory_is_one_sentence(record):
    db, _ = record
    db.unlink()
    shutil.rmtree(db.parent / "seq.db-wal", ignore_errors=True)
    db.mkdir()
    for command in COMMANDS:
        refused_in_one_line(run_cli(*command), str(db), "is a directory, not a file")
    assert db.is_dir() and not any(db.iterdir())


def test_a_record_that_is_a_link_to_nothing_is_one_sentence(seq_home):
    seq_home.mkdir(parents=True)
    (seq_home / "seq.db").symlink_to(seq_home / "gone.db")
    refused_in_one_line(run_cli("policy", "ls"), "seq.db", "a link to nothing")
    assert not (seq_home / "gone.db").exists()  # nothing created where the link points


def test_a_seq_home_that_is_a_file_is_one_sentence(tmp_path):
    home = tmp_path / "home-file"
    home.write_text("not a folder")
    refused_in_one_line(run_cli("eval", "ls", env={"SEQ_HOME": str(home)}), str(home), "must be a folder")


def test_a_sound_record_is_read_by_every_command(record):
    """The check refuses damage, not records: each command still works on a sound one."""
    for command in COMMANDS:
        result = run_cli(*command)
        assert result.returncode == 0, (command, result.stderr)
