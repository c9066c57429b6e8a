"""`seq --version`, `seq policy ls`, `seq eval ls / rm / compare`, and ids as git takes them: the
whole id is always printed, and any unique prefix of it names the eval."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from conftest import default_ctrl_c, refused_in_one_line, run_cli
from test_resume import _start_slow_eval, _wait_for_episodes

import seq


def _two_evals(toy_file) -> None:
    seq.deploy(toy_file)
    options = {"tasks": ["near"], "seeds": [0, 1], "envs": 1}
    seq.eval.run("line-controller", benchmark="line", eval_id="ev-aa11", params={"noise": 0.1}, **options)
    sweep = {"noise": [0.0, 0.2]}
    seq.eval.run("line-controller", benchmark="line", eval_id="ev-aa22", sweep=sweep, **options)


def test_version():
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.startswith(f"seq {seq.__version__}")


def test_policy_ls_lists_built_in_and_deployed_policies_with_their_parameters(toy_file):
    seq.deploy(toy_file)
    result = run_cli("policy", "ls", env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    assert "built-in" in lines["metaworld-expert"] and "noise=0.5" in lines["noisy-expert"]
    assert "v1" in lines["line-controller"] and "deployed" in lines["line-controller"]
    assert "noise=0.0" in result.stdout and "chunk=1" in result.stdout
    rows = {row["name"]: row for row in json.loads(run_cli("policy", "ls", "--json").stdout)}
    assert rows["line-controller"]["parameters"]["chunk"] == {"type": "int", "default": 1}
    assert rows == {row["name"]: row for row in seq.policies()}


def test_eval_ls_at_80_columns_prints_whole_ids_parameters_and_arms(toy_file):
    _two_evals(toy_file)
    result = run_cli("eval", "ls", env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    assert "ev-aa11" in result.stdout and "ev-aa22" in result.stdout
    assert "noise=0.1" in result.stdout
    assert "arms: noise=0.0 |" in result.stdout and "noise=0.2" in result.stdout
    (row,) = [r for r in json.loads(run_cli("eval", "ls", "--json").stdout) if r["id"] == "ev-aa22"]
    assert [arm["params"] for arm in row["arms"]] == [{"noise": "0.0"}, {"noise": "0.2"}]
    assert [r["id"] for r in seq.eval.ls(policy="line-controller")] == ["ev-aa22", "ev-aa11"]
    assert seq.eval.ls(policy="random") == []


def test_eval_ls_of_an_empty_record_says_so():
    result = run_cli("eval", "ls")
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        "No evals yet: `seq eval run` runs one.\n",
        "",
    )
    result = run_cli("eval", "ls", "random", "--benchmark", "line")
    assert (result.returncode, result.stdout) == (0, "No evals of policy 'random' and benchmark 'line'.\n")


def test_a_unique_prefix_names_an_eval_and_an_ambiguous_one_lists_the_candidates(toy_file):
    _two_evals(toy_file)
    report = run_cli("eval", "report", "ev-aa1", "--json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["eval_id"] == "ev-aa11"
    assert json.loads(run_cli("eval", "report", "aa2", "--json").stdout)["eval_id"] == "ev-aa22"
    assert seq.eval.status("ev-aa2").eval_id == "ev-aa22"
    refused_in_one_line(
        run_cli("eval", "report", "ev-aa"), "eval id 'ev-aa' is ambiguous", "ev-aa11, ev-aa22"
    )
    refused_in_one_line(run_cli("eval", "status", "ev-zz"), "no eval has id 'ev-zz'")


def test_eval_rm_refuses_a_running_eval_and_removes_an_interrupted_one(toy_file, seq_home):
    assert run_cli("deploy", str(toy_file)).returncode == 0
    runner = _start_slow_eval(toy_file)
    _wait_for_episodes(seq_home, 1, runner)
    (row,) = seq.eval.ls()
    refused_in_one_line(run_cli("eval", "rm", row["id"][:6]), f"eval {row['id']} is running")
    os.killpg(runner.pid, signal.SIGKILL)
    runner.wait()
    assert seq.eval.ls()[0]["status"] == "interrupted"
    removed = run_cli("eval", "rm", row["id"][:6])
    assert removed.returncode == 0, removed.stderr
    assert f"removed eval {row['id']} (interrupted," in removed.stdout
    assert seq.eval.ls() == [] and seq.Store().items(row["id"]) == []
    refused_in_one_line(run_cli("eval", "report", row["id"]), f"no eval has id '{row['id']}'")


def test_eval_rm_checks_every_id_before_removing_any(toy_file):
    _two_evals(toy_file)
    refused_in_one_line(run_cli("eval", "rm", "ev-aa11", "ev-nope"), "no eval has id 'ev-nope'")
    assert len(seq.eval.ls()) == 2
    assert [r["id"] for r in seq.eval.rm("ev-aa11", "ev-aa2")] == ["ev-aa11", "ev-aa22"]
    assert seq.eval.ls() == []


def test_eval_compare_refuses_evals_of_two_benchmarks(toy_file):
    seq.deploy(toy_file)
    options = {"tasks": ["near"], "seeds": [0], "envs": 1}
    seq.eval.run("line-controller", benchmark="line", eval_id="ev-line", **options)
    seq.eval.run("line-controller", benchmark="line-errors", eval_id="ev-errs", **options)
    refused_in_one_line(
        run_cli("eval", "compare", "ev-line", "ev-errs"),
        "evals ev-line and ev-errs ran different benchmarks (line@v1 and line-errors@v1)",
        "seq benchmark compare --evals ev-line --evals ev-errs",
    )
    both = run_cli("benchmark", "compare", "--evals", "ev-line", "--evals", "ev-errs", "--json")
    assert both.returncode == 0, both.stderr
    assert json.loads(both.stdout)["benchmark"] == "line@v1 vs line-errors@v1"


def test_ctrl_c_while_the_command_tree_imports_exits_130_without_a_traceback():
    """SIGINT as the command tree starts importing, as Ctrl-C in the first second sends it."""
    interrupt_on_import = (
        "import os, signal, sys\n"
        "class CtrlC:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'seq.cli.app':\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "sys.meta_path.insert(0, CtrlC())\n"
        "from seq.cli import main\n"
        "main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", interrupt_on_import, "eval", "ls"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=default_ctrl_c,
    )
    assert result.returncode == 130, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) <= 1, result.stderr
