"""`seq record check`: SQLite's integrity check of the record, and its schema version (the twin of
`seq.check_record`)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from seq.record.integrity import check_record

app = typer.Typer(help="Look after the record (the workspace's seq.db).", no_args_is_help=True)
SHOWN = 10  # problems listed on the terminal; --json lists every one found


@app.command("check")
def check_command(
    path: Path = typer.Argument(None, help="A seq.db file (default: this workspace's record)."),
    as_json: bool = typer.Option(False, "--json", help="Print the findings as JSON."),
) -> None:
    """Run SQLite's integrity check and report the schema version; changes nothing. Exit code 1
    when the record is damaged."""
    found = check_record(path)
    if as_json:
        print(json.dumps(found.to_dict(), indent=2))
    else:
        print(found.summary())
        for problem in found.problems[:SHOWN]:
            print(f"  {problem}")
        if len(found.problems) > SHOWN:
            print(f"  … and {len(found.problems) - SHOWN} more (--json lists them)")
        print(f"  {found.details()}")
    if not found.ok:
        raise typer.Exit(1)
