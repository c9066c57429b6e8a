"""Shared by the tools: reading base rows and reporting bad input the seqbench way (one line, exit 2)."""

from __future__ import annotations

import sys
from pathlib import Path

from seq.seqbench.tasks import TaskRow, read_task_file


def read_rows(path: Path) -> list[TaskRow]:
    """Rows of a task file; a missing or malformed file is one sentence on stderr and exit code 2."""
    rows, problems = read_task_file(path)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        fail(f"{problems[0]}{more}.")
    return rows


def fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)
