"""`seq deploy FILE[:Class]`."""

from __future__ import annotations

import typer
from rich.console import Console

from seq.deployment import CheckFailed, deploy
from seq.record.checks import CheckRow
from seq.registry.deploy import Deployed


def check_summary(check: CheckRow) -> str:
    """`ready: 5 steps at 0.02 ms, observation [2] float64`: a check in one line."""
    figures = check.figures
    parts = []
    if figures.get("steps") is not None:
        step = f" at {figures['step_ms']:g} ms" if figures.get("step_ms") is not None else ""
        parts.append(f"{figures['steps']} steps{step}")
    if "observation" in figures:
        observation = figures["observation"]
        shown = (
            ", ".join(f"{key} {value}" for key, value in observation.items())
            if isinstance(observation, dict)
            else str(observation)
        )
        parts.append(f"observation {shown}")
    if figures.get("frame"):
        parts.append(f"frame {figures['frame']}")
    return check.status + (": " + ", ".join(parts) if parts else "")


def _print(console: Console, deployed: list[Deployed]) -> None:
    for item in deployed:
        state = "registered" if item.created else "unchanged"
        console.print(f"{item.version.label}  ({item.kind}, {state})")
        if item.check is not None:
            console.print(f"  check: {check_summary(item.check)}")
        for note in item.notes:
            console.print(f"note: {note}", style="yellow")


def deploy_command(
    target: str = typer.Argument(..., metavar="FILE[:Class]", help="A Python file, optionally :ClassName."),
    check: bool = typer.Option(
        True, "--check/--no-check", help="Check each benchmark with one short episode where it runs."
    ),
) -> None:
    """Register the benchmarks and policies a file defines; prints name@vN for each. Each
    benchmark is checked (seq benchmark logs NAME shows the check); a failed check exits 2."""
    console = Console(highlight=False)
    try:
        deployed = deploy(target, check=check)
    except CheckFailed as failed:
        _print(console, failed.deployed)
        raise
    _print(console, deployed)
