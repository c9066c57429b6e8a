"""Which episodes an eval captures, and how: the observer specs its workers build.

`observer_specs` decides before the first episode which observers the workers build and which
items get a video: `record=None` follows the benchmark's `render=seq.Record(...)` (the first seed
of each task, per variation and arm) or records nothing when it declares none; `"first"` does the
same with or without a declaration; `"all"` records every episode; `"none"` nothing. A benchmark
can name its camera yet record nothing unless asked with
`render=seq.Record(camera=…, options={"record": "none"})`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError

log = logging.getLogger("seq.capture")
RECORD_CHOICES = ("all", "first", "none")
DEFAULT_FPS = 20


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
    spec: Any,
    items: list[Any],
    record: str | None,
    trajectories: bool,
    directory: Path,
    traces: bool = False,
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
        from seq.capture.render import choose_backend

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
    if traces:
        specs.append({"kind": "trace", "directory": str(directory / "traces")})
    return specs
