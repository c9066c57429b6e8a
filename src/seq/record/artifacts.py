"""What an eval records beside its rows (videos, trajectories), and saving them for people.

`observer_specs` decides, before the first episode, which observers the workers build and which
items get a video: `record=None` follows the benchmark's `render=seq.Record(...)` (the first seed
of each task, per variation and arm) or records nothing when it declares none; `"first"` does the
same with or without a declaration; `"all"` records every episode; `"none"` nothing. A benchmark
can name its camera yet record nothing unless asked with
`render=seq.Record(camera=…, options={"record": "none"})`. The files
live under `$SEQ_HOME/artifacts/<eval id>/`; each episode's row names its own (`artifacts`), and
that row, not a file name, is the truth. `export_videos` / `export_trajectories` copy them out under
names made for people: `{task}_seed{seed}[_{variation}][_trial{n}][_{arm}]_{outcome}.mp4`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError

log = logging.getLogger("seq.record")
RECORD_CHOICES = ("all", "first", "none")
DEFAULT_FPS = 20


def artifact_name(item_id: str) -> str:
    """A file-system-safe, unique stem for an item id (the record keeps the real id)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", item_id).strip("_")[:80]
    return f"{readable}-{hashlib.sha1(item_id.encode()).hexdigest()[:8]}"


def _recorded_items(items: list[Any], record: str) -> list[str]:
    if record == "all":
        return [item.item_id for item in items]
    first: dict[tuple[str, str], Any] = {}
    for item in items:
        group = (item.condition.key.rpartition("|seed=")[0] or item.condition.task, item.arm)
        best = first.get(group)
        if best is None or (item.condition.seed, item.trial, item.ordinal) < (
            best.condition.seed,
            best.trial,
            best.ordinal,
        ):
            first[group] = item
    return [item.item_id for item in first.values()]


def observer_specs(
    spec: Any, items: list[Any], record: str | None, trajectories: bool, directory: Path
) -> list[dict[str, Any]]:
    """The observers (as plain `{"kind": …, **options}` specs) the eval's workers build."""
    if record is not None and record not in RECORD_CHOICES:
        raise SeqInputError(f"--record must be one of {', '.join(RECORD_CHOICES)}, got {record!r}.")
    declared = spec.declared.get("render") or None
    default = str((declared or {}).get("record", "first")) if declared else "none"
    if default not in RECORD_CHOICES:
        raise SeqInputError(
            f"benchmark {spec.name!r}: render=seq.Record(options={{'record': {default!r}}}) must be "
            f"one of {', '.join(RECORD_CHOICES)}."
        )
    mode = record if record is not None else default
    specs: list[dict[str, Any]] = []
    chosen = _recorded_items(items, mode) if mode != "none" else []
    if chosen:
        from seq.record.render import choose_backend

        options = dict(declared or {})
        gl = choose_backend()
        if gl is None:
            log.warning("no offscreen OpenGL (EGL or OSMesa) works here: only image observations record.")
        else:
            log.info("recording with MUJOCO_GL=%s (%s)", gl.backend, gl.renderer or "renderer not probed")
            os.environ.setdefault("MUJOCO_GL", gl.backend)  # inherited by the workers started next
        specs.append(
            {
                **{k: v for k, v in options.items() if k not in ("camera", "fps", "record")},
                "kind": "video",
                "directory": str(directory / "videos"),
                "items": None if mode == "all" else chosen,
                "camera": options.get("camera"),
                "fps": options.get("fps") or DEFAULT_FPS,
                "gl": gl.backend if gl else None,
                "gl_renderer": gl.renderer if gl else "",
            }
        )
    if trajectories:
        specs.append({"kind": "trajectory", "directory": str(directory / "trajectories")})
    return specs


def _outcome(episode: Any) -> str:
    if episode.status == "error":
        return "error"
    success = episode.metrics.get("success")
    if success is None:
        return "timeout" if episode.status == "timed_out" else "done"
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


def _export(report: Any, directory: str | Path, kind: str, suffix: str) -> list[Path]:
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    taken: set[str] = set()
    for episode in report.episodes:
        source = episode.artifacts.get(kind)
        if not source:
            continue
        if not Path(source).is_file():
            log.warning("the %s of %s is missing: %s", kind, episode.item_id, source)
            continue
        name, count = export_name(episode, suffix), 2
        while name in taken:
            name = export_name(episode, f"-{count}{suffix}")
            count += 1
        taken.add(name)
        written.append(Path(shutil.copyfile(source, target / name)))
    return written


def export_videos(report: Any, directory: str | Path) -> list[Path]:
    """Copy every recorded episode's mp4 into `directory`; returns the files written."""
    return _export(report, directory, "video", ".mp4")


def export_trajectories(report: Any, directory: str | Path) -> list[Path]:
    """Copy every episode's gzip JSONL trajectory into `directory`; returns the files written."""
    return _export(report, directory, "trajectory", ".jsonl.gz")
