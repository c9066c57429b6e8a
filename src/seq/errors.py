"""The errors `seq` raises on purpose, and what the CLI does with them."""

from __future__ import annotations

from pathlib import Path


class SeqInputError(ValueError):
    """Bad input from the user: a file, a key or an argument that is not what was expected.

    The message is one sentence naming what was wrong; the CLI prints it and exits with code 2.
    """


class EvalCanceled(RuntimeError):
    """An eval was stopped (Ctrl-C) before all its episodes ran; what ran is kept."""


def make_output_folder(path: str | Path, flag: str = "--output") -> Path:
    """`path` made (with its parents) as a folder to write into; where it cannot be (a file is there
    or above it, no permission), a `SeqInputError` naming `flag` and the path, not an `OSError`."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise SeqInputError(
            f"{flag} {folder}: cannot make a folder there ({error.strerror or error}); "
            "expected a folder that can be created and written."
        ) from None
    return folder
