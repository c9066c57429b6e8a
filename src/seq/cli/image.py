"""`seq image ls / build / rm`: the virtual environments built for benchmarks' `image=`."""

from __future__ import annotations

import time

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(
    help="List, build and remove images (virtual environments built once).", no_args_is_help=True
)


def _size(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} B"  # unreachable


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else "—"


def _packages(description: dict) -> str:
    steps = description.get("steps", [])
    packages = [item for kind, items in steps if kind in ("uv_pip_install", "pip_install") for item in items]
    return ", ".join(packages) or "—"


@app.command("ls")
def ls_command() -> None:
    """Built images, most recently used first."""
    import seq.image

    table = Table(header_style="bold")
    table.add_column("key", no_wrap=True, min_width=16)
    table.add_column("python", no_wrap=True)
    table.add_column("packages", overflow="fold", ratio=1)
    table.add_column("size", no_wrap=True)
    table.add_column("built")
    table.add_column("last used")
    for info in seq.image.ls():
        table.add_row(
            info.key,
            str(info.description.get("python", "—")),
            _packages(info.description),
            _size(info.size_bytes),
            _when(info.built_at),
            _when(info.last_used),
        )
    Console().print(table)


@app.command("build")
def build_command(benchmark: str = typer.Argument(..., help="The benchmark (NAME or NAME@vN).")) -> None:
    """Build a benchmark's image now (it is otherwise built by its first eval)."""
    import seq.image
    from seq.record.store import Store
    from seq.registry.deploy import resolve

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    built = seq.image.build(benchmark, log=console.print)
    row = resolve("benchmark", benchmark, Store())
    state = "already built" if built.cached else f"built in {built.setup_s:.1f}s"
    Console(highlight=False, soft_wrap=True).print(
        f"image {built.key} for {row.label}: {state} ({built.path})"
    )


@app.command("rm")
def rm_command(
    key: str = typer.Argument(None, help="An image key, or the start of one."),
    remove_all: bool = typer.Option(False, "--all", help="Remove every image."),
) -> None:
    """Remove images; an eval that needs one again builds it again."""
    import seq.image

    keys = seq.image.rm(key, all=remove_all)
    Console(highlight=False).print(f"removed {len(keys)} image(s){': ' if keys else ''}{', '.join(keys)}")
