"""Labels: every transform says whether it keeps all the information it is given.

`lossless` is a claim that the registry tests (the transform's inverse must give its input back);
`lossy("reason")` is never tested and always allowed, and its reason is printed in the report.
"""

from __future__ import annotations

from dataclasses import dataclass

from seq.errors import SeqInputError


@dataclass(frozen=True)
class Label:
    """Whether a transform loses information, and why it does."""

    lossy: bool
    reason: str | None = None

    def __str__(self) -> str:
        return f"lossy: {self.reason}" if self.lossy else "lossless"


lossless = Label(False)
"""The label of a transform whose `inverse` gives back exactly what `apply` was given."""


def lossy(reason: str) -> Label:
    """The label of a transform that drops information; `reason` says what it drops, for the report."""
    if not isinstance(reason, str) or not reason.strip():
        raise SeqInputError(
            "seq.tf.lossy(reason): the reason must be a non-empty string saying what is lost."
        )
    return Label(True, reason.strip())


def claimed(default: Label, reason: str | None) -> Label:
    """A transform's label when its author may add `lossy="reason"`: claiming a loss is always
    allowed (the reason then replaces the default one); claiming no loss is not."""
    if reason is None:
        return default
    return lossy(reason)
