"""Recordings asked for and not made: one sentence for the report saying why.

A video recorder that cannot record an env (`seq.capture.video.NotRecordable`: no image in the
observation, no MuJoCo model, no usable `render()`) or whose encoding failed leaves its reason in
the episode's `observer_errors`; the report tells it once, with how many episodes it concerns,
instead of the eval ending as though nothing had been asked.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

_NOT_RECORDABLE = re.compile(r"NotRecordable: (.+)$", re.MULTILINE)
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception): (.+)$", re.MULTILINE)


def _why_unrecorded(errors: str) -> str:
    """The sentence an episode's `observer_errors` give for its missing video."""
    told = _NOT_RECORDABLE.findall(errors)
    if told:
        return told[-1].strip()
    video = errors[errors.index("VideoRecorder.") :]
    lines = _EXCEPTION_LINE.findall(video)
    return f"recording failed ({lines[-1].strip()})" if lines else "recording failed."


def unrecorded_note(episodes: Sequence[Any]) -> str | None:
    """One sentence for the report where episodes chosen for a video have none, and why (the most
    common reason); None where every recording asked for was made."""
    failed = [
        episode.artifacts["observer_errors"]
        for episode in episodes
        if "VideoRecorder." in str(episode.artifacts.get("observer_errors") or "")
    ]
    if not failed:
        return None
    reason, _ = Counter(_why_unrecorded(errors) for errors in failed).most_common(1)[0]
    recorded = sum("video" in episode.artifacts for episode in episodes)
    told = (
        "1 episode chosen for a video has"
        if len(failed) == 1
        else f"{len(failed)} episodes chosen for a video have"
    )
    reason = reason if reason.endswith(".") else f"{reason}."
    return f"{told} none ({recorded} recorded): {reason}"
