"""`seq benchmark ls / evals / rm`."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.table import Table

from seq.cli.eval import print_eval_table
from seq.registry.benchmarks import benchmark_evals, benchmarks, remove_benchmark

app = typer.Typer(help="List, inspect and remove benchmarks.", no_args_is_help=True)


@app.command("ls")
def ls_command(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    """Benchmarks usable by name, with their latest version and latest eval."""
    rows = benchmarks()
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table(header_style="bold")
    for column in ("name", "version", "kind", "latest eval"):
        table.add_column(column)
    for row in rows:
        version = f"v{row['version']}" if row["version"] else "—"
        latest = f"{row['latest_eval']} ({row['latest_eval_status']})" if row["latest_eval"] else "—"
        table.add_row(row["name"], version, "built-in" if row["builtin"] else "deployed", latest)
    Console().print(table)


@app.command("evals")
def evals_command(
    name: str = typer.Argument(..., help="The benchmark's name."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Every eval run on a benchmark, across policies, newest first."""
    rows = benchmark_evals(name)
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        print_eval_table(rows)


@app.command("rm")
def rm_command(name: str = typer.Argument(..., help="The benchmark's name.")) -> None:
    """Remove a deployed benchmark; its evals keep their reports and its version numbers stay used."""
    count = remove_benchmark(name)
    Console().print(
        f"removed {name} ({count} version(s)); evals that ran it keep their reports", highlight=False
    )
