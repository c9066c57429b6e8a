"""`seq secret set / ls / rm`."""

from __future__ import annotations

import json
import os
import select
import sys

import typer
from rich.console import Console
from rich.table import Table

import seq.secret
from seq.errors import SeqInputError
from seq.isolation.secrets import check_env_var

app = typer.Typer(
    help="Set, list and remove secrets given to simulators as environment variables.", no_args_is_help=True
)

STDIN_WAIT_S = 1.0  # how long a non-tty stdin may take to start sending the value


def _stdin_value() -> str | None:
    """The value piped on stdin, or None when stdin is a terminal or sends nothing."""
    stream = sys.stdin
    if stream is None or stream.closed:
        return None
    try:
        if stream.isatty():
            return None
        ready, _, _ = select.select([stream], [], [], STDIN_WAIT_S)
    except (OSError, ValueError):
        return None
    if not ready:
        return None
    data = stream.read()
    value = data[:-1] if data.endswith("\n") else data
    value = value[:-1] if value.endswith("\r") else value
    return value or None


@app.command("set")
def set_command(
    name: str = typer.Argument(..., help="The secret's name (letters, digits, '.', '_', '-')."),
    env: str = typer.Option(..., "--env", metavar="VAR", help="The environment variable it sets."),
) -> None:
    """Store a secret. Its value is read from stdin when piped, else from the environment variable VAR
    here; it is never printed."""
    check_env_var(env)
    value = _stdin_value()
    source = "stdin"
    if value is None:
        value = os.environ.get(env) or None
        source = f"the environment variable {env}"
    if value is None:
        raise SeqInputError(
            f"secret {name}: no value; pipe it on stdin or set {env} in the environment "
            f"(echo ... | seq secret set {name} --env {env})."
        )
    seq.secret.set(name, env, value)
    Console(highlight=False).print(f"secret {name}: set {env} from {source}")


@app.command("ls")
def ls_command(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    """Every secret's name, the variable it sets and when it was set; never a value."""
    rows = seq.secret.ls()
    if as_json:
        print(json.dumps([row.to_dict() for row in rows], indent=2))
        return
    table = Table(header_style="bold")
    for column in ("name", "env", "set at"):
        table.add_column(column)
    for row in rows:
        table.add_row(row.name, row.env, row.set_at)
    Console().print(table)


@app.command("rm")
def rm_command(name: str = typer.Argument(..., help="The secret's name.")) -> None:
    """Delete a secret."""
    seq.secret.rm(name)
    Console(highlight=False).print(f"removed secret {name}")
