"""The errors seqbench raises on purpose: bad input (exit 2) and a failed run (exit 1)."""

from __future__ import annotations

from seq.errors import SeqInputError

__all__ = ["RunFailed", "SeqInputError"]


class RunFailed(RuntimeError):
    """The run cannot go on: the algorithm broke the protocol in a way that voids its results.

    The message is one sentence naming what happened (for example the checkpoint file that `infer`
    changed); the CLI prints it and exits with code 1.
    """
