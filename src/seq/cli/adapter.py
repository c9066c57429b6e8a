"""`seq adapter ls / show / pull / check / rm`."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from seq.errors import SeqInputError
from seq.record.store import Store
from seq.registry.adapters import (
    adapters,
    check_adapter,
    remove_adapter,
    resolve_adapter,
    show_adapter,
    stored_bytes,
)
from seq.registry.builtins import BUILTIN_ADAPTERS

app = typer.Typer(help="List, inspect, fetch, check and remove adapters.", no_args_is_help=True)


@app.command("ls")
def ls_command(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    """Registered adapters, with their latest version and whether it is lossy."""
    rows = adapters()
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table(header_style="bold")
    for column in ("name", "version", "lossy", "file", "registered"):
        table.add_column(column)
    for row in rows:
        lossy = f"yes ({len(row['lossy_transforms'])})" if row["lossy"] else "no"
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["created_at"]))
        table.add_row(row["name"], f"v{row['version']}", lossy, str(row["file"] or "—"), created)
    Console().print(table)
    waiting = sorted(set(BUILTIN_ADAPTERS) - {row["name"] for row in rows})
    if waiting:
        typer.echo(f"built in, registered when an eval first names them:\n  {', '.join(waiting)}")


@app.command("show")
def show_command(
    target: str = typer.Argument(..., metavar="NAME[@vN]", help="An adapter, default its latest version."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Whether a version is lossy and why, with every transform's label and its parameters."""
    info = show_adapter(target)
    if as_json:
        print(json.dumps(info, indent=2))
        return
    console = Console(highlight=False, soft_wrap=True)
    console.print(f"{info['label']}  sha256 {info['sha256'][:12]}  from {info['file']}")
    if info["lossy"]:
        console.print(f"lossy: yes — {len(info['lossy_transforms'])} lossy transform(s)")
    else:
        console.print("lossy: no — every transform is lossless, each checked by its round trip")
    for attribute in ("obs_transforms", "action_transforms", "episode_transforms"):
        for entry in info.get(attribute, []):
            label = f"lossy: {entry['reason']}" if entry["lossy"] else "lossless"
            console.print(f"  {entry['where']}  {entry['transform']}  — {label}")
    if info["parameters"]:
        described = ", ".join(f"{k}: {v['type']} = {v['default']!r}" for k, v in info["parameters"].items())
        console.print(f"parameters: {described}")
    console.print(f"versions: {', '.join(f'v{v}' for v in info['versions'])}")


@app.command("pull")
def pull_command(
    target: str = typer.Argument(..., metavar="NAME[@vN]", help="An adapter, default its latest version."),
    output: str = typer.Option(
        None, "--output", "-o", help="Where to write it ('-': stdout) [default: its file name, here]."
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite a different file already there."),
) -> None:
    """Write a version's file back exactly as it was registered."""
    row = resolve_adapter(target, Store())
    data = stored_bytes(row)
    if output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    path = Path(output) if output else Path(Path(row.ref.get("file") or f"{row.name}.py").name)
    if path.exists() and path.read_bytes() != data and not force:
        raise SeqInputError(f"{path} exists and differs from {row.label}; pass --force or --output PATH.")
    path.write_bytes(data)
    Console(highlight=False).print(f"wrote {path} ({row.label}, sha256 {row.sha256[:12]})")


@app.command("check")
def check_command(
    target: str = typer.Argument(
        ..., metavar="FILE | NAME[@vN]", help="A file to check, or a registered adapter."
    ),
) -> None:
    """Check an adapter again without registering it: the file's size and imports, and that every
    transform labelled lossless gives its input back."""
    console = Console(highlight=False)
    for result in check_adapter(target):
        state = "lossy" if result["lossy"] else "lossless"
        console.print(f"{result['label']}: ok ({state}; every lossless label passed its round trip)")


@app.command("rm")
def rm_command(name: str = typer.Argument(..., help="The adapter's name.")) -> None:
    """Remove an adapter (every version); its numbers are never given again. Refused while an eval runs it."""
    count = remove_adapter(name)
    Console(highlight=False).print(f"removed {name} ({count} version(s)); its version numbers stay used")
