"""`seq deploy`: the version is the content, and numbers are never reused."""

from __future__ import annotations

import pytest
from conftest import run_cli

import seq


def test_same_content_same_version_changed_content_next_number(toy_file):
    first = {d.version.name: d for d in seq.deploy(toy_file)}
    assert {name: d.version.version for name, d in first.items()} == {
        "line": 1,
        "line-errors": 1,
        "line-wedge": 1,
        "line-controller": 1,
    }
    again = {d.version.name: d for d in seq.deploy(toy_file)}
    assert again["line"].version.version == 1 and not again["line"].created
    toy_file.write_text(toy_file.read_text() + "\n# changed\n")
    changed = {d.version.name: d for d in seq.deploy(f"{toy_file}:Line")}
    assert list(changed) == ["line"] and changed["line"].version.version == 2


def test_numbers_are_not_reused_after_rm(toy_file):
    seq.deploy(toy_file)
    assert seq.remove_benchmark("line") == 1
    assert "line" not in [b["name"] for b in seq.benchmarks() if b["version"]]
    (line,) = seq.deploy(f"{toy_file}:Line")
    assert line.version.label == "line@v2"


def test_rm_of_a_builtin_or_unknown_benchmark_is_refused():
    with pytest.raises(seq.SeqInputError, match="built-in"):
        seq.remove_benchmark("metaworld")
    with pytest.raises(seq.SeqInputError, match="no deployed benchmark"):
        seq.remove_benchmark("nothing-here")


def test_deploy_prints_labels_and_what_an_eval_still_needs(tmp_path):
    source = tmp_path / "declared.py"
    source.write_text(
        "import seq\n\n"
        "@seq.benchmark(name='declared', conditions=seq.conditions(tasks=['a']), gpu='cpu', cpu=4,\n"
        "               image=seq.Image.debian_slim().uv_pip_install('mujoco==3.2.3'),\n"
        "               secrets=[seq.Secret.from_name('token')], render=seq.Record(camera='front'))\n"
        "class Declared(seq.Benchmark):\n"
        "    @seq.reset\n"
        "    def reset(self, seed, variant):\n"
        "        return None\n"
        "    @seq.check\n"
        "    def check(self, env):\n"
        "        return seq.Step(done=True)\n"
    )
    result = run_cli("deploy", str(source))
    assert result.returncode == 0, result.stderr
    assert "declared@v1" in result.stdout
    assert "secret token: not set (seq secret set token --env VAR)" in result.stdout  # needed to run it
    (row,) = seq.Store().versions("benchmark", "declared")
    assert row.declared["declared"]["image"]["steps"] == [["uv_pip_install", ["mujoco==3.2.3"]]]


def test_benchmark_ls_and_evals_on_the_command_line(toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", tasks=["near"], seeds=[0], envs=1)
    listing = run_cli("benchmark", "ls")
    assert listing.returncode == 0 and "line" in listing.stdout and report.eval_id in listing.stdout
    evals = run_cli("benchmark", "evals", "line", "--json")
    assert report.eval_id in evals.stdout
    assert run_cli("benchmark", "rm", "line").returncode == 0
    assert seq.eval.report(report.eval_id).done == 1  # its evals keep their reports
