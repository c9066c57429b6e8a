"""`TrajectoryWriter`: every step of an episode as gzip JSONL, and `read_trajectory` to read one back.

One file per episode, one JSON object per line:

    {"seq_trajectory": 1, "item_id": …, "task": …, "seed": …, "trial": …, "arm": …, "images": false}
    {"t": 0, "observation": …}                                          the observation after reset
    {"t": 1, "action": […], "act_seed": 123, "reward": 0.5, "observation": …}   one per env.step
    {"plan": "grasp the puck", "t": 12, "act": 12, "asked_s": 0.41, "arrived_s": 0.93}
    {"end": {"status": "ok", "steps": 57, "ended_by": "check"}}      (the metrics are in the record)

A composite policy's plans (`@seq.plan`) each get a line before the step they first shaped: the
plan, `t` (the steps taken when the first act after its arrival passed it to infer as
`instruction`), that act's index and the seconds from the episode's start to the planner's call
and to its reply, on the policy's clock; `"superseded": true` marks a plan that a later one
replaced before any act came (infer never saw it).

Arrays are written as (nested) lists of exact values, so a float32 or float64 reads back bit for
bit. Images (uint8 arrays of two or more dimensions, any array of three or more, or a key such as
`*_image` or `pixels`) are left out as `{"skipped_image": shape}` unless `images=True`.
"""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from seq.record.artifacts import artifact_name
from seq.record.episode import EpisodeResult

if TYPE_CHECKING:
    from seq.record.work import WorkItem

FORMAT = 1
IMAGE_KEYS = ("image", "pixels", "rgb", "depth")


def _is_image(value: np.ndarray, key: str | None) -> bool:
    named = key is not None and any(key == k or key.endswith(f"_{k}") for k in IMAGE_KEYS)
    return value.ndim >= 3 or (value.ndim >= 2 and value.dtype == np.uint8) or (named and value.ndim >= 2)


def plain(value: Any, images: bool = False, key: str | None = None) -> Any:
    """A JSON-ready copy of an observation or action: arrays as lists, numpy scalars as numbers."""
    if isinstance(value, np.ndarray):
        if not images and _is_image(value, key):
            return {"skipped_image": list(value.shape)}
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): plain(v, images, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, images) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "__array__"):
        return plain(np.asarray(value), images, key)
    return repr(value)


def _float(value: float) -> float | str:
    return value if math.isfinite(value) else str(value)


class TrajectoryWriter:
    """Writes every episode's observations, actions, rewards and act seeds under `directory`."""

    def __init__(self, directory: str | Path, images: bool = False, **options: Any) -> None:
        self.directory = Path(directory)
        self.images = images
        self._file: TextIO | None = None
        self._path: Path | None = None
        self._steps = 0

    def _write(self, line: dict[str, Any]) -> None:
        assert self._file is not None
        self._file.write(json.dumps(line, separators=(",", ":")) + "\n")

    def begin(self, item: WorkItem, env: Any, obs: Any) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._path = self.directory / f"{artifact_name(item.item_id)}.jsonl.gz"
        self._file = gzip.open(self._path, "wt", compresslevel=1, encoding="utf-8")
        self._steps = 0
        c = item.condition
        header = {
            "seq_trajectory": FORMAT,
            "item_id": item.item_id,
            "task": c.task,
            "seed": c.seed,
            "trial": item.trial,
            "arm": item.arm,
            "variation": c.variation,
            "suite": c.suite,
            "images": self.images,
        }
        self._write(header)
        self._write({"t": 0, "observation": plain(obs, self.images)})

    def step(self, env: Any, obs: Any, action: Any, reward: float, act_seed: int) -> None:
        if self._file is None:
            return
        self._steps += 1
        self._write(
            {
                "t": self._steps,
                "action": plain(action),
                "act_seed": int(act_seed),
                "reward": _float(float(reward)),
                "observation": plain(obs, self.images),
            }
        )

    def plan(self, step: int, plans: list[dict[str, Any]]) -> None:
        if self._file is None:
            return
        for plan in plans:
            self._write(
                {
                    "plan": str(plan.get("plan")),
                    "t": int(step),
                    **{k: v for k, v in plan.items() if k != "plan"},
                }
            )

    def end(self, result: EpisodeResult) -> dict[str, str]:
        if self._file is None or self._path is None:
            return {}
        summary = {"status": result.status, "steps": result.steps, "ended_by": result.ended_by}
        try:
            self._write({"end": summary})
        finally:
            self._file.close()
            self._file = None
        return {"trajectory": str(self._path)}


@dataclass
class Trajectory:
    """A trajectory read back: `observations[0]` is the reset's; `actions[i]` led to
    `observations[i + 1]`, asked for with `act_seeds[i]`."""

    header: dict[str, Any]
    observations: list[Any] = field(default_factory=list)
    actions: list[Any] = field(default_factory=list)
    act_seeds: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    plans: list[dict[str, Any]] = field(default_factory=list)  # a composite policy's, as written
    end: dict[str, Any] | None = None


def read_trajectory(path: str | Path) -> Trajectory:
    """Read a gzip JSONL trajectory written by `TrajectoryWriter` (a cut-off one reads up to its cut)."""
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        header = json.loads(next(lines))
        if header.get("seq_trajectory") != FORMAT:
            raise ValueError(f"{path} is not a seq trajectory (format {FORMAT}).")
        trajectory = Trajectory(header)
        for raw in lines:
            line = json.loads(raw)
            if "end" in line:
                trajectory.end = line["end"]
            elif "plan" in line:
                trajectory.plans.append(line)
            elif line["t"] == 0:
                trajectory.observations.append(line["observation"])
            else:
                trajectory.actions.append(line["action"])
                trajectory.act_seeds.append(line["act_seed"])
                trajectory.rewards.append(line["reward"])
                trajectory.observations.append(line["observation"])
    return trajectory
