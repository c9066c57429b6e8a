"""`seq benchmark compare`: two versions of a benchmark, one policy, the same episodes."""

from __future__ import annotations

import json

from conftest import run_cli

import seq


def test_two_versions_that_agree_are_within_threshold(toy_file):
    seq.deploy(toy_file)
    toy_file.write_text(toy_file.read_text() + "\n# a port that computes the same\n")
    seq.deploy(f"{toy_file}:Line")
    report = seq.compare_benchmarks("line@v1", "line@v2", "line-controller", seeds=list(range(39)), envs=2)
    assert report.benchmark == "line@v1 vs line@v2"
    comparison = report.comparison("success")
    # 73 agreeing conditions or more: repeated trials of one condition would not count as new pairs
    assert comparison.n == 78 and comparison.verdict == "within threshold"


def test_compare_reads_two_finished_evals_on_the_command_line(toy_file):
    seq.deploy(toy_file)
    first = seq.eval.run("line-controller", benchmark="line", envs=1).eval_id
    second = seq.eval.run("line-controller", benchmark="line", envs=1, params={"noise": "0.5"}).eval_id
    result = run_cli("benchmark", "compare", "--evals", first, "--evals", second, "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    success = next(
        c for c in data["comparisons"] if c["kind"] == "overall" and c["comparison"]["metric"] == "success"
    )
    assert success["comparison"]["n"] == 6
    assert run_cli("benchmark", "compare", "--evals", first).returncode == 2


def test_compare_picks_tasks_and_seeds_and_names_the_adapter(toy_file):
    seq.deploy(toy_file)
    result = run_cli("benchmark", "compare", "line", "line", "--policy", "line-controller", "--tasks", "near",
                     "--seeds", "0-2", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    success = next(
        c for c in data["comparisons"] if c["kind"] == "overall" and c["comparison"]["metric"] == "success"
    )
    assert success["comparison"]["n"] == 3
    suite = run_cli("benchmark", "compare", "line", "line", "--policy", "line-controller", "--suite", "hard")
    assert suite.returncode == 2 and "--suite hard: benchmark 'line' has no such suite" in suite.stderr
    missing = run_cli("benchmark", "compare", "line", "line", "--policy", "line-controller",
                      "--adapter", "no-such-adapter")
    assert missing.returncode == 2 and "no-such-adapter" in missing.stderr
