"""Shards: independent runner processes finishing one eval through the shared record."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from conftest import run_cli

import seq
from seq.engine.shards import Shard, SharedQueue


def _shard_args(index: int, count: int, *extra: str) -> list[str]:
    """`seq eval run` of shard `index` of `count` of the line benchmark's eval `ev-sharded`."""
    return [
        "eval",
        "run",
        "line-controller",
        "--benchmark",
        "line",
        "--envs",
        "1",
        "--eval-id",
        "ev-sharded",
        "--shard-id",
        str(index),
        "--num-shards",
        str(count),
        "--trials",
        "3",
        *extra,
    ]


def _shard(index: int, count: int, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", "from seq.cli import main; main()", *_shard_args(index, count, *extra)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_two_shards_started_together_do_every_item_once(toy_file):
    seq.deploy(toy_file)
    shards = [_shard(0, 2), _shard(1, 2)]
    for shard in shards:
        _, stderr = shard.communicate(timeout=120)
        assert shard.returncode == 0, stderr
    report = seq.eval.report("ev-sharded")
    assert (report.done, report.total, report.status) == (18, 18, "completed")
    assert len({e.item_id for e in report.episodes}) == 18


def test_a_killed_shard_rerun_with_the_same_id_completes_the_eval(toy_file, tmp_path):
    seq.deploy(toy_file)
    first = _shard(0, 2, "--param", "delay=0.02")
    while seq.eval.ls() == [] or seq.eval.ls()[0]["done"] < 2:
        assert first.poll() is None, first.communicate()
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    assert seq.eval.ls()[0]["done"] < 18
    files = seq.eval.export("ev-sharded", tmp_path / "partial")
    unfinished = json.loads(files["unfinished"].read_text())
    assert len(unfinished) == 18 - seq.eval.ls()[0]["done"] > 0
    for index in (0, 1):
        rerun = run_cli(*_shard_args(index, 2, "--param", "delay=0.02"))
        assert rerun.returncode == 0, rerun.stderr
    report = seq.eval.report("ev-sharded")
    assert (report.done, report.status) == (18, "completed")
    assert len({e.item_id for e in report.episodes}) == 18


def _take_all(store: seq.Store, eval_id: str, shard: Shard) -> set[str]:
    queue, taken = SharedQueue(store, eval_id, shard), set()
    while (item := queue.take(set(), set())) is not None:
        taken.add(item.item_id)
    return taken


def test_a_shard_whose_first_episodes_all_error_exits_3_and_can_hand_back_its_items(toy_file):
    seq.deploy(toy_file)
    store = seq.Store()
    unfinished = {}
    for eval_id, extra in (("ev-requeued", ("--requeue-unhealthy",)),):
        # two workers: when the third error arrives, the other worker may still hold a claimed item
        result = run_cli(
            "eval",
            "run",
            "line-controller",
            "--benchmark",
            "line-errors",
            "--tasks",
            "boom-reset",
            "--trials",
            "3",
            "--envs",
            "2",
            "--eval-id",
            eval_id,
            "--num-shards",
            "2",
            "--shard-id",
            "0",
            *extra,
        )
        assert result.returncode == 3 and "shard stopped" in result.stdout + result.stderr
        unfinished[eval_id] = {item.item_id for item in store.items(eval_id, unfinished_only=True)}
    # the other shard can take every unfinished item, the one in flight included
    assert _take_all(store, "ev-requeued", Shard(1, 2)) == unfinished["ev-requeued"]


def test_shard_arguments_must_match_the_eval(toy_file):
    seq.deploy(toy_file)
    assert (
        run_cli(
            "eval",
            "run",
            "line-controller",
            "--benchmark",
            "line",
            "--eval-id",
            "ev-x",
            "--envs",
            "1",
            "--tasks",
            "near",
        ).returncode
        == 0
    )
    other = run_cli(
        "eval",
        "run",
        "line-controller",
        "--benchmark",
        "line",
        "--eval-id",
        "ev-x",
        "--envs",
        "1",
        "--tasks",
        "far",
        "--shard-id",
        "0",
        "--num-shards",
        "2",
    )
    assert other.returncode == 2 and "other arguments" in other.stderr


def test_merge_keeps_the_last_attempt_of_every_item(toy_file, tmp_path, monkeypatch):
    first_home, second_home = tmp_path / "machine-a", tmp_path / "machine-b"
    for home, tasks in ((first_home, ["near", "far"]), (second_home, ["near", "far"])):
        monkeypatch.setenv("SEQ_HOME", str(home))
        seq.deploy(toy_file)
        seq.eval.run("line-controller", benchmark="line", tasks=tasks, envs=1, eval_id="ev-merged")
    monkeypatch.setenv("SEQ_HOME", str(tmp_path / "laptop"))
    counts = seq.eval.merge(first_home / "seq.db")
    assert counts["episodes"] == 6 and counts["evals"] == 1
    counts = seq.eval.merge(second_home / "seq.db")
    assert counts["episodes"] == 6 and counts["evals"] == 0  # the second run finished later: it wins
    report = seq.eval.report("ev-merged")
    assert (report.done, report.total, report.status) == (6, 6, "completed")
    assert run_cli("eval", "merge", str(tmp_path / "nothing.db")).returncode == 2


def test_no_save_runs_a_fixed_share_and_keeps_nothing(toy_file):
    seq.deploy(toy_file)
    shares = [
        seq.eval.run(
            "line-controller", benchmark="line", envs=1, trials=3, save=False, shard_id=k, num_shards=2
        )
        for k in (0, 1)
    ]
    assert [r.done for r in shares] == [9, 9]
    ids = [e.item_id for r in shares for e in r.episodes]
    assert len(set(ids)) == 18  # the two shares split the plan, round robin
    assert seq.eval.ls() == []  # nothing recorded
    result = run_cli("eval", "run", "line-controller", "--benchmark", "line", "--no-save", "--envs", "1")
    assert result.returncode == 0 and "6/6 episodes" in result.stdout
    assert seq.eval.ls() == []
