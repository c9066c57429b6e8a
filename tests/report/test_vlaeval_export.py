"""`seq eval export --format vla-eval`: vla-eval's own result tools read what seq writes."""

from __future__ import annotations

import json

import pytest
from conftest import refused_in_one_line, run_cli

import seq

collector = pytest.importorskip("vla_eval.results.collector")


def test_vla_eval_s_own_aggregation_agrees_with_the_exported_file(tmp_path, toy_file, capsys):
    from vla_eval.cli.smoke import _errored_episodes
    from vla_eval.results.export import print_export_summary

    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", trajectories=True, envs=2)
    files = seq.eval.export(report.eval_id, tmp_path / "out", format="vla-eval")
    assert list(files.values()) == [tmp_path / "out" / "line_aggregate.json"]
    aggregate = json.loads(files["line"].read_text())

    assert aggregate["benchmark"] == "line" and aggregate["eval_id"] == report.eval_id
    assert aggregate["num_episodes_total"] == 6 and aggregate["num_errors"] == 0
    assert aggregate["mean_success"] == round(report.metric("success").value, 4)
    for task in aggregate["tasks"]:  # vla-eval's collector computes the same task entries
        assert collector._build_task_result(task["task"], task["episodes"], aggregate["metric_keys"]) == task
    assert [t["task"] for t in aggregate["tasks"]] == ["near", "far"]
    first = aggregate["tasks"][0]["episodes"][0]
    assert first["episode_id"] == 0 and first["seed"] == 0 and first["suite"] == "easy"

    steps = (
        (tmp_path / "out" / "episodes" / "line" / "task0000_ep0000_success.jsonl").read_text().splitlines()
    )
    rows = [json.loads(line) for line in steps]
    assert len(rows) == first["steps"] and rows[0]["step"] == 0 and rows[-1]["done"] is True
    assert {"reward", "action", "act_seed"} <= rows[0].keys()

    assert _errored_episodes(aggregate) == []
    print_export_summary([aggregate])
    printed = capsys.readouterr().out
    assert "Benchmark: line" in printed and "near" in printed


def test_errored_episodes_count_as_vla_eval_counts_them(tmp_path, toy_file):
    from vla_eval.cli.smoke import _errored_episodes

    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line-errors", envs=2)
    (path,) = seq.eval.export(report.eval_id, tmp_path, format="vla-eval").values()
    aggregate = json.loads(path.read_text())
    errored = [e for e in report.episodes if e.status == "error"]
    assert aggregate["num_errors"] == len(errored) > 0
    lines = _errored_episodes(aggregate)
    assert len(lines) == len(errored) and any("this task cannot be built" in line for line in lines)
    boom = next(t for t in aggregate["tasks"] if t["task"] == "boom-reset")
    assert boom["mean_success"] == 0.0 and all(e["metrics"]["success"] is False for e in boom["episodes"])


def test_the_cli_exports_either_format_and_refuses_another(tmp_path, toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", envs=2)
    done = run_cli("eval", "export", report.eval_id, "-o", str(tmp_path / "vla"), "--format", "vla-eval")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "vla" / "line_aggregate.json").is_file()
    assert not (tmp_path / "vla" / "episodes").exists()  # no trajectories were recorded
    refused_in_one_line(run_cli("eval", "export", report.eval_id, "--format", "csv"), "--format", "vla-eval")
