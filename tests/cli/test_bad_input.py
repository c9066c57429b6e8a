"""Bad input gets one sentence on stderr and exit code 2, never a traceback."""

from __future__ import annotations

import pytest
from conftest import run_cli


def _assert_refused(result, *fragments: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_unknown_benchmark_suggests_the_close_name():
    _assert_refused(
        run_cli("eval", "run", "random", "--benchmark", "metawrld"), "metawrld", "Did you mean 'metaworld'"
    )


def test_unknown_policy_suggests_the_close_name():
    _assert_refused(
        run_cli("eval", "run", "metaworld-exprt", "--benchmark", "metaworld"),
        "unknown policy",
        "metaworld-expert",
    )


def test_deploy_of_a_file_with_a_syntax_error(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import seq\n\ndef broken(:\n    pass\n")
    _assert_refused(run_cli("deploy", str(bad)), f"{bad}:3", "syntax error")


def test_deploy_of_a_class_without_reset(tmp_path):
    source = tmp_path / "noreset.py"
    source.write_text(
        "import seq\n\n"
        "@seq.benchmark(conditions=seq.conditions(tasks=['a']))\n"
        "class NoReset(seq.Benchmark):\n"
        "    @seq.check\n"
        "    def check(self, env):\n"
        "        return seq.Step(done=True)\n"
    )
    _assert_refused(run_cli("deploy", str(source)), "NoReset", "@seq.reset")


@pytest.mark.parametrize("declared", ["max_steps=0", "max_steps=-3"])
def test_deploy_of_a_benchmark_with_max_steps_zero(tmp_path, declared):
    source = tmp_path / "zero.py"
    source.write_text(
        "import seq\n\n"
        f"@seq.benchmark(conditions=seq.conditions(tasks=['a']), {declared})\n"
        "class Zero(seq.Benchmark):\n"
        "    @seq.reset\n"
        "    def reset(self, seed, variant):\n"
        "        return None\n"
        "    @seq.check\n"
        "    def check(self, env):\n"
        "        return seq.Step(done=True)\n"
    )
    _assert_refused(run_cli("deploy", str(source)), "max_steps must be a positive integer")


def test_max_steps_zero_on_the_command_line():
    _assert_refused(
        run_cli("eval", "run", "random", "--benchmark", "metaworld", "--max-steps", "0"),
        "--max-steps",
        "max_steps must be a positive integer",
    )


def test_resume_of_an_unknown_eval():
    _assert_refused(run_cli("eval", "run", "--resume", "ev-nope"), "--resume ev-nope", "no eval has that id")


def test_report_of_an_unknown_eval():
    _assert_refused(run_cli("eval", "report", "ev-nope"), "ev-nope")


def test_unknown_parameter_lists_what_can_be_set():
    _assert_refused(
        run_cli("eval", "run", "noisy-expert", "--benchmark", "metaworld", "--param", "nois=0.1"),
        "--param nois",
        "policy.noise",
    )


def test_deploy_of_a_missing_file(tmp_path):
    _assert_refused(run_cli("deploy", str(tmp_path / "missing.py")), "no such file")


@pytest.mark.parametrize(
    "param", ["nosuch=1", "policy.noise=abc", "eval.steps_per_query=0", "benchmark.obs_mode=rgb"]
)
def test_bad_parameters_name_what_the_eval_can_set(param):
    _assert_refused(
        run_cli("eval", "run", "noisy-expert", "--benchmark", "metaworld", "--param", param),
        "the eval can set: policy.noise (float), benchmark.obs_mode (one of state, pixels), "
        "eval.steps_per_query (int)",
    )
