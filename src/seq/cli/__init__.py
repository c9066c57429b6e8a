"""The `seq` command line: a mirror of the Python API (`seq.deploy`, `seq.eval.run`, …)."""

from __future__ import annotations

import logging
import sys

import typer

from seq.cli.adapter import app as adapter_app
from seq.cli.benchmark import app as benchmark_app
from seq.cli.deploy import deploy_command
from seq.cli.eval import app as eval_app
from seq.cli.image import app as image_app
from seq.cli.policy import app as policy_app
from seq.cli.secret import app as secret_app
from seq.cli.volume import app as volume_app
from seq.errors import SeqInputError

app = typer.Typer(
    help="seq: evaluate robot policies on simulated benchmarks, with honest statistics.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command("deploy")(deploy_command)
app.add_typer(eval_app, name="eval")
app.add_typer(benchmark_app, name="benchmark")
app.add_typer(adapter_app, name="adapter")
app.add_typer(policy_app, name="policy")
app.add_typer(image_app, name="image")
app.add_typer(volume_app, name="volume")
app.add_typer(secret_app, name="secret")


def _show_progress_log() -> None:
    """What seq logs at INFO (an image being built, the renderer recordings use) goes to stderr as
    `seq: …` lines: stdout stays the report's."""
    logger = logging.getLogger("seq")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("seq: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `seq` script: bad input is one sentence on stderr and exit code 2."""
    _show_progress_log()
    try:
        app(args=argv, standalone_mode=True)
    except SeqInputError as error:
        print(f"seq: error: {error}", file=sys.stderr)
        sys.exit(2)
