"""The `seq` command tree: one group per plane, each command the twin of a Python call."""

from __future__ import annotations

import typer

from seq.cli.adapter import app as adapter_app
from seq.cli.benchmark import app as benchmark_app
from seq.cli.deploy import deploy_command
from seq.cli.eval import app as eval_app
from seq.cli.evolve import app as evolve_app
from seq.cli.grid import app as grid_app
from seq.cli.help import SectionedHelp, command_line, plain_help
from seq.cli.image import app as image_app
from seq.cli.policy import app as policy_app
from seq.cli.record import app as record_app
from seq.cli.schedule import schedule_command, scheduler_app, schedules_command, trend_command
from seq.cli.secret import app as secret_app
from seq.cli.ui import ui_command
from seq.cli.volume import app as volume_app

app = command_line("seq: evaluate robot policies on simulated benchmarks, with honest statistics.")


def _print_version(asked: bool) -> None:
    if asked:
        from seq._version import __version__, git_sha

        sha = git_sha()
        print(f"seq {__version__}" + (f" (git {sha})" if sha else ""))
        raise typer.Exit()


@app.callback()
def seq_group(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print seq's version and exit."
    ),
) -> None:
    """seq: evaluate robot policies on simulated benchmarks, with honest statistics."""


app.command("deploy")(deploy_command)
app.add_typer(eval_app, name="eval")
app.add_typer(benchmark_app, name="benchmark")
app.add_typer(adapter_app, name="adapter")
app.add_typer(policy_app, name="policy")
app.add_typer(image_app, name="image")
app.add_typer(volume_app, name="volume")
app.add_typer(secret_app, name="secret")
app.add_typer(record_app, name="record")
app.add_typer(grid_app, name="grid")
app.command("ui")(ui_command)
eval_app.command("schedule", cls=SectionedHelp)(schedule_command)
eval_app.command("schedules")(schedules_command)
eval_app.command("trend")(trend_command)
app.add_typer(scheduler_app, name="scheduler")
app.add_typer(evolve_app, name="evolve")
plain_help(app)
