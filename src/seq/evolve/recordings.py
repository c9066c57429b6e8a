"""Videos of hard cases: their episodes run again, recorded, for the LeRobot export.

The loop's evals keep traces, not videos (recording every episode of a cycle would cost more than
the evals). A hard case is reproducible from the record: its eval's arguments (policy, its
parameters, the benchmark version, suites), its condition and its trial fix the env's reset seed
and every act seed (`seq.authoring.seeding.act_seed`). So the export runs exactly those work items
again, as a new eval in the record (same arguments, only the chosen items), with a trace and a
video of **one frame per step** (the recorder's stride is 1: a video frame for every row of the
dataset, at the env's control rate). The rerun's trace is compared with the original's actions,
and the dataset is built from the rerun (its frames and its video are one episode).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from seq.capture.trace import Trace, read_trace
from seq.errors import SeqInputError
from seq.evolve.versions import RERUN_SUFFIX, STAGING_SUFFIX, register
from seq.record.episode import EpisodeResult
from seq.record.paths import artifact_file
from seq.record.store import Store

FRAME_PER_STEP_FPS = 1e6  # asked of the recorder: its stride round(rate / fps) is then 1


@dataclass(frozen=True)
class Recorded:
    """A hard case run again: its new episode (with `video` and `trace` artifacts) and eval, the
    camera it was recorded from, and whether it repeated the original's actions step for step."""

    episode: EpisodeResult
    eval_id: str
    camera: str | None
    reproduced: bool


def _same_actions(first: Trace, second: Trace) -> bool:
    return len(first.actions) == len(second.actions) and all(
        np.array_equal(a, b) for a, b in zip(first.actions, second.actions, strict=True)
    )


def _rerun_benchmark(name: str, version: int, store: Store) -> str:
    """The label the reruns of `name@vversion` are recorded under: the same conditions as a version
    of `NAME-evolve-reruns`, so that an eval of only failed episodes never stands for `NAME` (its
    latest eval, its trend) while the reruns stay in the record, named by the dataset."""
    base = store.version("benchmark", name, version)
    if base is None:
        raise SeqInputError(f"benchmark {name}@v{version} of the evolve log is not in the record.")
    root = name.removesuffix(STAGING_SUFFIX).removesuffix(RERUN_SUFFIX)
    label = f"hard cases of {base.label}, run again with a video"
    return register(root + RERUN_SUFFIX, base, {}, {"label": label}, store, internal=True).label


def record_again(
    cases: Iterable[tuple[str, str, str]], store: Store, envs: int | None = 1
) -> dict[tuple[str, str], Recorded]:
    """Run each `(eval id, item id, original trace path)` again with a video of one frame per
    step and a trace; returns them by `(eval id, item id)`. One rerun eval per original eval."""
    from seq.engine.prepare import prepare_eval
    from seq.engine.request import EvalRequest
    from seq.engine.runner import execute_eval

    by_eval: dict[str, dict[str, str]] = {}
    for eval_id, item_id, trace in cases:
        by_eval.setdefault(eval_id, {})[item_id] = trace
    out: dict[tuple[str, str], Recorded] = {}
    for eval_id, wanted in by_eval.items():
        row = store.get_eval(eval_id)
        if row is None:
            raise SeqInputError(f"eval {eval_id} of the evolve log is not in the record (another SEQ_HOME?).")
        args, arm = row.arguments, row.arguments.arms[0]
        request = EvalRequest(
            policy=arm.policy,
            params=dict(arm.params) or None,
            benchmark=_rerun_benchmark(row.benchmark, row.benchmark_version, store),
            suites=args.suites,
            tasks=args.tasks,
            seeds=args.seeds,
            max_steps=args.max_steps,
            trials=args.trials,
            record="all",
            traces=True,
            envs=envs,
        )
        prepared = prepare_eval(request, store)
        items = [item for item in prepared.items if item.item_id in wanted]
        missing = set(wanted) - {item.item_id for item in items}
        if missing:
            raise RuntimeError(f"eval {eval_id}: planning it again did not give {sorted(missing)[:3]}.")
        observers = [
            {**spec, "fps": FRAME_PER_STEP_FPS} if spec["kind"] == "video" else spec
            for spec in prepared.arguments.observers
        ]
        camera = next((spec.get("camera") for spec in observers if spec["kind"] == "video"), None)
        prepared = replace(prepared, items=items, arguments=replace(prepared.arguments, observers=observers))
        store.create_eval(
            prepared.eval_id,
            prepared.policy,
            prepared.benchmark,
            prepared.arguments,
            prepared.manifest,
            items,
        )
        rerun = store.get_eval(prepared.eval_id)
        assert rerun is not None
        execute_eval(rerun, store, envs=envs)
        for episode in store.episodes(rerun.id):
            if not episode.artifacts.get("video") or not episode.artifacts.get("trace"):
                raise SeqInputError(
                    f"eval {rerun.id}: {episode.item_id} ran again without a video "
                    f"({_first_error(episode.artifacts.get('observer_errors') or episode.error)}); "
                    "--no-videos exports the hard cases without."
                )
            original = read_trace(wanted[episode.item_id])
            kept = artifact_file(store.path.parent, rerun.id, episode.artifacts["trace"])
            if kept is None:
                raise SeqInputError(f"eval {rerun.id}: {episode.item_id} names no trace file of its own.")
            again = read_trace(kept)
            out[eval_id, episode.item_id] = Recorded(
                episode, rerun.id, camera, _same_actions(original, again)
            )
    return out


def _first_error(error: Any) -> str:
    """The first exception's line of a recorder's or an episode's error (its cause, where later
    ones follow from it), else its last line."""
    lines = [line.strip() for line in str(error or "").splitlines() if line.strip(" )")]
    raised = [line for line in lines if re.match(r"^[\w.]*(Error|Exception): ", line)]
    return (raised or lines or ["no OpenGL?"])[0 if raised else -1]


def video_key(camera: str | None) -> str:
    """The dataset's feature name of a camera's video (LeRobot's `observation.images.<camera>`)."""
    return f"observation.images.{camera or 'scene'}"


def video_info(height: int, width: int, fps: int) -> dict[str, Any]:
    """LeRobot's `info` of a video feature as `seq.capture.mp4` writes it (H.264, yuv420p)."""
    return {
        "video.height": height,
        "video.width": width,
        "video.codec": "h264",
        "video.pix_fmt": "yuv420p",
        "video.is_depth_map": False,
        "video.fps": fps,
        "video.channels": 3,
        "has_audio": False,
    }
