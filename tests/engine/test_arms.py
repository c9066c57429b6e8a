"""Arms: several policies (or parameter values) on the same episodes, compared pair by pair."""

from __future__ import annotations

import pytest
from conftest import run_cli

import seq


def test_a_policy_against_itself_is_within_threshold_once_enough_conditions_agree(toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", vs="line-controller", seeds=range(40), envs=2)
    assert report.arms == ["A", "B"] and report.done == 2 * 80
    comparison = report.comparison("success")
    assert comparison.n == 80 and comparison.table.only_a == comparison.table.only_b == 0
    assert comparison.verdict == "within threshold"  # Tango's interval: 73 agreeing pairs or more
    assert comparison.difference.difference == 0.0
    # too few pairs for equivalence in one task: undecided, flagged
    assert report.comparison("success", kind="task", group="near").verdict == "undecided"
    assert report.group("overall", "all", arm="B").metrics[0].n == 80


def test_trials_of_a_deterministic_policy_are_not_pairs_of_evidence(toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", vs="line-controller", trials=13, envs=2)
    comparison = report.comparison("success")
    assert comparison.n == 78 and comparison.conditions == 6 and comparison.effective_n == 6
    assert comparison.verdict == "undecided"  # 78 copies of 6 agreeing pairs are 6 pairs
    assert report.trials.identical and report.trials.conditions == 6 and report.trials.arms == 2


def test_a_sweep_runs_one_arm_per_value_on_the_same_episodes(toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run(
        "line-controller", benchmark="line", tasks=["far"], envs=2, sweep={"policy.chunk": ["1", "4"]}
    )
    assert report.arms == ["chunk=1", "chunk=4"]
    queries = {e.arm: e.queries for e in report.episodes if e.seed == 0}
    assert queries["chunk=4"] < queries["chunk=1"]
    assert {e.pair_key for e in report.episodes if e.arm == "chunk=1"} == {
        e.pair_key for e in report.episodes if e.arm == "chunk=4"
    }
    steps = report.comparison("steps")
    assert steps.p_value is None and steps.table is None  # continuous: bootstrap, no McNemar


def test_vs_on_the_command_line_prints_the_paired_table(toy_file):
    assert run_cli("deploy", str(toy_file)).returncode == 0
    result = run_cli(
        "eval",
        "run",
        "line-controller",
        "--benchmark",
        "line",
        "--param",
        "noise=0.0",
        "--vs",
        "line-controller",
        "--vs-param",
        "noise=0.5",
        "--envs",
        "2",
    )
    assert result.returncode == 0, result.stderr
    assert "Paired comparisons against arm noise=0.0" in result.stdout
    assert "both/A only/B only/neither" in result.stdout
    words = " ".join(result.stdout.split())
    assert "with every pair agreeing that takes 73 pairs" in words and "from 38 agreeing pairs" in words
    assert "Across tasks" in result.stdout and "P(improvement)" in result.stdout


def test_compare_two_evals_and_export(toy_file, tmp_path):
    seq.deploy(toy_file)
    first = seq.eval.run("line-controller", benchmark="line", envs=2)
    second = seq.eval.run("line-controller", benchmark="line", envs=2, params={"noise": "0.3"})
    comparison = seq.eval.compare(first.eval_id, second.eval_id)
    assert comparison.arms == [f"A {first.eval_id}", f"B {second.eval_id}"]
    assert comparison.comparison("success").n == 6
    files = seq.eval.export(first.eval_id, tmp_path / "out")
    assert len(files["episodes"].read_text().splitlines()) == 6
    assert files["unfinished"].read_text().strip() == "[]"
    with pytest.raises(seq.SeqInputError, match="no eval has id"):
        seq.eval.compare(first.eval_id, "ev-nope")


def test_sweeping_a_parameter_also_set_with_param_is_refused(toy_file):
    seq.deploy(toy_file)
    with pytest.raises(seq.SeqInputError, match="also set with --param"):
        seq.eval.run(
            "line-controller",
            benchmark="line",
            params={"policy.chunk": "2"},
            sweep={"policy.chunk": ["1", "4"]},
        )


def test_sequential_comparison_stops_early_when_one_arm_is_clearly_better(toy_file):
    seq.deploy(toy_file)
    kwargs = dict(
        benchmark="line",
        params={"noise": "0.0"},
        vs="line-controller",
        vs_params={"noise": "0.5"},
        tasks=["far"],
        seeds=range(90),  # distinct conditions: repeated trials of a few would be counted once
        trials=1,
        envs=2,
        sequential=True,
    )
    report = seq.eval.run("line-controller", **kwargs)
    decision = report.sequential
    assert decision.decision == "A better"
    assert decision.pairs_used < decision.pairs_planned == 90
    assert report.done == 2 * decision.pairs_used and not report.partial
    assert decision.interval["high"] < 0  # B − A, valid under the stopping rule
    again = seq.eval.run("line-controller", **kwargs)
    assert again.sequential.pairs_used == decision.pairs_used  # a rerun stops at the same point


def test_sequential_comparison_of_a_policy_with_itself_ends_within_threshold(toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run(
        "line-controller", benchmark="line", vs="line-controller", seeds=range(50), trials=2, envs=2,
        sequential=True,
    )  # fmt: skip
    assert report.sequential.decision == "within threshold"
    assert report.comparison("success").verdict == "within threshold"


def test_sequential_needs_two_arms(toy_file):
    seq.deploy(toy_file)
    with pytest.raises(seq.SeqInputError, match="compares two arms"):
        seq.eval.run("line-controller", benchmark="line", sequential=True)


def test_dry_run_shows_each_arms_values_and_where_they_came_from(toy_file):
    seq.deploy(toy_file)
    plan = seq.eval.dry_run(
        "line-controller",
        benchmark="line",
        sweep={"policy.noise": ["0.0", "0.2"]},
        params={"chunk": "2"},
        vs="line-controller",
        vs_params={"noise": "0.3"},
    )
    assert plan["episodes"] == 18 and [arm["episodes"] for arm in plan["arms"]] == [6, 6, 6]
    first = plan["arms"][0]["parameters"]
    assert first["policy.noise"] == {"value": 0.0, "from": "--sweep"}
    assert first["policy.chunk"] == {"value": 2, "from": "--param"}
    # each value names the flag that set it (it said "--param/--sweep" of a --vs-param value)
    assert plan["arms"][2]["parameters"]["policy.noise"] == {"value": 0.3, "from": "--vs-param"}
    assert first["benchmark.delay"] == {"value": 0.0, "from": "benchmark default"}
    assert plan["arms"][0]["max_policy_queries"] == 6 * 60  # no steps_per_query: one query a step at most
    assert seq.eval.ls() == []  # nothing stored


def test_a_policy_asks_for_the_benchmark_setup_values_it_needs_and_a_given_value_wins(toy_file):
    seq.deploy(toy_file)

    @seq.policy(name="asks-for-delay")
    class AsksForDelay(seq.Policy):
        benchmark_parameters = {"delay": "0.001", "not_a_setup_parameter": "1"}

        @seq.infer
        def infer(self, obs, *, seed=None):
            return [0.0]

    asked = seq.eval.dry_run(AsksForDelay(), benchmark="line")["arms"][0]["parameters"]
    assert asked["benchmark.delay"] == {"value": 0.001, "from": "asked by asks-for-delay@v1"}
    assert not any("not_a_setup_parameter" in name for name in asked)
    given = seq.eval.dry_run(AsksForDelay(), benchmark="line", params={"delay": "0.0"})
    assert given["arms"][0]["parameters"]["benchmark.delay"] == {"value": 0.0, "from": "--param"}


def test_one_named_arm_runs_under_its_name(toy_file):
    """Seen: the work items were planned under no arm and the worker, keyed by the arm's name,
    failed every one with KeyError: ''."""
    seq.deploy(toy_file)
    report = seq.eval.run(arms=[seq.Arm("line-controller", {}, "solo")], benchmark="line", envs=1)
    assert report.arms == ["solo"] and not report.partial
    assert report.done == 6 and {e.status for e in report.episodes} == {"ok"}
