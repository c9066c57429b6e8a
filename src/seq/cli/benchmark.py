"""`seq benchmark ls / logs / evals / rm / compare`, and the port commands (`seq.cli.port`)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer
from rich.console import Console

from seq.cli.port import register as register_port_commands
from seq.cli.tables import print_benchmark_table, print_eval_table
from seq.eval import benchmark_evals, compare_benchmarks
from seq.registry.benchmarks import Removal, benchmarks, plan_removal, remove_benchmark

app = typer.Typer(help="List, inspect and remove benchmarks.", no_args_is_help=True)


@app.command("ls")
def ls_command(
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
    every: bool = typer.Option(
        False, "--all", help="Also those seq keeps for itself (seq evolve's candidates and reruns)."
    ),
) -> None:
    """Benchmarks usable by name, with their latest version and latest eval."""
    rows = benchmarks(internal=every)
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    print_benchmark_table(rows)


@app.command("logs")
def logs_command(
    name: str = typer.Argument(..., help="The benchmark's name."),
    version: int = typer.Option(None, "--version", help="This version [default: the latest]."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """A version's check at deploy: its image build, what the check printed, what it measured."""
    from seq.cli.deploy import check_summary
    from seq.deployment import benchmark_logs

    check = benchmark_logs(name, version)
    if as_json:
        print(json.dumps(check.to_dict(), indent=2))
        return
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(check.checked_at))
    print(f"{check.label}: {check.status} (checked {when})")
    figures = dict(check.figures)
    image = figures.pop("image", None)
    if image:
        cached = "cached" if image.get("cached") else f"built in {image.get('setup_s')} s"
        print(f"\n-- image {image.get('key')} ({cached})")
        for line in image.get("build") or []:
            print(f"   {line}")
    print("\n-- what the check printed")
    print("\n".join(f"   {line}" for line in check.output.splitlines()) or "   (nothing)")
    failure = figures.pop("failure", None)
    print("\n-- what it measured")
    print(f"   {check_summary(check)}")
    for key, value in figures.items():
        print(f"   {key}: {json.dumps(value) if isinstance(value, dict | list) else value}")
    if check.error:
        print(f"\n-- why it failed\n   {check.error}")
        if failure and failure.get("traceback"):
            print("\n".join(f"   {line}" for line in failure["traceback"].rstrip().splitlines()))


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
def rm_command(
    name: str = typer.Argument(..., help="The benchmark's name."),
    force: bool = typer.Option(False, "--force", help="Cancel the evals running on it, then remove it."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what it would touch; remove nothing."),
) -> None:
    """Remove a deployed benchmark; its evals keep their reports and its version numbers stay used."""
    removal = plan_removal(name)
    if dry_run:
        _print_removal(removal, force)
        return
    count = remove_benchmark(name, force=force)
    canceled = f"; canceled running eval(s) {', '.join(removal.running)}" if removal.running else ""
    Console().print(
        f"removed {name} ({count} version(s)); evals that ran it keep their reports{canceled}",
        highlight=False,
    )


def _print_removal(removal: Removal, force: bool) -> None:
    """`seq benchmark rm --dry-run`: each thing the removal would touch, one line each."""
    console = Console()
    versions = ", ".join(f"v{version}" for version in removal.versions)
    console.print(f"would remove {removal.name}: version(s) {versions}", highlight=False)
    console.print(f"  {removal.evals} eval(s) that ran it keep their reports", highlight=False)
    for eval_id in removal.running:
        runners = ", ".join(removal.runners.get(eval_id, [])) or "its runner"
        fate = "would be canceled (--force)" if force else "refuses the removal unless --force cancels it"
        console.print(f"  running eval {eval_id} on {runners}: {fate}", highlight=False)
    for schedule in removal.schedules:
        console.print(
            f"  schedule {schedule} names it: it stays, and its runs are refused until "
            f"{removal.name} is deployed again",
            highlight=False,
        )
    console.print("nothing removed (--dry-run)", highlight=False)


@app.command("compare")
def compare_command(
    first: str = typer.Argument(
        None, help="Benchmark A (NAME or NAME@vN); with --replay, the port's scene (default: SCENE)."
    ),
    second: str = typer.Argument(None, help="Benchmark B."),
    policy: str = typer.Option(None, "--policy", help="The policy both run."),
    trials: int = typer.Option(1, "--trials", help="Episodes per condition."),
    threshold: float = typer.Option(0.05, "--threshold", help="Equivalence margin."),
    evals: list[str] = typer.Option(
        None, "--evals", help="Two finished evals to compare instead of running."
    ),
    envs: int = typer.Option(None, "--envs", help="Worker processes."),
    envs_per_worker: int = typer.Option(
        1, "--envs-per-worker", help="Episodes per worker side by side (a batched port's worlds)."
    ),
    serve: bool = typer.Option(False, "--serve", help="Serve the policy behind a batching server."),
    max_steps: int = typer.Option(None, "--max-steps", help="Steps per episode, at most (both)."),
    adapter: str = typer.Option(None, "--adapter", help="The adapter both versions run with the policy."),
    suites: list[str] = typer.Option(
        None, "--suite", metavar="NAME", help="Suites both run (comma-separated or repeated)."
    ),
    tasks: list[str] = typer.Option(None, "--tasks", help="Only these tasks (comma-separated or repeated)."),
    seeds: list[str] = typer.Option(None, "--seeds", help="Seeds, such as 0,1,2 or 0-9."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
    replay: Path = typer.Option(
        None, "--replay", help="An exported scene: compare the motion on MuJoCo and MuJoCo Warp instead."
    ),
    conditions: int = typer.Option(None, "--conditions", help="With --replay: the first K starts."),
    atol: float = typer.Option(0.001, "--atol", help="With --replay: the largest gap allowed."),
    steps: int = typer.Option(None, "--steps", help="With --replay: steps (default: the export's, 200)."),
) -> None:
    """Two benchmark versions, one policy, the same episodes, paired (--replay: MuJoCo vs Warp)."""
    from seq.cli.eval import _emit
    from seq.cli.options import parse_seeds, split_list
    from seq.errors import SeqInputError

    if replay is not None:
        _replay(replay, first, conditions, atol, steps, as_json)
        return
    if evals and len(evals) != 2:
        raise SeqInputError(f"--evals takes two eval ids, got {len(evals)}.")
    if not evals and (first is None or second is None):
        raise SeqInputError("seq benchmark compare needs two benchmarks A B (or --evals E1 E2).")
    report = compare_benchmarks(
        first,
        second,
        policy,
        trials=trials,
        threshold=threshold,
        evals=(evals[0], evals[1]) if evals else None,
        envs=envs,
        envs_per_worker=envs_per_worker,
        serve=serve,
        max_steps=max_steps,
        adapter=adapter,
        tasks=split_list(tasks, "--tasks"),
        suites=split_list(suites, "--suite"),
        seeds=parse_seeds(seeds),
    )
    _emit(report, Console(), as_json, None, None)


def _replay(
    scene: Path, port: str | None, conditions: int | None, atol: float, steps: int | None, as_json: bool
) -> None:
    from seq.cli.port import port_step, print_replay
    from seq.port import compare_replay

    result = port_step(lambda: compare_replay(scene, port, conditions=conditions, atol=atol, steps=steps))
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        print_replay(result, Console(highlight=False, soft_wrap=True))
    raise typer.Exit(1 if result["port_differs"] else 0)


register_port_commands(app)
