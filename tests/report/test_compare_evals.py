"""`seq eval compare` of two evals: what it says when they ran different benchmarks or one of them
is partial."""

from __future__ import annotations

from conftest import refused_in_one_line, run_cli

import seq


def test_evals_of_different_benchmarks_are_refused_by_eval_compare_and_said_so_by_benchmark_compare(
    toy_file,
):
    seq.deploy(toy_file)
    first = seq.eval.run("line-controller", benchmark="line", envs=2)
    # (without its `crash` task, whose worker dies: that would leave the eval incomplete)
    tasks = ["near", "far", "boom-reset", "hang"]
    second = seq.eval.run("line-controller", benchmark="line-errors", envs=2, tasks=tasks)
    refused = run_cli("eval", "compare", first.eval_id, second.eval_id, env={"COLUMNS": "80"})
    refused_in_one_line(refused, "ran different benchmarks", "seq benchmark compare --evals")
    result = run_cli(
        "benchmark", "compare", "--evals", first.eval_id, "--evals", second.eval_id, env={"COLUMNS": "80"}
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    words = " ".join(result.stdout.split())
    assert "The evals ran different benchmarks (line, line-errors)" in words
    assert "--resume" not in words  # both finished: resuming would run nothing
    assert "PARTIAL: these results cover the 4 of 11 episodes that pair up" in words
