"""`seq evolve run / status / report / review / diff / export-hard-cases / prune`."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from seq.cli.options import either_spelling, parse_seeds, split_list
from seq.errors import SeqInputError

app = typer.Typer(
    help="Evolve a benchmark from its failures into harder, still solvable versions.", no_args_is_help=True
)
review_app = typer.Typer(help="Candidates waiting for a person's decision.", no_args_is_help=True)
app.add_typer(review_app, name="review")
_BENCHMARK_HELP = "The evolved benchmark (needed only where several are)."


def _params(pairs: list[str] | None, flag: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SeqInputError(f"{flag} {pair!r}: expected NAME=VALUE.")
        try:
            out[name] = json.loads(value)
        except ValueError:
            out[name] = value
    return out


@app.command("run", short_help="Cycles of evaluate, diagnose, mutate, validate, promote.")
def run_command(
    benchmark: str = typer.Argument(..., help="The benchmark (NAME or NAME@vN) to evolve."),
    policy: str = typer.Option(..., "--policy", help="The target policy, whose failures are mined."),
    reference: str = typer.Option(..., "--reference", help="The reference policy that must still succeed."),
    cycles: int = typer.Option(1, "--cycles", help="Cycles to run."),
    param: list[str] = typer.Option(None, "--param", help="NAME=VALUE for the target (noise=0.3)."),
    suites: list[str] = typer.Option(
        None, "--suite", metavar="NAME", help="Suites of the benchmark (comma-separated or repeated)."
    ),
    tasks: list[str] = typer.Option(
        None, "--tasks", metavar="NAME", help="Only these tasks (comma-separated or repeated)."
    ),
    seeds: list[str] = typer.Option(None, "--seeds", metavar="SEEDS", help="Seeds, such as 0,1,2 or 0-9."),
    trials: int = typer.Option(
        10, "--trials", help="Target episodes per condition to choose; as many fresh to gate, to re-estimate."
    ),
    reference_trials: int = typer.Option(2, "--reference-trials", help="Reference episodes per candidate."),
    max_candidates: int = typer.Option(24, "--max-candidates", help="Candidates per cycle, at most."),
    endpoint: str = typer.Option(
        None, "--endpoint", help="An OpenAI-compatible base URL for the semantic critic."
    ),
    model: str = typer.Option("gpt-4o-mini", "--model", help="The endpoint's model."),
    timeout_s: float = typer.Option(
        30.0, "--timeout-s", help="How long the endpoint may take (then: deferred)."
    ),
    envs: int = typer.Option(None, "--envs", help="Worker processes."),
) -> None:
    """Evaluate → Diagnose → Generate → Validate → Promote, for each cycle."""
    import seq.evolve
    from seq.cli.progress import EvalProgress
    from seq.evolve.llm import Endpoint
    from seq.record.store import Store

    if cycles < 1 or trials < 1 or reference_trials < 1:
        raise SeqInputError("--cycles, --trials and --reference-trials must be 1 or more.")
    if max_candidates < 1 or (envs is not None and envs < 1):
        raise SeqInputError("--max-candidates and --envs must be 1 or more.")
    progress = EvalProgress(Console(stderr=True), Store(), announce=False, bar=False)
    settings = seq.evolve.Settings(
        suites=split_list(suites, "--suite"),
        tasks=split_list(tasks, "--tasks"),
        seeds=parse_seeds(seeds),  # 0,1,2 or 0-4, as seq eval run takes
        trials=trials,
        reference_trials=reference_trials,
        max_candidates=max_candidates,
        policy_params=_params(param, "--param"),
        envs=envs,
        on_start=progress.on_start,
        on_result=progress.on_result,
    )
    found = seq.evolve.run(
        benchmark,
        policy,
        reference,
        cycles,
        settings,
        Endpoint(endpoint, model, timeout_s) if endpoint else None,
        say=typer.echo,
    )
    if found[-1]["next"] == found[0]["base"]:
        typer.echo(f"nothing promoted: {found[0]['base']} stays the latest version.")
    else:
        typer.echo(f"evolved: {found[0]['base']} → {found[-1]['next']}")


@app.command("status", short_help="Cycles, latest version, promoted and pending candidates.")
def status_command(benchmark: str = typer.Option(None, "--benchmark", help="Only this benchmark.")) -> None:
    """Cycles, latest version, promoted and pending candidates of each evolved benchmark."""
    import seq.evolve

    rows = seq.evolve.status(benchmark)
    if not rows:
        from seq.evolve.state import START

        typer.echo(f"no benchmark has evolved here yet ({START}).")
    for row in rows:
        cycles = f"{row['cycles']} cycle{'' if row['cycles'] == 1 else 's'}"
        typer.echo(f"{row['benchmark']}: {cycles}, latest {row['latest']}")
        typer.echo(
            f"  {row['candidates']} candidates: {row['promoted']} promoted, "
            f"{row['pending_review']} waiting for review"
        )


@app.command("report", short_help="The evolve log as Markdown or HTML (heatmap, frontier).")
def report_command(
    benchmark: str = typer.Option(None, "--benchmark", help="The evolved benchmark."),
    output: Path = typer.Option(None, "--output", "-o", help="Write the Markdown here."),
    html: Path = typer.Option(
        None, "--html", help="Write the HTML report here (one file: heatmap, frontier, evidence)."
    ),
    as_json: bool = typer.Option(False, "--json", help="The report's numbers as JSON, not Markdown."),
) -> None:
    """The evolve log as Markdown (or HTML): clusters, frontier, candidates, promoted conditions
    and their evidence."""
    import seq.evolve
    from seq.cli.eval import check_output_files

    check_output_files(html=html, output=output)

    for flag, path in (("--html", html), ("--output", output)):
        if path is not None and path.is_dir():
            raise SeqInputError(f"{flag} {path}: a folder; expected a file's path.")
    if html:
        typer.echo(f"wrote {seq.evolve.report_html(html, benchmark)}")
        if not output:
            return
    text = seq.evolve.report_json(benchmark) if as_json else seq.evolve.report(benchmark)
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text)
        typer.echo(f"wrote {output}")
    else:
        typer.echo(text)


@review_app.command("list")
def review_list_command(benchmark: str = typer.Option(None, "--benchmark", help=_BENCHMARK_HELP)) -> None:
    """Candidates under review, with why."""
    import seq.evolve

    pending = seq.evolve.review_list(benchmark)
    if not pending:
        typer.echo("nothing to review")
    for c in pending:
        typer.echo(
            f"{c['id']} (cycle {c['cycle']}, {c['operator']}, cluster {c['cluster']}): "
            f"{c['condition']['task']} {c['condition']['extra']}"
        )
        for reason in c["reasons"]:
            typer.echo(f"  {reason}")


@review_app.command("approve", short_help="Promote a candidate under review.")
def approve_command(
    candidate: str = typer.Argument(..., help="The candidate's id (seq evolve review list)."),
    benchmark: str = typer.Option(None, "--benchmark", help=_BENCHMARK_HELP),
    note: str = typer.Option("", "--note", help="Why, kept in the evolve log."),
) -> None:
    """Promote a candidate under review into the benchmark's next version."""
    import seq.evolve

    done = seq.evolve.review_decide(candidate, True, benchmark, note)
    typer.echo(f"{candidate} promoted into {done['promoted_into']}")


@review_app.command("reject")
def reject_command(
    candidate: str = typer.Argument(..., help="The candidate's id (seq evolve review list)."),
    benchmark: str = typer.Option(None, "--benchmark", help=_BENCHMARK_HELP),
    note: str = typer.Option("", "--note", help="Why, kept in the evolve log."),
) -> None:
    """Reject a candidate under review."""
    import seq.evolve

    seq.evolve.review_decide(candidate, False, benchmark, note)
    typer.echo(f"{candidate} rejected")


@app.command("diff", short_help="Two evals' success on the evolved suites, paired.")
def diff_command(
    first: str = typer.Argument(..., help="Eval A, its id or a unique prefix (seq eval ls)."),
    second: str = typer.Argument(..., help="Eval B, its id or a unique prefix."),
) -> None:
    """Per task of the evolved slices: two evals' success and their paired difference."""
    import seq.evolve

    rows = seq.evolve.diff(first, second)
    if not rows:
        typer.echo(
            "nothing to compare: the evals share no episode of an evolved suite\n"
            "(evolved-y…; seq evolve status says whether a cycle promoted any)."
        )
    for row in rows:
        typer.echo(
            f"{row['task']}: {row['first_success']:.2f} → {row['second_success']:.2f} "
            f"(B − A {row['difference']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}] 95%, "
            f"n {row['pairs']} pairs)"
        )


@app.command(
    "export-hard-cases",
    short_help="The failed episodes as JSONL or a LeRobot dataset.",
    context_settings={"allow_extra_args": True},  # the folder as a bare argument, the old spelling
)
def export_command(
    context: typer.Context,
    output: Path = typer.Option(
        None,
        "-o",
        "--output",
        metavar="DIR",
        help="A folder (made if missing): NAME-hard-cases.jsonl, or the LeRobot dataset.",
    ),
    format: str = typer.Option("jsonl", "--format", help="jsonl or lerobot."),
    benchmark: str = typer.Option(None, "--benchmark", help=_BENCHMARK_HELP),
    videos: bool = typer.Option(
        True, "--videos/--no-videos", help="lerobot: run the hard cases again, recorded, for their videos."
    ),
    max_episodes: int = typer.Option(None, "--max-episodes", help="Only the first N hard cases."),
) -> None:
    """The failed episodes as a dataset (JSONL, or LeRobot's on-disk layout with videos)."""
    import seq.evolve

    if len(context.args) > 1:
        raise SeqInputError(f"seq evolve export-hard-cases: one folder, as -o DIR (got {context.args}).")
    old_directory = Path(context.args[0]) if context.args else None
    directory = either_spelling(output, old_directory, "--output", "DIR")
    if directory is None:
        raise SeqInputError("seq evolve export-hard-cases: give the folder to write, as -o DIR.")
    done = seq.evolve.export_hard_cases(
        directory, format, benchmark, videos=videos, max_episodes=max_episodes
    )
    if done.is_file():
        count = sum(1 for _ in done.open())
    else:
        count = json.loads((done / "meta" / "info.json").read_text())["total_episodes"]
    typer.echo(f"wrote {count} hard case{'' if count == 1 else 's'} to {done}")


@app.command("prune", short_help="Delete old cycles' trace files (their rows stay).")
def prune_command(
    benchmark: str = typer.Option(None, "--benchmark", help=_BENCHMARK_HELP),
    keep_cycles: int = typer.Option(1, "--keep-cycles", help="The latest cycles whose traces stay."),
) -> None:
    """Delete old cycles' trace files; their rows stay in the record."""
    import seq.evolve

    done = seq.evolve.prune(benchmark, keep_cycles)
    typer.echo(f"removed {done['files']} trace files ({done['bytes']} bytes)")
