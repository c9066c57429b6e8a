"""`seq record check` / `seq.check_record`: SQLite's integrity check and the schema version, with
nothing changed in the file."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from conftest import refused_in_one_line, run_cli

import seq
from seq.record.schema import SCHEMA, SCHEMA_VERSION

FIXTURES = Path(__file__).parent / "fixtures"


def test_a_sound_record_reports_its_version_and_contents(toy_file):
    seq.deploy(toy_file)
    seq.eval.run("line-controller", benchmark="line", tasks=["near"], seeds=[0, 1], envs=1)
    found = seq.check_record()
    assert found.ok and (found.schema_version, found.evals, found.episodes) == (SCHEMA_VERSION, 1, 2)
    shown = run_cli("record", "check")
    assert shown.returncode == 0, shown.stderr
    assert f"schema version {SCHEMA_VERSION} (this seq's); 1 eval, 2 episodes" in shown.stdout
    assert json.loads(run_cli("record", "check", "--json").stdout)["episodes"] == 2


def test_an_older_record_is_checked_as_it_is(tmp_path):
    old = tmp_path / "seq.db"
    shutil.copyfile(FIXTURES / "v1_record.db", old)
    before = old.read_bytes()
    found = seq.check_record(old)
    assert found.ok and found.schema_version == 0 and found.evals == 5
    assert f"this seq migrates it to {SCHEMA_VERSION} when it next opens it" in found.details()
    assert old.read_bytes() == before  # checked, not migrated


def test_a_newer_record_is_sound_and_says_whose_it_is(tmp_path):
    newer = tmp_path / "seq.db"
    db = sqlite3.connect(newer)
    db.executescript(SCHEMA)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    shown = run_cli("record", "check", str(newer))
    assert shown.returncode == 0 and "written by a newer seq" in shown.stdout


def test_damaged_pages_are_listed_and_exit_1(toy_file, seq_home):
    """A btree page whose cell count is wrong: the commands may read past it; the check does not."""
    seq.deploy(toy_file)
    seq.eval.run("line-controller", benchmark="line", tasks=["near"], seeds=[0], envs=1)
    database = seq_home / "seq.db"
    with sqlite3.connect(database) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(database.read_bytes())
    data[2 * 4096 + 3 : 2 * 4096 + 5] = (99).to_bytes(2, "big")  # page 3's cell count
    database.write_bytes(bytes(data))
    shown = run_cli("record", "check")
    assert shown.returncode == 1 and "Traceback" not in shown.stderr
    assert f"{database}: damaged (" in shown.stdout and "On tree page 3" in shown.stdout
    found = seq.check_record()
    assert not found.ok and found.problems[0].startswith("On tree page 3")


def test_a_missing_record_is_refused_in_one_line(tmp_path):
    refused_in_one_line(
        run_cli("record", "check", str(tmp_path / "nowhere.db")), "nowhere.db", "no record there"
    )
