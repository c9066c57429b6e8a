"""`seq 1 60` is coreutils' seq: in an activated virtual environment our entry point comes first on
PATH and would shadow it, so a command line in coreutils' form is handed to the system's `seq`.

Coreutils' form: options `-w`, `-s SEP`, `-f FORMAT` (and their long spellings) followed by one to
three numbers (LAST, FIRST LAST or FIRST INCREMENT LAST). No command of ours starts that way.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$|^[+-]?0[xX][0-9a-fA-F]+$|^[+-]?inf$")
_FLAGS = {"-w", "--equal-width"}
_WITH_VALUE = {"-s", "--separator", "-f", "--format"}
_FALLBACKS = (Path("/usr/bin/seq"), Path("/bin/seq"))


def is_coreutils_form(args: Sequence[str]) -> bool:
    """Whether `args` (without the program name) read as coreutils' `seq` arguments."""
    numbers: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in _FLAGS:
            index += 1
        elif arg in _WITH_VALUE:
            if index + 1 >= len(args):
                return False
            index += 2
        elif arg.startswith(("--separator=", "--format=")) or (
            len(arg) > 2 and arg[:2] in ("-s", "-f") and not _NUMBER.match(arg)
        ):
            index += 1
        elif arg == "--":
            numbers.extend(args[index + 1 :])
            break
        else:
            numbers.append(arg)
            index += 1
    return 1 <= len(numbers) <= 3 and all(_NUMBER.match(n) for n in numbers)


def _ours(candidate: Path, own_script: Path | None) -> bool:
    """Whether `candidate` is this program's own entry point (the same file, or a Python script that
    starts seq's command line)."""
    if own_script is not None:
        try:
            if candidate.samefile(own_script):
                return True
        except OSError:
            pass
    try:
        with candidate.open("rb") as handle:
            head = handle.read(1024)
    except OSError:
        return True
    return head.startswith(b"#!") and b"seq.cli" in head


def system_seq(own_script: str | None = None) -> Path | None:
    """The first `seq` on PATH that is not ours, else /usr/bin/seq or /bin/seq if present."""
    own = Path(own_script) if own_script and os.path.isfile(own_script) else None
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(folder or ".") / "seq"
        if candidate.is_file() and os.access(candidate, os.X_OK) and not _ours(candidate, own):
            return candidate
    return next((path for path in _FALLBACKS if path.is_file() and not _ours(path, own)), None)


def run_system_seq(args: Sequence[str]) -> None:
    """Replace this process with the system's `seq` run with `args`; exit 2 if there is none."""
    found = system_seq(sys.argv[0] if sys.argv else None)
    if found is None:
        print(
            f"seq: error: `seq {' '.join(args)}` is coreutils' seq, and no other seq is on PATH "
            "or in /usr/bin; install coreutils.",
            file=sys.stderr,
        )
        sys.exit(2)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(found, [str(found), *args])
