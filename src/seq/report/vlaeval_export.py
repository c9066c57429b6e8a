"""`seq eval export ID --format vla-eval`: an eval's record in vla-eval's result layout, so tools
built for vla-eval (its summary table, its smoke checks, dashboards reading `*_aggregate.json`)
and users' scripts read `seq`'s results without a special case.

The layout and the fields are those `vla-eval run` writes (`vla_eval.results.export`, 0.8.0),
checked field by field against a real `vla-eval run` of the same benchmark and policy:

- `<benchmark>_aggregate.json` (`<benchmark>_<arm>_aggregate.json` for each arm of a comparison):
  `benchmark`, `mode`, `harness_version` (the vla-eval version whose layout this is), `created_at`,
  `tasks` (sorted by name, each with its `episodes`, `num_episodes`, `num_errors`, `avg_steps` and
  `mean_<metric>`), `config` (vla-eval's benchmark entry: `name`, `episodes_per_task`, … with
  vla-eval's defaults where seq has no such setting), `eval_id`, `server_info`, `render`,
  `metric_keys`, `mean_<metric>`, `num_episodes_total`, `num_errors`, and `partial` when the
  eval did not finish;
- each episode: `sid` (the eval), `eid` (the work item), `episode_id` and `episode_idx` (its number
  among its task's episodes, in seed then trial order), `metrics` (the benchmark's own, `success`
  a bool), `steps`, `elapsed_sec`, `name`, `suite`, `task_idx`, and for an episode that errored
  `failure_reason` (vla-eval's words: `model_act` for the policy, `env_start` / `env_step` for the
  benchmark, else what stopped it, such as `server_unreachable`) and `failure_detail`; an errored
  episode counts as a failure (`success` false) in the means, as in vla-eval;
- `episodes/<benchmark>/task{task_idx:04d}_ep{episode_id:04d}_{status}.jsonl`: one row per step
  (`{"step": i, "reward", "action", "act_seed", "done"}`), for the episodes whose trajectory was
  recorded (`--trajectories`), and `.mp4` beside it for those with a video.

What only `seq` knows is kept under a key of its own, `seq`, which vla-eval's tools ignore: at the
top, seq's version, the benchmark's version, the eval's arguments and `max_steps`; in each
episode, its `seed`, `trial`, `item_id`, `status`, `ended_by` and seq's own metrics (`return`).
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from seq._version import __version__
from seq.errors import SeqInputError, make_output_folder
from seq.record.episode import ERROR, EpisodeResult
from seq.record.manifest import ArmManifest
from seq.record.paths import artifact_file
from seq.record.states import Failure
from seq.record.store import COMPLETED, Store
from seq.record.typed import to_plain

BUILT_IN = ("steps", "return", "duration_s")  # seq's own metrics, not the benchmark's
VLA_EVAL_VERSION = "0.8.0"  # the vla-eval whose result layout this is
# vla-eval's benchmark entry (`vla_eval.config`), less what seq has no such setting for
CONFIG_DEFAULTS: dict[str, Any] = {
    "mode": "sync",
    "subname": None,
    "max_steps": None,
    "max_tasks": None,
    "tasks": None,
    "params": {},
    "recording": None,
    "hz": 10.0,
    "throughput_mode": False,
    "paced": True,
    "wait_first_action": False,
}
RENDER = {"requested": "gpu", "applied_env": {}}  # what vla-eval records when nothing is asked


def _safe(name: str) -> str:
    return re.sub(r"[^\w\-.]", "_", name)


def _status(episode: EpisodeResult) -> str:
    if episode.status == ERROR:
        return "error"
    return "success" if episode.metrics.get("success", 0.0) >= 0.5 else "fail"


def _failure_reason(episode: EpisodeResult) -> str:
    """Why an episode errored, in vla-eval's words where they apply."""
    if episode.failure == Failure.POLICY:
        return "model_act"
    if episode.failure == Failure.BENCHMARK:
        return "env_start" if episode.steps == 0 else "env_step"
    return episode.ended_by or "error"


def _metric_keys(episodes: list[EpisodeResult]) -> dict[str, str]:
    keys: dict[str, str] = {}
    for episode in episodes:
        for key in episode.metrics:
            if key not in BUILT_IN:
                keys.setdefault(key, "mean")
    return keys


def _aggregate(target: dict[str, Any], rows: list[dict[str, Any]], metric_keys: dict[str, str]) -> None:
    """`mean_<key>` over the rows holding the key, as vla-eval's `_aggregate_metrics` rounds it."""
    for key in metric_keys:
        values = [row["metrics"][key] for row in rows if isinstance(row["metrics"].get(key), int | float)]
        if values:
            target[f"mean_{key}"] = round(sum(values) / len(values), 4)


def _steps(trajectory: Path) -> list[dict[str, Any]]:
    """A seq trajectory's env steps as vla-eval step rows."""
    rows: list[dict[str, Any]] = []
    with gzip.open(trajectory, "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if "action" in record:
                step = {"step": record["t"] - 1, "reward": record.get("reward"), "action": record["action"]}
                rows.append({**step, "act_seed": record.get("act_seed"), "done": False})
    if rows:
        rows[-1]["done"] = True
    return rows


def _episode_row(
    episode: EpisodeResult, number: int, task_idx: int, metric_keys: dict[str, str], eval_id: str
) -> dict[str, Any]:
    metrics: dict[str, Any] = {k: v for k, v in episode.metrics.items() if k not in BUILT_IN}
    if metrics.get("success") in (0, 1):
        metrics["success"] = bool(metrics["success"])
    row: dict[str, Any] = {
        "sid": eval_id,
        "eid": episode.item_id,
        "episode_id": number,
        "metrics": metrics,
        "steps": episode.steps,
        "elapsed_sec": round(episode.duration_s, 3),
        "name": episode.task,
        "suite": episode.suite,
        "episode_idx": number,
        "task_idx": task_idx,
    }
    if episode.status == ERROR:
        row["failure_reason"] = _failure_reason(episode)
        if episode.error:
            row["failure_detail"] = episode.error
        if "success" in metric_keys:
            row["metrics"] = {**metrics, "success": False}
    row["seq"] = {
        "seed": episode.seed,
        "trial": episode.trial,
        "item_id": episode.item_id,
        "status": _status(episode),
        "ended_by": episode.ended_by,
        **{k: v for k, v in episode.metrics.items() if k in BUILT_IN and k != "steps"},
    }
    return row


def _files(episode: EpisodeResult, stem: Path, home: Path, eval_id: str) -> None:
    """The episode's step rows (from its trajectory) and its video, under `stem`: only files
    inside the eval's artifact folder are read."""
    trajectory = artifact_file(home, eval_id, episode.artifacts.get("trajectory"))
    video = artifact_file(home, eval_id, episode.artifacts.get("video"))
    if trajectory:
        stem.parent.mkdir(parents=True, exist_ok=True)
        with stem.with_suffix(".jsonl").open("w", encoding="utf-8") as out:
            for row in _steps(Path(trajectory)):
                out.write(json.dumps(row) + "\n")
    if video:
        stem.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(video, stem.with_suffix(".mp4"))


def _benchmark_result(
    name: str, episodes: list[EpisodeResult], row: Any, arm: ArmManifest, directory: Path, home: Path
) -> dict[str, Any]:
    metric_keys = _metric_keys(episodes)
    by_task: dict[str, list[EpisodeResult]] = {}
    for episode in episodes:
        by_task.setdefault(episode.task, []).append(episode)
    tasks, all_rows = [], []
    order = {task: index for index, task in enumerate(by_task)}  # the benchmark's task order
    for task, members in sorted(by_task.items()):  # vla-eval lists tasks by name
        task_idx, rows = order[task], []
        for number, episode in enumerate(members):
            episode_row = _episode_row(episode, number, task_idx, metric_keys, row.id)
            stem = f"task{task_idx:04d}_ep{number:04d}_{episode_row['seq']['status']}"
            _files(episode, directory / "episodes" / name / stem, home, row.id)
            rows.append(episode_row)
        errors = sum(1 for r in rows if r.get("failure_reason"))
        result: dict[str, Any] = {
            "task": task,
            "episodes": rows,
            "num_episodes": len(rows),
            "avg_steps": sum(r["steps"] for r in rows) / (len(rows) or 1),
        }
        if errors:
            result["num_errors"] = errors
        _aggregate(result, rows, metric_keys)
        tasks.append(result)
        all_rows.extend(rows)
    per_task = max((len(members) for members in by_task.values()), default=0)
    body: dict[str, Any] = {
        "benchmark": name,
        "mode": "sync",
        "harness_version": VLA_EVAL_VERSION,
        "created_at": datetime.now(UTC).isoformat(),
        "tasks": tasks,
        "config": {
            "benchmark": f"{row.benchmark}@v{row.benchmark_version}",
            **CONFIG_DEFAULTS,
            "name": name,
            "episodes_per_task": per_task,
        },
        "eval_id": row.id,
        "server_info": (arm.server or {}).get("metadata") or {"policy": {"label": arm.policy}},
        "render": RENDER,
        "metric_keys": metric_keys,
    }
    _aggregate(body, all_rows, metric_keys)
    body["num_episodes_total"] = len(all_rows)
    body["num_errors"] = sum(t.get("num_errors", 0) for t in tasks)
    body["seq"] = {
        "harness_version": f"seq-{__version__}",
        "benchmark": f"{row.benchmark}@v{row.benchmark_version}",
        "arguments": to_plain(row.arguments),
    }
    return body


def export_vla_eval(eval_id: str, directory: str | Path, store: Store | None = None) -> dict[str, Path]:
    """Write an eval's results in vla-eval's layout into `directory`; returns each aggregate file."""
    store = store or Store()
    row = store.find_eval(eval_id)  # the id, or a unique prefix of it
    if row is None:
        raise SeqInputError(f"no eval has id {eval_id!r} (seq eval ls lists them).")
    eval_id = row.id
    out = make_output_folder(directory)
    episodes = store.episodes(eval_id)
    arms = row.manifest.arms
    partial = row.status != COMPLETED or len(episodes) < store.count_items(eval_id)
    written: dict[str, Path] = {}
    for arm in arms:
        name = _safe(row.benchmark if len(arms) == 1 else f"{row.benchmark}_{arm.name}")
        mine = [e for e in episodes if e.arm == arm.name] if len(arms) > 1 else episodes
        body = _benchmark_result(name, mine, row, arm, out, store.path.parent)
        if partial:
            body["partial"] = True
        path = out / f"{name}_aggregate.json"
        path.write_text(json.dumps(body, indent=2, default=str))
        written[name] = path
    return written
