"""`seq evolve export-hard-cases`: the failed episodes of an evolve log as a dataset.

- `jsonl`: one line per failed episode (condition, trial, failures with their steps and evidence,
  and its steps: observation, action, reward) from its trace.
- `lerobot`: LeRobot's v3.0 on-disk layout (what `lerobot.datasets.LeRobotDataset` reads):
  frames in `data/chunk-000/file-000.parquet` (`observation.state`, `action`, `next.reward`,
  `next.done`, `timestamp`, `frame_index`, `episode_index`, `index`, `task_index`), episodes in
  `meta/episodes/chunk-000/file-000.parquet` (with `seq/…` columns: item, cluster, cycle and the
  failure's type and step), `meta/tasks.parquet`, `meta/info.json`, `meta/stats.json`; with
  `videos` (the default), each episode's camera as `observation.images.<camera>` (dtype `video`):
  one H.264 file, `videos/<key>/chunk-000/file-000.mp4`, one frame per row, the episodes one
  after another (their `videos/<key>/from_timestamp` and `to_timestamp` in `meta/episodes`).
  The traces hold no images: the hard cases run again, recorded (`seq.evolve.recordings`).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from seq.capture.trace import read_trace
from seq.errors import SeqInputError
from seq.evolve import state as log
from seq.evolve.evals import evals_of
from seq.evolve.lerobot_video import VIDEO_PATH, LerobotVideo
from seq.evolve.recordings import Recorded, record_again
from seq.record.paths import artifact_file
from seq.record.store import Store

progress = logging.getLogger("seq.evolve")  # `seq: …` lines on stderr

FORMATS = ("jsonl", "lerobot")
FPS = 20
FRAME_COLUMNS = (
    "observation.state",
    "action",
    "next.reward",
    "next.done",
    "timestamp",
    "frame_index",
    "episode_index",
    "index",
    "task_index",
)
EPISODE_COLUMNS = (
    "episode_index",
    "tasks",
    "length",
    "data/chunk_index",
    "data/file_index",
    "dataset_from_index",
    "dataset_to_index",
    "meta/episodes/chunk_index",
    "meta/episodes/file_index",
    "seq/item_id",
    "seq/cluster",
    "seq/cycle",
    "seq/failure",
    "seq/failure_step",
)


def _failed(state: dict[str, Any], store: Store) -> list[tuple[dict[str, Any], Any]]:
    """(member record, trace path) of every clustered failed episode whose trace is kept; the
    member names its eval (`eval_id`)."""
    out = []
    for cycle in state["cycles"]:
        # The base and the evolved eval share item ids where a condition differs only in its step
        # limit: a member is the next failed episode of its item id, in the evals' order.
        failed: dict[str, list[tuple[str | None, Any]]] = {}
        for eval_id in evals_of(cycle):
            for e in store.episodes(eval_id):
                if not _succeeded(e):
                    trace = artifact_file(store.path.parent, eval_id, e.artifacts.get("trace"))
                    failed.setdefault(e.item_id, []).append((eval_id, None if trace is None else str(trace)))
        for cluster in cycle.get("clusters", []):
            for member in cluster["members"]:
                queue = failed.get(member["item_id"]) or [(None, None)]
                member_eval, path = queue.pop(0) if len(queue) > 1 else queue[0]
                if path and Path(path).is_file():
                    where = {"cluster": cluster["id"], "cycle": cycle["cycle"], "eval_id": member_eval}
                    out.append(({**member, **where}, path))
    return out


def _vector(observation: Any) -> list[float]:
    if isinstance(observation, np.ndarray):
        return observation.astype(np.float32).ravel().tolist()
    if isinstance(observation, dict):
        return [x for key in sorted(observation) for x in _vector(observation[key])]
    return [float(observation)] if isinstance(observation, (int, float)) else []


def export_hard_cases(
    directory: str | Path,
    format: str = "jsonl",
    benchmark: str | None = None,
    store: Store | None = None,
    videos: bool = True,
    max_episodes: int | None = None,
) -> Path:
    """Write the hard cases under `directory`; returns the file (jsonl) or the dataset's root.
    `videos` (lerobot only): run the hard cases again, recorded, and add their videos;
    `max_episodes`: only the first that many (in the log's order: cycle, cluster, member)."""
    if format not in FORMATS:
        raise SeqInputError(f"--format {format}: expected {' or '.join(FORMATS)}.")
    store = store or Store()
    state = log.only(benchmark)
    if max_episodes is not None and max_episodes < 1:
        raise SeqInputError(f"--max-episodes {max_episodes}: expected 1 or more.")
    cases = _failed(state, store)[:max_episodes]
    if not cases:
        raise SeqInputError("no failed episode with a kept trace to export (seq evolve prune removes them).")
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise SeqInputError(f"{root}: expected a directory to write the hard cases in, found a file.")
    root.mkdir(parents=True, exist_ok=True)
    if format == "jsonl":
        target = root / f"{state['benchmark']}-hard-cases.jsonl"
        with open(target, "w") as out:
            for member, path in cases:
                trace = read_trace(path)
                steps = [
                    {"observation": _vector(o), "action": a.tolist(), "reward": r}
                    for o, a, r in zip(trace.observations[1:], trace.actions, trace.rewards, strict=True)
                ]
                out.write(
                    json.dumps(
                        {
                            **member,
                            "task": trace.header["task"],
                            "seed": trace.header["seed"],
                            "extra": trace.header.get("extra"),
                            "steps": steps,
                        }
                    )
                    + "\n"
                )
        return target
    return _lerobot(root, state, cases, store if videos else None)


def _say_unrepeated(reruns: list[Recorded]) -> None:
    """A rerun that did not repeat its original's actions is not the failure its row names: say so
    (the dataset keeps it, marked `seq/reproduced` false) rather than pass it for a hard case."""
    unrepeated = [again for again in reruns if not again.reproduced]
    if not unrepeated:
        return
    passed = sum(1 for again in unrepeated if _succeeded(again.episode))
    progress.warning(
        f"{len(unrepeated)} of {len(reruns)} hard cases did not repeat their actions when run again "
        f"({passed} of them succeeded this time): their rows and videos are the reruns', marked "
        "seq/reproduced false; is the policy seeded only by its act seed?"
    )


def _succeeded(episode: Any) -> bool:
    return bool(episode.ok) and float(episode.metrics.get("success", 0.0)) >= 1.0


def _stats(values: np.ndarray) -> dict[str, Any]:
    values = values.reshape(len(values), -1).astype(np.float64)
    return {
        "min": values.min(0).tolist(),
        "max": values.max(0).tolist(),
        "mean": values.mean(0).tolist(),
        "std": values.std(0).tolist(),
        "count": [len(values)],
    }


def _tasks_table(tasks: dict[str, int]) -> Any:
    """`meta/tasks.parquet` as pandas writes it: `task_index` by the task's text as the index."""
    import pyarrow as pa

    columns = [
        {
            "name": "task_index",
            "field_name": "task_index",
            "pandas_type": "int64",
            "numpy_type": "int64",
            "metadata": None,
        },
        {
            "name": "task",
            "field_name": "task",
            "pandas_type": "unicode",
            "numpy_type": "object",
            "metadata": None,
        },
    ]
    pandas = {"index_columns": ["task"], "column_indexes": [], "columns": columns, "pandas_version": "2.2.0"}
    table = pa.table({"task_index": pa.array(list(tasks.values()), pa.int64()), "task": list(tasks)})
    return table.replace_schema_metadata({b"pandas": json.dumps(pandas).encode()})


def _lerobot(
    root: Path, state: dict[str, Any], cases: list[tuple[dict[str, Any], Any]], store: Store | None
) -> Path:
    """LeRobot's v3.0 layout: every frame in `data/chunk-000/file-000.parquet`, one row per
    episode in `meta/episodes/chunk-000/file-000.parquet`, `meta/tasks.parquet`, `meta/info.json`
    and `meta/stats.json`; with a `store`, the hard cases' videos (`LerobotVideo`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    recorded = None
    if store is not None:
        progress.info(
            "rerunning %d hard case%s with a camera (~10 s each on MetaWorld)",
            len(cases),
            "" if len(cases) == 1 else "s",
        )
        recorded = record_again([(m["eval_id"], m["item_id"], p) for m, p in cases], store)
    video: LerobotVideo | None = None
    tasks: dict[str, int] = {}
    columns: dict[str, list[Any]] = {k: [] for k in FRAME_COLUMNS}
    episodes: dict[str, list[Any]] = {k: [] for k in EPISODE_COLUMNS}
    for number, (member, path) in enumerate(cases):
        again = recorded[member["eval_id"], member["item_id"]] if recorded else None
        trace = read_trace(_recorded(store, again, "trace") if again and store else path)
        task_index = tasks.setdefault(trace.header["task"], len(tasks))
        length, start = len(trace.actions), len(columns["index"])
        shown: dict[str, Any] = {}
        if again is not None and store is not None:
            video = video or LerobotVideo(root, again.camera)
            shown = video.add(_recorded(store, again, "video"), length)
        columns["observation.state"] += [_vector(o) for o in trace.observations[:-1]]
        columns["action"] += [a.astype(np.float32).tolist() for a in trace.actions]
        columns["next.reward"] += list(trace.rewards)
        columns["next.done"] += [i == length - 1 for i in range(length)]
        columns["timestamp"] += [i / (video.fps if video and video.fps else FPS) for i in range(length)]
        columns["frame_index"] += list(range(length))
        columns["episode_index"] += [number] * length
        columns["index"] += list(range(start, start + length))
        columns["task_index"] += [task_index] * length
        row = {
            "episode_index": number,
            "tasks": [trace.header["task"]],
            "length": length,
            "data/chunk_index": 0,
            "data/file_index": 0,
            "dataset_from_index": start,
            "dataset_to_index": start + length,
            "meta/episodes/chunk_index": 0,
            "meta/episodes/file_index": 0,
            "seq/item_id": member["item_id"],
            "seq/cluster": member["cluster"],
            "seq/cycle": member["cycle"],
            "seq/failure": member["failures"][0]["type"],
            "seq/failure_step": member["failures"][0]["step"],
        }
        if again is not None:
            row.update(shown, **{"seq/reproduced": again.reproduced, "seq/rerun_eval": again.eval_id})
        for key, value in row.items():
            episodes.setdefault(key, []).append(value)
    fps = video.close() if video else FPS
    if recorded:
        _say_unrepeated(list(recorded.values()))
    dims = {k: len(columns[k][0]) for k in ("observation.state", "action")}
    types = {"next.reward": pa.float32(), "next.done": pa.bool_(), "timestamp": pa.float32()}
    table = pa.table(
        {
            k: pa.array(v, pa.list_(pa.float32(), dims[k]) if k in dims else types.get(k, pa.int64()))
            for k, v in columns.items()
        }
    )
    for folder in ("data/chunk-000", "meta/episodes/chunk-000"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    if video is None and (root / "meta" / "info.json").is_file() and (root / "videos").is_dir():
        import shutil

        shutil.rmtree(root / "videos")  # a previous export's videos: info.json no longer names them
    pq.write_table(table, root / "data" / "chunk-000" / "file-000.parquet")
    pq.write_table(pa.table(episodes), root / "meta" / "episodes" / "chunk-000" / "file-000.parquet")
    pq.write_table(_tasks_table(tasks), root / "meta" / "tasks.parquet")
    features = {
        "observation.state": {"dtype": "float32", "shape": [dims["observation.state"]], "names": None},
        "action": {"dtype": "float32", "shape": [dims["action"]], "names": None},
        "next.reward": {"dtype": "float32", "shape": [1], "names": None},
        "next.done": {"dtype": "bool", "shape": [1], "names": None},
        "timestamp": {"dtype": "float32", "shape": [1], "names": None},
        **{
            k: {"dtype": "int64", "shape": [1], "names": None}
            for k in ("frame_index", "episode_index", "index", "task_index")
        },
    }
    if video is not None:
        features[video.key] = video.feature()
    info = {
        "codebase_version": "v3.0",
        "robot_type": state["benchmark"],
        "total_episodes": len(cases),
        "total_frames": len(columns["index"]),
        "total_tasks": len(tasks),
        "chunks_size": 1000,
        "data_files_size_in_mb": 100,
        "video_files_size_in_mb": 500,
        "fps": fps,
        "splits": {"train": f"0:{len(cases)}"},
        "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
        "video_path": VIDEO_PATH if video else None,
        "features": features,
    }
    (root / "meta" / "info.json").write_text(json.dumps(info, indent=2))
    stats = {k: _stats(np.asarray(columns[k], dtype=np.float64)) for k in features if k in columns}
    if video is not None:
        stats[video.key] = video.stats()
    (root / "meta" / "stats.json").write_text(json.dumps(stats))
    return root


def _recorded(store: Store, again: Recorded, kind: str) -> str:
    """The `kind` file of a hard case run again, from inside its eval's artifact folder."""
    found = artifact_file(store.path.parent, again.eval_id, again.episode.artifacts.get(kind))
    if found is None:
        raise SeqInputError(f"eval {again.eval_id}: {again.episode.item_id} names no {kind} file of its own.")
    return str(found)
