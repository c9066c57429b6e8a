"""`seq grid run / ls / show`: the twins of `seq.grid.run / ls / show`."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from seq.cli import CANCELED
from seq.cli.options import either_spelling, split_list
from seq.cli.progress import EvalProgress
from seq.errors import EvalCanceled
from seq.record.store import Store

app = typer.Typer(help="Ablation grids of evals, their summary and an acceptance gate.", no_args_is_help=True)


@app.command("run")
def run_command(
    config: Path = typer.Argument(..., help="The grid config (YAML)."),
    gate: bool = typer.Option(False, "--gate", help="Apply the gate: exit 1 unless it passes."),
    gate_on: str = typer.Option(
        "rate", "--gate-on", help="What must reach the threshold: rate, or lower-bound (of its 95% interval)."
    ),
    threshold: float = typer.Option(
        None, "--threshold", help="The gate's threshold (default: the config's gate_threshold, else 0.90)."
    ),
    resume: bool = typer.Option(
        False, "--resume", help="Reuse the latest run directory; skip the cells it holds."
    ),
    families: list[str] = typer.Option(
        None, "--families", help="Only these families (comma-separated or repeated)."
    ),
    modes: list[str] = typer.Option(None, "--modes", help="Only these modes."),
    policies: list[str] = typer.Option(None, "--policies", help="Only these policy ids."),
    output_dir: Path = typer.Option(
        None,
        "-o",
        "--output",
        metavar="DIR",
        help="Where run directories go [default: the config's output_dir].",
    ),
    old_output_dir: Path = typer.Option(None, "--output-dir", hidden=True),  # the old spelling
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Debug logging."),
    as_json: bool = typer.Option(False, "--json", help="Print summary.json instead of the table."),
) -> None:
    """Run every cell of CONFIG, write summary.tsv and summary.json, and judge the gate.

    Exit codes: 0 done (gate PASS), 1 a cell errored, the run failed or the gate FAILed, 2 a bad
    config or argument, 130 canceled (Ctrl-C; --resume finishes it).
    """
    import seq.grid

    if verbose:
        logging.getLogger("seq").setLevel(logging.DEBUG)
    console = Console(stderr=True)
    progress = EvalProgress(console, Store(), announce=False, bar=False)
    try:
        summary = seq.grid.run(
            config,
            gate=gate,
            gate_on=gate_on,
            threshold=threshold,
            resume=resume,
            families=split_list(families, "--families"),
            modes=split_list(modes, "--modes"),
            policies=split_list(policies, "--policies"),
            output_dir=either_spelling(output_dir, old_output_dir, "--output", "--output-dir"),
            say=lambda line: print(line, file=sys.stderr, flush=True),
            on_start=progress.on_start,
            on_result=progress.on_result,
        )
    except (EvalCanceled, KeyboardInterrupt):
        console.print("seq grid: canceled; run it again with --resume to finish.", highlight=False)
        raise typer.Exit(CANCELED) from None
    out = sys.stderr if as_json else sys.stdout  # with --json, stdout is the JSON alone
    if as_json:
        from seq.report.report_content import finite  # JSON has no NaN: a NaN figure prints as null

        print(json.dumps(finite(summary.summary), indent=2, default=str))
    else:
        print_summary(summary.summary)
    print(f"wrote {summary.run_dir}/summary.tsv and summary.json", file=out)
    for cell in summary.errors:
        print(f"error cell {cell.key}: {cell.error}", file=sys.stderr)
    if gate:
        print(summary.gate_line(), file=out)
        for reason in summary.reasons:
            print(f"  {reason}", file=out)
    if not summary.ok:
        raise typer.Exit(1)


def _rate(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value if value is not None else "-")


def print_summary(data: dict[str, Any]) -> None:
    """The success pivot (rows mode@policy, columns family/variation) and the pooled rate, for people."""
    matrix = data.get("matrix", {}).get("success_rate", {})
    columns = list(dict.fromkeys(col for row in matrix.values() for col in row))
    width = max([len("mode@policy"), *(len(row) for row in matrix)])
    print(f"{'mode@policy':<{width}}  " + "  ".join(f"{c:>{max(len(c), 5)}}" for c in columns))
    for row, values in matrix.items():
        shown = [f"{_rate(values.get(c, '-')):>{max(len(c), 5)}}" for c in columns]
        print(f"{row:<{width}}  " + "  ".join(shown))
    low, high = data.get("success_low"), data.get("success_high")
    n, conditions = data.get("n_trials", 0), data.get("n_conditions")
    behind = f" ({conditions} conditions)" if isinstance(conditions, int) and conditions < n else ""
    print(
        f"pooled success {_rate(data.get('success_rate'))} [{_rate(low)}, {_rate(high)}] "
        f"over {n} episodes{behind} in {len(data.get('cells', []))} cells"
    )
    cell_trials = data.get("n_cell_trials")
    if isinstance(cell_trials, int) and cell_trials > n:
        print(f"  cells that share an arm share its episodes: their {cell_trials} trials are {n} episodes")
    effective = data.get("effective_n")
    if "clustered" in str(data.get("interval")) and isinstance(effective, (int, float)):
        print(f"  the interval counts conditions: worth {effective:.3g} independent episodes")


@app.command("ls")
def ls_command(
    limit: int = typer.Option(20, "--limit", help="At most this many, newest first."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Past grid runs, newest first: cells, trials, pooled success and the gate."""
    import seq.grid
    from seq.record.integrity import refuse_unsound
    from seq.record.paths import seq_home

    refuse_unsound(seq_home() / "seq.db")  # the runs' evals are in the record: refused as every command does
    rows = seq.grid.ls(limit)
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        print(f"{row['run']}  {row['config']}")
        if row["damaged"]:
            print(f"  damaged: {row['damaged']}")
        else:
            interval = f"[{_rate(row['success_low'])}, {_rate(row['success_high'])}]"
            print(f"  success {_rate(row['success_rate'])} {interval} n={row['n_trials']}, {_state(row)}")
        print(f"  {row['run_dir']}")


def _state(row: dict[str, Any]) -> str:
    """Coverage, error cells and the gate of a listed run, in words."""
    gate = row["gate"] or {}
    verdict = ("gate PASS" if gate.get("passed") else "gate FAIL") if gate.get("gated") else "not gated"
    planned = row["n_cells"] or row["cells"]
    cells = f"{row['cells']} of {planned} cells" if row["cells"] != planned else f"{planned} cell(s)"
    coverage = "complete" if row["complete"] else "partial"
    errors = f", {row['errors']} errored" if row["errors"] else ""
    return f"{cells}{errors}, {coverage}, {verdict}"


@app.command("show")
def show_command(
    run: str = typer.Argument(..., help="A run directory, or a run's name (its stamp or a prefix)."),
    as_json: bool = typer.Option(False, "--json", help="Print summary.json."),
) -> None:
    """A past run's summary: the success pivot, the pooled rate, error cells and the gate."""
    import seq.grid

    data = seq.grid.show(run)
    if as_json:
        print(json.dumps(data, indent=2))
        return
    print(data.get("run_dir", run))
    print_summary(data)
    ran, planned = len(data.get("cells", [])), data.get("n_cells")
    if data.get("complete") is False and planned:
        print(f"partial: {planned - ran} of {planned} cells not run "
              "(seq grid run CONFIG --resume runs them)")  # fmt: skip
    for cell in data.get("cells", []):
        if cell.get("error"):
            print(f"error cell {cell['key']}: {cell['error']}")
    gate = data.get("gate") or {}
    if gate.get("gated"):
        print(f"gate {'PASS' if gate['passed'] else 'FAIL'} (threshold {gate['threshold']:.2f})")
        for reason in gate.get("reasons") or []:
            print(f"  {reason}")
