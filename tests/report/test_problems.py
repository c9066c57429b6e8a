"""Errors in a report: the same error over many episodes told once, with one traceback; a report
with no episode left to count says so instead of an empty footnote."""

from __future__ import annotations

import json

from conftest import run_cli

import seq

RAISING_POLICY = """
import seq


@seq.policy(name="raising")
class Raising(seq.Policy):
    @seq.infer
    def infer(self, obs, **_):
        raise RuntimeError("this policy always fails")
"""


def test_the_same_error_over_several_episodes_is_told_once(toy_file, tmp_path):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line-errors", envs=2)
    markdown = tmp_path / "report.md"
    result = run_cli("eval", "report", report.eval_id, "--markdown", str(markdown))
    assert result.returncode == 0, result.stderr
    headline = "2 episodes: RuntimeError: this task cannot be built (first at task boom-reset seed 0)"
    for text in (result.stdout, markdown.read_text()):
        assert headline in text
        assert text.count('raise RuntimeError("this task cannot be built")') == 1  # one traceback
        assert "1 episode timed out (first at task hang seed 0): stopped after" in text
    as_json = json.loads(run_cli("eval", "report", report.eval_id, "--json").stdout)
    grouped = {g["summary"]: g for g in as_json["problem_groups"]}
    built = grouped["RuntimeError: this task cannot be built"]
    assert built["count"] == 2 and built["headline"] == headline
    assert sorted(built["where"]) == sorted(
        p["where"] for p in as_json["problems"] if "cannot be built" in p["message"]
    )


def test_a_report_where_every_episode_errored_says_so(toy_file, tmp_path):
    seq.deploy(toy_file)
    policy = tmp_path / "raising.py"
    policy.write_text(RAISING_POLICY)
    seq.deploy(policy)
    run_cli("eval", "run", "raising", "--benchmark", "line", "--tasks", "near", "--envs", "1")
    eval_id = seq.eval.ls()[0]["id"]
    result = run_cli("eval", "report", eval_id)
    assert result.returncode == 0, result.stderr
    assert "95% intervals — ." not in result.stdout and "95% intervals" not in result.stdout
    assert "No episode finished without an error, so there is no metric and no interval." in result.stdout
    assert "3 episodes: RuntimeError: this policy always fails (first at task near seed 0)" in result.stdout
    assert result.stdout.count("Traceback (most recent call last)") == 1
    markdown = run_cli("eval", "report", eval_id, "--markdown", str(tmp_path / "r.md"))
    assert markdown.returncode == 0 and "95% intervals" not in (tmp_path / "r.md").read_text()
