"""`seq volume put / ls / rm`."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.table import Table

import seq.volume
from seq.isolation.volumes import KINDS

app = typer.Typer(help="Store, list and remove read-only volumes (datasets, weights).", no_args_is_help=True)


def human_size(size: int) -> str:
    """`size` bytes as B, KB, MB, GB or TB (powers of 1000)."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000:
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"


@app.command("put")
def put_command(
    name: str = typer.Argument(..., help="The volume's name (letters, digits, '.', '_', '-')."),
    directory: str = typer.Argument(..., metavar="DIR", help="The folder to store."),
    kind: str = typer.Option(
        None, "--kind", help=f"{' or '.join(KINDS)} [default: the volume's kind, else dataset]."
    ),
) -> None:
    """Store a folder as a version of a volume and make it current; the same content is the same version."""
    version, new = seq.volume.put(name, directory, kind)
    Console(highlight=False).print(
        f"volume {name}: version {version.version} ({'new' if new else 'unchanged'}), "
        f"{version.files} files, {human_size(version.size_bytes)}"
    )


@app.command("ls")
def ls_command(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    """Every version of every volume; * marks each volume's current one."""
    rows = seq.volume.ls()
    if as_json:
        print(json.dumps([row.to_dict() for row in rows], indent=2))
        return
    table = Table(header_style="bold")
    for column in ("name", "version", "kind", "files", "size", "created (UTC)", "current"):
        table.add_column(column, no_wrap=column != "kind")
    for row in rows:
        table.add_row(
            row.name,
            row.version,
            row.kind,
            str(row.files),
            human_size(row.size_bytes),
            row.created_at[:16].replace("T", " "),
            "*" if row.current else "",
        )
    Console().print(table)


@app.command("rm")
def rm_command(
    name: str = typer.Argument(..., help="The volume's name."),
    version: str = typer.Option(None, "--version", help="Remove only this version [default: all of them]."),
) -> None:
    """Remove a volume (every version), or one version of it."""
    removed = seq.volume.rm(name, version)
    console = Console(highlight=False)
    for entry in removed:
        console.print(f"removed volume {name} version {entry.version}")
