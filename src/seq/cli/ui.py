"""`seq ui`: the console, a local read-only web app over the record (`seq.console.serve`)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console


def ui_command(
    port: int = typer.Option(8765, "--port", help="The port on 127.0.0.1 to serve on."),
    record: Path = typer.Option(None, "--record", help="The record to read (default: $SEQ_HOME/seq.db)."),
    refresh: int = typer.Option(
        5, "--refresh", metavar="S", help="A running eval's pages reload every S seconds (0: never)."
    ),
    allow_host: list[str] = typer.Option(
        [],
        "--allow-host",
        metavar="NAME",
        help="Also answer requests for this host name (a tunnel's or proxy's); repeatable.",
    ),
) -> None:
    """Browse evals, episodes, comparisons and benchmarks in a web page (read-only, local)."""
    from seq.console.serve import serve

    def ready(url: str) -> None:
        Console(highlight=False).print(f"seq console at {url} (Ctrl+C stops it)")

    try:
        serve(port=port, record=record, on_ready=ready, refresh_s=refresh, allow_hosts=allow_host)
    except KeyboardInterrupt:
        pass
