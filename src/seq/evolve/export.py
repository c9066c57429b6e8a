"""`seq evolve export-hard-cases`: the failed episodes of an evolve log as a dataset.

- `jsonl`: one line per failed episode (condition, trial, failures with their steps and evidence,
  and its steps: observation, action, reward) from its trace.
- `lerobot`: LeRobot's v2.1 on-disk layout: `data/chunk-000/episode_NNNNNN.parquet` (columns
  `observation.state`, `action`, `next.reward`, `next.done`, `timestamp`, `frame_index`,
  `episode_index`, `index`, `task_index`), `meta/info.json`, `meta/episodes.jsonl`,
  `meta/tasks.jsonl`. Traces hold no images, so the dataset has no video keys.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from seq.capture.trace import read_trace
from seq.errors import SeqInputError
from seq.evolve import state as log
from seq.record.store import Store

FORMATS = ("jsonl", "lerobot")
FPS = 20


def _failed(state: dict[str, Any], store: Store) -> list[tuple[dict[str, Any], Any]]:
    """(member record, trace path) of every clustered failed episode whose trace is kept."""
    out = []
    for cycle in state["cycles"]:
        paths = {e.item_id: e.artifacts.get("trace") for e in store.episodes(cycle["eval_id"])}
        for cluster in cycle.get("clusters", []):
            for member in cluster["members"]:
                path = paths.get(member["item_id"])
                if path and Path(path).is_file():
                    out.append(({**member, "cluster": cluster["id"], "cycle": cycle["cycle"]}, path))
    return out


def _vector(observation: Any) -> list[float]:
    if isinstance(observation, np.ndarray):
        return observation.astype(np.float32).ravel().tolist()
    if isinstance(observation, dict):
        return [x for key in sorted(observation) for x in _vector(observation[key])]
    return [float(observation)] if isinstance(observation, (int, float)) else []


def export_hard_cases(
    directory: str | Path, format: str = "jsonl", benchmark: str | None = None, store: Store | None = None
) -> Path:
    """Write the hard cases under `directory`; returns the file (jsonl) or the dataset's root."""
    if format not in FORMATS:
        raise SeqInputError(f"--format {format}: expected {' or '.join(FORMATS)}.")
    store = store or Store()
    state = log.only(benchmark)
    cases = _failed(state, store)
    root = Path(directory)
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
    return _lerobot(root, state, cases)


def _lerobot(root: Path, state: dict[str, Any], cases: list[tuple[dict[str, Any], Any]]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    tasks: dict[str, int] = {}
    episodes, index, dims = [], 0, (0, 0)
    (root / "data" / "chunk-000").mkdir(parents=True, exist_ok=True)
    (root / "meta").mkdir(parents=True, exist_ok=True)
    for number, (member, path) in enumerate(cases):
        trace = read_trace(path)
        task = trace.header["task"]
        task_index = tasks.setdefault(task, len(tasks))
        states = [_vector(o) for o in trace.observations[:-1]]
        actions = [a.astype(np.float32).tolist() for a in trace.actions]
        length = len(actions)
        dims = (len(states[0]) if states else 0, len(actions[0]) if actions else 0)
        table = pa.table(
            {
                "observation.state": pa.array(states, pa.list_(pa.float32(), dims[0])),
                "action": pa.array(actions, pa.list_(pa.float32(), dims[1])),
                "next.reward": pa.array(trace.rewards, pa.float32()),
                "next.done": pa.array([i == length - 1 for i in range(length)]),
                "timestamp": pa.array([i / FPS for i in range(length)], pa.float32()),
                "frame_index": pa.array(range(length), pa.int64()),
                "episode_index": pa.array([number] * length, pa.int64()),
                "index": pa.array(range(index, index + length), pa.int64()),
                "task_index": pa.array([task_index] * length, pa.int64()),
            }
        )
        pq.write_table(table, root / "data" / "chunk-000" / f"episode_{number:06d}.parquet")
        episodes.append(
            {
                "episode_index": number,
                "tasks": [task],
                "length": length,
                "seq": {k: member[k] for k in ("item_id", "cluster", "cycle", "failures")},
            }
        )
        index += length
    features = {
        "observation.state": {"dtype": "float32", "shape": [dims[0]], "names": None},
        "action": {"dtype": "float32", "shape": [dims[1]], "names": None},
        "next.reward": {"dtype": "float32", "shape": [1], "names": None},
        "next.done": {"dtype": "bool", "shape": [1], "names": None},
        **{
            k: {"dtype": "float32" if k == "timestamp" else "int64", "shape": [1], "names": None}
            for k in ("timestamp", "frame_index", "episode_index", "index", "task_index")
        },
    }
    info = {
        "codebase_version": "v2.1",
        "robot_type": state["benchmark"],
        "total_episodes": len(episodes),
        "total_frames": index,
        "total_tasks": len(tasks),
        "total_videos": 0,
        "total_chunks": 1,
        "chunks_size": 1000,
        "fps": FPS,
        "splits": {"train": f"0:{len(episodes)}"},
        "data_path": "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
        "video_path": None,
        "features": features,
    }
    (root / "meta" / "info.json").write_text(json.dumps(info, indent=2))
    (root / "meta" / "episodes.jsonl").write_text("".join(json.dumps(e) + "\n" for e in episodes))
    (root / "meta" / "tasks.jsonl").write_text(
        "".join(json.dumps({"task_index": i, "task": t}) + "\n" for t, i in tasks.items())
    )
    return root
