"""Requests the machine cannot serve, or that make no sense, are refused or capped in one sentence
and store nothing. Seen before: `--envs 100000 --dry-run` planned 10,000 workers and a real run of
30 tiny episodes started 30 interpreters; `--tasks ""` ran the whole default suite; a refused
shard (`--shard-id 5 --num-shards 2`) still stored its eval; a deployed file whose kept code was
deleted gave a 65-line traceback; `seq deploy` of a file calling sys.exit(0) or os._exit(0) on
import exited 0 and registered nothing."""

from __future__ import annotations

import shutil
import textwrap

import pytest
from conftest import refused_in_one_line, run_cli

import seq
from seq.engine.capacity import machine_capacity

CONDITIONS = 6  # the toy benchmark `line`: 2 tasks × 3 seeds


@pytest.fixture
def line(toy_file):
    seq.deploy(toy_file)
    return toy_file


def test_envs_past_what_the_machine_holds_are_capped_in_one_sentence(line):
    most = machine_capacity().most
    trials = most // CONDITIONS + 2  # more episodes than the machine holds workers
    planned = seq.eval.dry_run("line-controller", benchmark="line", envs=100_000, trials=trials)
    assert planned["workers"] == most
    dry = run_cli("eval", "run", "line-controller", "-b", "line", "--envs", "100000",
                  "--trials", str(trials), "--dry-run")  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    said = [line for line in dry.stderr.splitlines() if "--envs" in line]
    assert said == [
        f"seq: --envs 100000 is more than this machine holds ({machine_capacity().why}): "
        f"running {most} workers instead."
    ]
    assert f"{most} workers" in dry.stdout
    assert seq.eval.ls() == []  # a dry run stores nothing


def test_a_real_run_past_the_machine_runs_no_more_workers_than_it_holds(line):
    most = machine_capacity().most
    trials = most // CONDITIONS + 2
    report = seq.eval.run("line-controller", benchmark="line", envs=100_000, trials=trials)
    assert report.status == "completed" and len(report.episodes) == CONDITIONS * trials
    assert report.manifest.workers == most  # the workers it started


@pytest.mark.parametrize("flag", ["--tasks", "--seeds", "--suite"])
def test_an_empty_list_is_refused_not_read_as_everything(line, flag):
    refused_in_one_line(
        run_cli("eval", "run", "line-controller", "-b", "line", flag, ""), f"{flag} '' is empty"
    )
    assert seq.eval.ls() == []
    with pytest.raises(seq.SeqInputError, match="--tasks is empty"):
        seq.eval.run("line-controller", benchmark="line", tasks=[])


def test_a_refused_shard_stores_nothing(line):
    refused_in_one_line(
        run_cli("eval", "run", "line-controller", "-b", "line", "--shard-id", "5", "--num-shards", "2",
                "--eval-id", "ev-yy"),  # fmt: skip
        "--shard-id 5 --num-shards 2",
    )
    assert seq.eval.ls() == []
    listed = run_cli("eval", "ls")
    assert "ev-yy" not in listed.stdout


def test_a_version_whose_kept_code_is_gone_is_one_sentence(line, seq_home):
    shutil.rmtree(seq_home / "code")
    refused = run_cli("eval", "run", "line-controller", "-b", "line", "--seeds", "0")
    refused_in_one_line(refused, "benchmark line@v1", "is gone", f"seq deploy {line.resolve()}")
    assert seq.eval.ls() == []
    assert run_cli("deploy", str(line)).returncode == 0  # the same version, its code kept again
    assert seq.eval.run("line-controller", benchmark="line", seeds=[0], envs=1).status == "completed"


def test_a_version_whose_kept_code_was_changed_is_refused(line, seq_home):
    (kept,) = (seq_home / "code").glob("*.py")
    kept.write_text(kept.read_text() + "\nprint('changed behind the record')\n")
    refused_in_one_line(
        run_cli("eval", "run", "line-controller", "-b", "line", "--seeds", "0"),
        "benchmark line@v1", "is not what was deployed",
    )


@pytest.mark.parametrize("call", ["sys.exit(0)", "os._exit(0)", "raise SystemExit"])
def test_a_file_that_exits_on_import_is_refused_naming_it(tmp_path, call):
    path = tmp_path / "quitter.py"
    path.write_text(textwrap.dedent(f"""
        import os
        import sys

        import seq


        @seq.policy(name="quitter")
        class Quitter(seq.Policy):
            @seq.infer
            def infer(self, obs, **kwargs):
                return [0.0]


        {call}
    """))
    refused_in_one_line(run_cli("deploy", str(path)), str(path), "exits when imported")
    with pytest.raises(seq.SeqInputError, match="exits when imported"):
        seq.deploy(path)
    assert not [row for row in seq.policies() if row["name"] == "quitter"]
