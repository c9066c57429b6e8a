"""A metric's kind (rate: Wilson; mean: the bootstrap) holds for the whole eval: it does not flip
from group to group with the values each one happens to hold."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

import seq

KINDS_BENCH = """
import seq

SCORE = {"a": 1.0, "b": 100.0}


class Env:
    def __init__(self, task, seed):
        self.task, self.seed, self.t = task, seed, 0

    def reset(self, seed=None):
        return [0.0], {}

    def step(self, action):
        self.t += 1
        return [0.0], 0.0, False, False, {}


@seq.benchmark(
    name="kinds",
    conditions=seq.conditions(tasks=["a", "b"], seeds=range(12)),
    max_steps=5,
    metrics={"grasped": "mean", "partial": "rate"},
)
class Kinds(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return Env(variant.task, seed)

    @seq.check
    def check(self, env):
        return seq.Step(
            done=env.t >= 1,
            metrics={
                "success": 1.0,
                "score": SCORE[env.task],
                "grasped": float(env.seed % 2),
                "flag": float(env.seed % 3 == 0),
                "partial": 0.5 if env.task == "b" else 1.0,
            },
        )


@seq.policy(name="idle")
class Idle(seq.Policy):
    @seq.infer
    def infer(self, obs, **_):
        return [0.0]
"""


def methods(report: seq.Report, name: str) -> set[str]:
    return {m.method for g in report.groups for m in g.metrics if m.name == name}


def test_a_metrics_kind_holds_for_every_group_of_the_eval(tmp_path):
    path = tmp_path / "kinds_bench.py"
    path.write_text(KINDS_BENCH)
    seq.deploy(path)
    report = seq.eval.run("idle", benchmark="kinds", envs=1)
    # 1.0 in task a, 100.0 in task b: a mean everywhere; constant groups get no interval, not Wilson
    assert report.kinds["score"].kind == "mean" and report.kinds["score"].source == "values"
    assert methods(report, "score") == {"bootstrap (all values equal)", "bootstrap-bca"}
    assert report.metric("score", "task", "a").low == 1.0
    assert methods(report, "success") == {"wilson"}  # a rate by name, though every value is 1.0
    assert report.metric("success", "task", "a").low < 1.0
    assert methods(report, "grasped") == {"bootstrap-bca"}  # declared a mean, though 0/1
    assert methods(report, "flag") == {"wilson"}  # undeclared, 0/1 over the whole eval
    partial = report.kinds["partial"]  # declared a rate, but holds 0.5
    assert partial.kind == "mean" and "not every value is 0 or 1" in partial.note
    assert "wilson" not in methods(report, "partial")

    as_json = json.loads(run_cli("eval", "report", report.eval_id, "--json").stdout)
    assert as_json["kinds"]["grasped"] == {"kind": "mean", "source": "declared", "note": None}
    text = run_cli("eval", "report", report.eval_id).stdout
    assert "partial: declared a rate, but not every value is 0 or 1" in text
    assert "score is a mean by its values" in text


def test_a_bad_metrics_declaration_is_refused_in_one_sentence():
    with pytest.raises(seq.SeqInputError, match=r"metrics= maps 'x' to 'median'; expected"):

        @seq.benchmark(name="bad", conditions=seq.conditions(tasks=["t"], seeds=[0]), metrics={"x": "median"})
        class Bad(seq.Benchmark):
            @seq.reset
            def reset(self, seed, variant):
                return None

            @seq.check
            def check(self, env):
                return seq.Step(done=True)


def test_the_footer_says_which_groups_an_interval_method_holds_for(tmp_path):
    """Seen: "score (mean): BCa bootstrap, zero width (every value equal)", as though every
    group's values were equal, where only each task's are."""
    from seq.report.text import methods_lines

    path = tmp_path / "kinds_bench.py"
    path.write_text(KINDS_BENCH)
    seq.deploy(path)
    report = seq.eval.run("idle", benchmark="kinds", envs=1, tasks=["a", "b"], seeds=[0, 1, 2])
    footer = methods_lines(report)[0]
    score = footer.split("score (mean): ")[1].split(";")[0]
    assert "zero width (every value equal) in 2 of 3 groups (task a, task b)" in score
    assert "BCa bootstrap in 1 of 3 groups (overall)" in score
    assert "success (rate): Wilson score;" in footer  # one method for every group: said once


PLANS_BENCH = KINDS_BENCH.replace('"partial": 0.5 if env.task == "b" else 1.0,', '"plans": 0.0,')


def test_a_count_seq_records_is_a_mean_even_where_every_value_is_0(tmp_path):
    """Seen: a composite policy's `plans`, 0 in every episode, shown as a rate with a Wilson
    interval [0.00, 0.07]; a count is a mean (a benchmark's own declaration still wins)."""
    path = tmp_path / "kinds_bench.py"
    path.write_text(PLANS_BENCH)
    seq.deploy(path)
    report = seq.eval.run("idle", benchmark="kinds", envs=1, tasks=["a"], seeds=[0, 1, 2])
    assert report.kinds["plans"].kind == "mean"
    assert methods(report, "plans") == {"bootstrap (all values equal)"}
    assert report.metric("plans").low == report.metric("plans").high == 0.0
    assert methods(report, "flag") == {"wilson"}  # a 0/1 metric of the benchmark's: still a rate
