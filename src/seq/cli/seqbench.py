"""The `seqbench` command line: run, validate-csv, calibrate, screen, report, algorithms.

Exit codes: 0 success; 1 a run failed (a call failed or went over budget, or a checkpoint was changed);
2 bad input (a spec key, a file, a CSV row), as one sentence on stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from seq.cli.help import command_line, plain_help
from seq.cli.options import parse_seeds
from seq.errors import SeqInputError
from seq.seqbench.protocol import RunFailed

app = command_line(
    "seqbench: a black-box behavioural benchmark for learning algorithms (learn / infer processes)."
)


def _err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@app.command("run")
def run_command(
    spec: Path = typer.Argument(..., help="A run spec, such as specs/runs/full_v1.yaml."),
    algorithm: str = typer.Option(
        ..., "--algorithm", help="An algorithm YAML, or a reference name (exact-knn …)."
    ),
    tasks: list[Path] = typer.Option(
        None, "--tasks", help="A task CSV file (repeatable); each is read once."
    ),
    output: Path = typer.Option(..., "--output", help="A new directory for the run's files."),
    seeds: list[str] = typer.Option(None, "--seeds", help="Override the spec's seeds, such as 0 or 0-2."),
    calibration: Path = typer.Option(None, "--calibration", help="A calibration file [default: the spec's]."),
    quiet: bool = typer.Option(False, "--quiet", help="Print only the summary."),
) -> None:
    """Run ALGORITHM through SPEC on the task files and write the run directory."""
    from seq.seqbench.pipeline import COMPLETED, run

    result = run(
        spec,
        algorithm,
        tasks or [],
        output,
        parse_seeds(seeds),
        calibration,
        say=(lambda _: None) if quiet else _err,
    )
    for prop in result.properties:
        value = "—" if prop["value"] is None else f"{prop['value']:.3f}"
        print(f"{prop['name']:<24} {value:>7}  {prop['status']}")
    print(f"wrote {result.output} ({result.status})")
    if result.status != COMPLETED:
        for call in result.failed_calls:
            _err(
                f"seqbench: {call.operation} seed {call.seed} stage {call.stage}: "
                f"{call.status}: {call.reason}"
            )
        raise typer.Exit(1)


@app.command("validate-csv")
def validate_command(
    files: list[Path] = typer.Argument(..., help="Task CSV files, validated together."),
) -> None:
    """Check the schema and consistency of task files; every problem names its file, row and column."""
    from seq.seqbench.tasks import MAX_REPORTED_PROBLEMS, validate_files

    rows, problems = validate_files(files)
    for problem in problems[:MAX_REPORTED_PROBLEMS]:
        _err(str(problem))
    if len(problems) > MAX_REPORTED_PROBLEMS:
        _err(f"… and {len(problems) - MAX_REPORTED_PROBLEMS} more problem(s)")
    if problems:
        _err(f"seqbench: {len(problems)} problem(s) in {len(files)} file(s)")
        raise typer.Exit(2)
    print(f"{len(files)} file(s), {rows} rows: valid")


@app.command("calibrate")
def calibrate_command(
    weak: list[Path] = typer.Option(..., "--weak", help="A weak reference run (repeatable)."),
    strong: list[Path] = typer.Option(..., "--strong", help="A strong reference run (repeatable)."),
    output: Path = typer.Option(
        ..., "--output", help="The calibration file, such as specs/calibration/v1.json."
    ),
) -> None:
    """Set per-property thresholds from weak and strong reference runs of one spec."""
    from seq.seqbench.calibration import calibrate

    entry = calibrate(weak, strong, output)
    for name, prop in entry["properties"].items():
        shown = (
            f"threshold {prop['threshold']:.3f}" if prop["threshold"] is not None else prop.get("note", "")
        )
        print(f"{name:<24} {shown}")
    print(f"wrote {output}")


@app.command("screen")
def screen_command(
    spec: Path = typer.Argument(..., help="A screen spec, such as specs/screens/screen_v1.yaml."),
    candidate: list[Path] = typer.Option(
        ..., "--candidate", help="A candidate run (repeatable, one per seed)."
    ),
    baseline: Path = typer.Option(..., "--baseline", help="The saved baseline run (exact-knn)."),
    output: Path = typer.Option(..., "--output", help="Where screen.json/.md/.html go."),
) -> None:
    """PROMOTE, DROP or INCONCLUSIVE from paired intervals of candidate − baseline."""
    from seq.seqbench.screening import screen

    result = screen(spec, candidate, baseline, output)
    for row in result["metrics"]:
        low, high = row["low"], row["high"]
        shown = f"[{low:+.3f}, {high:+.3f}]" if low is not None and high is not None else "[—]"
        print(f"{row['metric']:<24} {row['difference']:+.3f} {shown}  {row['method']}")
    print(f"{result['verdict']}: {result['reason']}")


@app.command("report")
def report_command(
    run_dir: Path = typer.Argument(..., help="A finished run directory."),
    calibration: Path = typer.Option(None, "--calibration", help="A calibration file [default: the run's]."),
) -> None:
    """Re-apply the calibration to a finished run and rewrite properties.json and its reports."""
    from seq.seqbench.rereport import rereport

    properties = rereport(run_dir, calibration)
    for prop in properties:
        value = "—" if prop["value"] is None else f"{prop['value']:.3f}"
        print(f"{prop['name']:<24} {value:>7}  {prop['status']}")
    print(f"rewrote {run_dir / 'report.md'} and {run_dir / 'report.html'}")


@app.command("algorithms")
def algorithms_command() -> None:
    """List the shipped reference algorithms and their YAML files."""
    from seq.seqbench.algorithm import REFERENCES, resolve_algorithm_path

    for name in REFERENCES:
        path = resolve_algorithm_path(name)
        manifest = json.loads((path.parent / f"{path.stem}.manifest.json").read_text())
        print(f"{name:<10} {path}  {manifest.get('description', '')}")


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `seqbench` script: bad input exits 2, a failed run exits 1, one line each."""
    plain_help(app)
    try:
        app(args=argv, standalone_mode=True)
    except SeqInputError as error:
        _err(f"seqbench: error: {error}")
        sys.exit(2)
    except RunFailed as error:
        _err(f"seqbench: run failed: {error}")
        sys.exit(1)


if __name__ == "__main__":
    main()
