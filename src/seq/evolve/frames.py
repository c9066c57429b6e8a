"""The first frame of each candidate and seed condition, drawn by the benchmark's own renderer,
for the semantic critic to judge the scene rather than a description of it.

One eval of the staging version (its candidates' and seeds' suites, one trial, one step each,
every episode recorded): the recorder's first frame is taken at reset, before any action, from
the benchmark's camera (`render=seq.Record(camera=...)`: LIBERO's `agentview`, MetaWorld's
`corner2`). Each is decoded from the episode's video and sent as a PNG.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from seq.evolve.evals import Settings
from seq.record.paths import artifact_file
from seq.record.store import Store, VersionRow


@dataclass(frozen=True)
class Frames:
    """condition key (`Condition.key`: the step limit is not part of a first frame) → its first
    frame as PNG bytes; `eval_id` the eval that drew them;
    `missing`: why a condition has none (its episode failed, no video was recorded)."""

    images: dict[str, bytes] = field(default_factory=dict)
    eval_id: str | None = None
    missing: dict[str, str] = field(default_factory=dict)


def png(pixels: np.ndarray) -> bytes:
    """An H×W×3 uint8 image as PNG (8-bit RGB, no filter), with the standard library's zlib."""
    image = np.ascontiguousarray(pixels, dtype=np.uint8)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"png: expected an H×W×3 image, got shape {image.shape}.")
    height, width = image.shape[:2]
    rows = b"".join(b"\x00" + image[y].tobytes() for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 6))
        + chunk(b"IEND", b"")
    )


def first_frames(
    policy: str,
    row: VersionRow,
    suites: Sequence[str],
    settings: Settings,
    params: dict[str, Any],
    store: Store,
) -> Frames:
    """Each condition of `row`'s `suites`, reset and drawn once (module doc)."""
    import seq.eval
    from seq.capture.mp4 import read_video

    report = seq.eval.run(
        policy,
        benchmark=row.label,
        suites=list(suites),
        trials=1,
        max_steps=1,
        params=params or None,
        record="all",
        envs=settings.envs,
        store=store,
    )
    conditions = {item.item_id: item.condition for item in store.items(report.eval_id)}
    images, missing = {}, {}
    for episode in report.episodes:
        key = conditions[episode.item_id].key
        path = artifact_file(store.path.parent, report.eval_id, episode.artifacts.get("video"))
        if path is None:
            why = episode.error or episode.artifacts.get("observer_errors") or "no video was recorded"
            missing[key] = str(why).strip().splitlines()[-1][:200]
            continue
        _, frames = read_video(path)
        images[key] = png(frames[0])
    return Frames(images, report.eval_id, missing)
