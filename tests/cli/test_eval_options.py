"""`seq eval run` and `seq.eval.run` are built from one request type: the same options, with the
same defaults, one help line each that reads whole at 80 columns."""

from __future__ import annotations

import inspect
import json
import re

import pytest
import typer
from conftest import refused_in_one_line, run_cli

import seq
from seq.cli.eval import OUTPUT_OPTIONS
from seq.cli.eval import app as eval_app
from seq.cli.options import parse_option
from seq.engine.request import SEQUENTIAL_TRIALS, EvalRequest, cli_of, default_of, help_of, request_fields

RUNTIME = ("on_start", "on_result", "store")  # Python objects: callbacks and an open record


def _cli_options() -> dict[str, object]:
    command = typer.main.get_command(eval_app).commands["run"]  # type: ignore[attr-defined]
    return {param.name: param for param in command.params}


def test_the_python_signature_and_the_command_line_have_the_same_options_and_defaults():
    python = inspect.signature(seq.eval.run).parameters
    cli = _cli_options()
    by_name = {item.name: item for item in request_fields()}
    python_only = {name for name, item in by_name.items() if cli_of(item) is None}
    cli_only = {param.name for param in OUTPUT_OPTIONS} | {"help"}
    assert python_only == {"arms"}  # seq.Arm objects have no command-line spelling
    assert set(python) - set(RUNTIME) == set(by_name)
    assert set(cli) - cli_only == set(by_name) - python_only
    for name, item in by_name.items():
        assert python[name].default == item.default, name
        if name in cli:
            assert parse_option(item, cli[name].default) == python[name].default, name  # type: ignore[attr-defined]


@pytest.mark.parametrize("function", [seq.eval.run, seq.eval.dry_run])
def test_every_request_field_is_a_typed_keyword_of_the_python_api_with_its_default(function):
    parameters = inspect.signature(function).parameters
    assert "__signature__" not in vars(function)  # the signature is the function's own
    for item in request_fields():
        parameter = parameters[item.name]
        assert parameter.default == default_of(item), item.name
        assert parameter.annotation == item.type, item.name
        if item.name != "policy":
            assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, item.name


def test_a_keyword_seq_eval_run_does_not_take_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'trails'; did you mean 'trials'"):
        seq.eval.run("line-controller", benchmark="line", trails=3)


def test_sequential_trials_default_the_same_in_python_and_on_the_command_line(toy_file):
    seq.deploy(toy_file)
    options = {"benchmark": "line", "vs": "line-controller", "sequential": True}
    planned = seq.eval.dry_run("line-controller", **options)
    dry = run_cli(
        "eval",
        "run",
        "line-controller",
        "-b",
        "line",
        "--vs",
        "line-controller",
        "--sequential",
        "--dry-run",
        "--json",
    )
    assert dry.returncode == 0, dry.stderr
    conditions = 6  # two tasks, three seeds
    assert json.loads(dry.stdout)["episodes"] == planned["episodes"] == 2 * conditions * SEQUENTIAL_TRIALS


def test_looks_and_metric_are_on_the_command_line(toy_file):
    seq.deploy(toy_file)
    done = run_cli(
        "eval", "run", "line-controller", "-b", "line", "--vs", "line-controller", "--vs-param", "noise=0.5",
        "--sequential", "--trials", "2", "--looks", "2", "--metric", "success", "--tasks", "near",
        "--seeds", "0,1", "--envs", "1", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["arguments"]["sequential"] == {"alpha": 0.05, "looks": 2, "metric": "success"}
    assert report["manifest"]["sequential"]["looks"] <= 2


def test_a_dry_run_of_one_episode_says_one_episode(toy_file):
    seq.deploy(toy_file)
    dry = run_cli(
        "eval", "run", "line-controller", "-b", "line", "--tasks", "near", "--seeds", "0", "--dry-run"
    )
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[0] == "dry run: line@v1: 1 episode; nothing runs or is stored"


def test_a_dry_run_of_a_resume_says_it_plans_new_evals_only(toy_file):
    seq.deploy(toy_file)
    for option in ("--resume", "--rerun-failed"):
        refused_in_one_line(
            run_cli("eval", "run", option, "ev-0123456789", "--dry-run"),
            f"--dry-run plans a new eval, and {option} runs a stored one",
        )


def test_flags_are_flag_pairs_and_no_help_line_is_cut_at_80_columns():
    shown = run_cli("eval", "run", "--help", env={"COLUMNS": "80"})
    assert "<bool>" not in shown.stdout and "<str>" not in shown.stdout
    assert max(len(line) for line in shown.stdout.splitlines()) <= 80
    text = " ".join(shown.stdout.split())
    for item in request_fields():
        cli = cli_of(item)
        if cli is None:
            continue
        if cli.kind == "flag":
            assert f"--{item.name.replace('_', '-')} / --no-{item.name.replace('_', '-')}" in text
        elif cli.kind != "argument":
            assert cli.spellings(item.name)[0] in text
        assert " ".join(help_of(item).split()) in text.replace("- ", "-"), item.name
    assert "Worker processes. [default: one per core]" in text
    assert "[default: 10.0]" in text and "[default: save]" in text


def test_flags_take_their_negative_forms(toy_file):
    seq.deploy(toy_file)
    done = run_cli(
        "eval", "run", "line-controller", "-b", "line", "--tasks", "near", "--seeds", "0", "--envs", "1",
        "--trajectories", "--no-trajectories", "--no-save", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["arguments"]["trajectories"] is False
    assert seq.eval.ls() == []  # --no-save kept nothing


@pytest.mark.parametrize(
    ("flag", "value"), [("--sweep", "noise"), ("--vs-param", "noise"), ("--param", "noise")]
)
def test_a_bad_name_value_pair_names_its_own_flag(flag, value):
    done = run_cli("eval", "run", "random", "-b", "metaworld", "--vs", "random", flag, value)
    refused_in_one_line(done, f"{flag} {value}: expected NAME=VALUE")


@pytest.mark.parametrize(("flag", "value"), [("--sweep", "nosuch=1,2"), ("--vs-param", "nosuch=1")])
def test_an_undeclared_parameter_names_the_flag_that_set_it(toy_file, flag, value):
    seq.deploy(toy_file)
    done = run_cli("eval", "run", "line-controller", "-b", "line", "--vs", "line-controller", flag, value)
    refused_in_one_line(done, f"{flag} nosuch: no side declares it")
    assert seq.eval.ls() == []


def test_a_bad_engine_is_refused_before_the_eval_is_stored(toy_file):
    seq.deploy(toy_file)
    done = run_cli("eval", "run", "line-controller", "-b", "line", "--engine", "rey")
    refused_in_one_line(done, "--engine rey: expected local or ray")
    assert seq.eval.ls() == []
    with pytest.raises(seq.SeqInputError, match="--engine rey"):
        seq.eval.run("line-controller", benchmark="line", engine="rey")
    assert seq.eval.ls() == []


def test_every_request_field_has_a_help_line_and_a_section():
    from seq.engine.request import HELP_GROUPS

    grouped = [name for names in HELP_GROUPS.values() for name in names]
    assert sorted(grouped) == sorted(item.name for item in request_fields())
    for item in request_fields():
        assert re.fullmatch(r"[A-Z].*[.)]", help_of(item)), item.name  # a sentence
    assert EvalRequest().planned_trials == 1
    assert EvalRequest(sequential=True).planned_trials == SEQUENTIAL_TRIALS
