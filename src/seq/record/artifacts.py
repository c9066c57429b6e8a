"""The files an eval keeps beside its rows (videos, trajectories), and saving them for people.

What is captured is decided by `seq.capture.observers`. The files live under
`$SEQ_HOME/artifacts/<eval id>/`; each episode's row names its own (`artifacts`), and that row,
not a file name, is the truth; a file it names outside that folder is never read
(`seq.record.paths`). `export_videos` / `export_trajectories` copy them out under names made for
people: `{task}_seed{seed}[_{variation}][_trial{n}][_{arm}]_{outcome}.mp4`.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
from pathlib import Path
from typing import Any

from seq.record.paths import ARTIFACTS, artifact_file, seq_home
from seq.record.states import EpisodeStatus

log = logging.getLogger("seq.record")


def artifact_name(item_id: str) -> str:
    """A file-system-safe, unique stem for an item id (the record keeps the real id)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", item_id).strip("_")[:80]
    return f"{readable}-{hashlib.sha1(item_id.encode()).hexdigest()[:8]}"


def _outcome(episode: Any) -> str:
    if episode.status == EpisodeStatus.ERROR:
        return "error"
    success = episode.metrics.get("success")
    if success is None:
        return "timeout" if episode.status == EpisodeStatus.TIMED_OUT else "done"
    return "success" if success >= 0.5 else "fail"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "-", text).strip("-")


def export_name(episode: Any, suffix: str) -> str:
    """`{task}_seed{seed}[_{variation}][_trial{n}][_{arm}]_{outcome}{suffix}` (for people only)."""
    parts = [_slug(episode.task), f"seed{episode.seed}"]
    if episode.variation:
        parts.append(_slug(episode.variation))
    if episode.trial:
        parts.append(f"trial{episode.trial}")
    if episode.arm:
        parts.append(_slug(episode.arm))
    parts.append(_outcome(episode))
    return "_".join(parts) + suffix


def _export(
    report: Any, directory: str | Path, kind: str, suffix: str, home: str | Path | None
) -> list[Path]:
    root = Path(home) if home is not None else seq_home()
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    taken: set[str] = set()
    for episode in report.episodes:
        named = episode.artifacts.get(kind)
        if not named:
            continue
        source = artifact_file(root, report.eval_id, named)
        if source is None:
            log.warning(
                "the %s of %s is not copied: %s is not a file inside %s",
                kind, episode.item_id, named, root / ARTIFACTS / str(report.eval_id),
            )
            continue
        name, count = export_name(episode, suffix), 2
        while name in taken:
            name = export_name(episode, f"-{count}{suffix}")
            count += 1
        taken.add(name)
        written.append(Path(shutil.copyfile(source, target / name)))
    return written


def export_videos(report: Any, directory: str | Path, home: str | Path | None = None) -> list[Path]:
    """Copy every recorded episode's mp4 into `directory`; returns the files written. Only files
    inside the eval's artifact folder under `home` (default `$SEQ_HOME`) are copied."""
    return _export(report, directory, "video", ".mp4", home)


def export_trajectories(
    report: Any, directory: str | Path, home: str | Path | None = None
) -> list[Path]:
    """Copy every episode's gzip JSONL trajectory into `directory`; returns the files written
    (from inside the eval's artifact folder under `home`, default `$SEQ_HOME`, only)."""
    return _export(report, directory, "trajectory", ".jsonl.gz", home)
