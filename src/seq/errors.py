"""The errors `seq` raises on purpose, and what the CLI does with them."""

from __future__ import annotations


class SeqInputError(ValueError):
    """Bad input from the user: a file, a key or an argument that is not what was expected.

    The message is one sentence naming what was wrong; the CLI prints it and exits with code 2.
    """


class EvalCanceled(RuntimeError):
    """An eval was stopped (Ctrl-C) before all its episodes ran; what ran is kept."""
