"""`seq deploy FILE[:Class]`."""

from __future__ import annotations

import typer
from rich.console import Console

from seq.registry.deploy import deploy


def deploy_command(
    target: str = typer.Argument(..., metavar="FILE[:Class]", help="A Python file, optionally :ClassName."),
) -> None:
    """Register the benchmarks and policies a file defines; prints name@vN for each."""
    console = Console(highlight=False)
    for deployed in deploy(target):
        state = "registered" if deployed.created else "unchanged"
        console.print(f"{deployed.version.label}  ({deployed.kind}, {state})")
        for note in deployed.notes:
            console.print(f"note: {note}", style="yellow")
