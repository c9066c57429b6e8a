"""Every command's help reads whole at 80 columns and names values by what they are (NAME, N,
PATH), never by a Python type; a flag given a value is told it is a flag."""

from __future__ import annotations

import re

import pytest
import typer
from conftest import run_cli
from typer.testing import CliRunner

from seq.cli.app import app
from seq.cli.help import plain_help
from seq.cli.seqbench import app as seqbench_app


def _commands(group, path=()):  # every command's and group's words, e.g. ("eval", "run")
    yield path
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name)


SEQ_COMMANDS = list(_commands(typer.main.get_command(app)))
SEQBENCH_COMMANDS = list(_commands(typer.main.get_command(plain_help(seqbench_app))))


@pytest.mark.parametrize(
    "which, words",
    [("seq", words) for words in SEQ_COMMANDS] + [("seqbench", words) for words in SEQBENCH_COMMANDS],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else value,
)
def test_help_names_values_and_fits_80_columns(which, words):
    shown = CliRunner().invoke(
        app if which == "seq" else seqbench_app, [*words, "--help"], terminal_width=80, env={"COLUMNS": "80"}
    )
    assert shown.exit_code == 0, shown.output
    text = shown.output
    assert not re.search(r"<(str|bool|int|float|path|list\[str\])>", text), text
    assert "│" not in text  # plain text, not boxes cut at the terminal's edge
    assert max(len(line) for line in text.splitlines()) <= 80, text
    assert text.startswith("Usage: ")


def test_there_are_many_commands_to_check():
    assert len(SEQ_COMMANDS) >= 20 and ("eval", "run") in SEQ_COMMANDS


def test_a_flag_given_a_value_is_told_it_is_a_flag():
    result = run_cli("eval", "run", "random", "--benchmark", "toy", "--trajectories", "true")
    assert result.returncode == 2
    assert "--trajectories is a flag and takes no value: write --trajectories or --no-trajectories" in (
        result.stderr
    )


@pytest.mark.parametrize("words", SEQ_COMMANDS, ids=lambda value: " ".join(value))
def test_every_command_spells_tasks_seeds_and_folders_as_eval_run_does(words):
    """`--tasks a,b`, `--seeds 0-9`, `--suite NAME`, `-o/--output`: the old spellings (`--task`,
    `--out`, `--output-dir`, `--seeds N` for the first N) are not shown as the way."""
    text = CliRunner().invoke(app, [*words, "--help"], terminal_width=80, env={"COLUMNS": "80"}).output
    assert not re.search(r"--task\b(?!s)|--out\b|--output-dir|--suites\b|first N seeds", text), text
    for line in re.findall(r"--seeds.*", text):
        assert re.search(r"such as 0,1,2 or 0-\d", line), line
