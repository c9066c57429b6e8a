"""The `seq` command line: a mirror of the Python API (`seq.deploy`, `seq.eval.run`, …).

The command tree lives in `seq.cli.app` and is imported only when a command of ours runs: `seq 1 60`
in a shell loop is coreutils' and is handed over before anything heavy is imported.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import textwrap
from types import FrameType

from seq.cli.coreutils import is_coreutils_form, run_system_seq
from seq.errors import EvalCanceled, SeqInputError

# The exit code of a command stopped by Ctrl-C (or SIGTERM) with its work unfinished, as a shell
# gives a program it interrupts: neither a failure (1) nor bad input (2). A foreground server
# (`seq policy serve`, `seq ui`, `seq scheduler run`) is stopped that way normally: it exits 0.
CANCELED = 130


def silence_broken_stdout() -> None:
    """Point stdout at the null device once its reader is gone (`seq … | head` ended): what is
    still buffered for it is dropped instead of raising BrokenPipeError again at exit."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)


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


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # SIGTERM stops a command as Ctrl-C does: an eval is canceled, what ran kept


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `seq` script: bad input is one sentence on stderr and exit code 2; Ctrl-C
    or SIGTERM exits 130 whenever it comes, the command tree's imports included, without a
    traceback."""
    args = sys.argv[1:] if argv is None else list(argv)
    if is_coreutils_form(args):
        run_system_seq(args)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminated)
    try:
        _show_progress_log()
        from seq.cli.app import app

        app(args=args, standalone_mode=True)
    except KeyboardInterrupt:  # before a command ran (the command tree is imported in ~0.5 s)
        sys.exit(CANCELED)
    except SeqInputError as error:
        print(f"seq: error: {error}", file=sys.stderr)
        sys.exit(2)
    except EvalCanceled as canceled:  # a command that did not say more: what ran is kept
        line = f"seq: canceled eval {canceled}; what ran is kept; "
        line += f"seq eval run --resume {canceled} runs the rest."
        print(textwrap.fill(line, 80, subsequent_indent="  ", break_on_hyphens=False), file=sys.stderr)
        sys.exit(CANCELED)
