"""A cell's result, read from its eval's report: rates with intervals, per-task rows, and its error.

`completion_rate` is partial credit: the mean of a benchmark's sub-goal metric `completion` where
its checks report one, else the success rate. A cell is an error cell when its eval raised, when
any of its episodes errored, or when episodes it owes were left without a result. A cell's
interval, as the pool's, counts the trials of one condition as what they are worth.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from seq.grid.cells import Cell
from seq.record.states import EpisodeStatus
from seq.stats import RATE, Interval, clustered_interval

TIMINGS = ("wall_clock_s", "eval_wall_s", "eval_id")  # what differs between two runs of one grid


@dataclass
class CellResult:
    """One cell's numbers (what a row of summary.tsv holds, and its tasks)."""

    mode: str
    policy: str
    family: str
    variation: str
    suite: str
    key: str
    success_rate: float | None = None
    success_low: float | None = None
    success_high: float | None = None
    completion_rate: float | None = None
    avg_reward: float | None = None
    n_success: int = 0
    n_trials: int = 0
    n_conditions: int = 0  # the conditions (task, seed, variation) its n_trials ran
    n_timed_out: int = 0
    wall_clock_s: float = 0.0
    error: str | None = None
    eval_id: str | None = None
    eval_wall_s: float | None = None
    arm: str = ""
    benchmark_version: str | None = None  # NAME@vN the eval ran (a resume refuses to pool another)
    policy_version: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    tasks: list[dict[str, Any]] = field(default_factory=list)
    # each episode it counts: item_id, task, condition, success, completion (`seq.grid.pool`)
    episodes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def row(self) -> str:
        return f"{self.mode}@{self.policy}"

    @property
    def column(self) -> str:
        return f"{self.family}/{self.variation}"

    def to_dict(self, episodes: bool = True) -> dict[str, Any]:
        """Its fields; without `episodes`, what summary.json shows of it (its numbers)."""
        data = asdict(self)
        if not episodes:
            del data["episodes"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CellResult:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def blank(cell: Cell) -> CellResult:
    return CellResult(
        cell.mode, cell.policy.id, cell.family, cell.variation, cell.suite, cell.key,
        params={k: str(v) for k, v in cell.params.items()},
    )  # fmt: skip


def errored(cell: Cell, error: str, eval_id: str | None = None) -> CellResult:
    """A cell whose eval raised (or never started): no numbers, its error."""
    result = blank(cell)
    result.error, result.eval_id = error, eval_id
    return result


def last_line(text: str | None) -> str:
    lines = [line.strip() for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1] if lines else "error"


def _success(episode: Any) -> bool:
    return episode.ok and float(episode.metrics.get("success", 0.0)) >= 0.5


def _completion(episode: Any) -> float:
    return float(episode.metrics.get("completion", float(_success(episode))))


def _rates(episodes: list[Any]) -> dict[str, Any]:
    """Success with its interval, clustered by condition within tasks (`seq.stats`), completion
    and reward over `episodes`."""
    rewards = [float(e.metrics["return"]) for e in episodes if "return" in e.metrics]
    rates, interval = success_rates(
        [float(_success(e)) for e in episodes],
        [_completion(e) for e in episodes],
        [e.condition_key for e in episodes],
        [e.task for e in episodes],
    )
    rates["avg_reward"] = sum(rewards) / len(rewards) if rewards else None
    rates["n_conditions"] = interval.conditions or 0
    return rates


def success_rates(
    successes: list[float], completions: list[float], conditions: list[Any], tasks: list[Any]
) -> tuple[dict[str, Any], Interval]:
    """Success and completion rates of episodes given as parallel lists, success with its
    interval clustered by condition within tasks; and that interval."""
    n, wins = len(successes), int(sum(successes))
    interval = clustered_interval(successes, conditions, tasks, kind=RATE)
    rates = {
        "n_trials": n,
        "n_success": wins,
        "success_rate": wins / n if n else None,
        "success_low": interval.low,
        "success_high": interval.high,
        "completion_rate": sum(completions) / n if n else None,
    }
    return rates, interval


def _episode(episode: Any) -> dict[str, Any]:
    """What the pool keeps of an episode: which it is, its condition and task, its outcome."""
    success = _success(episode)
    return {
        "item_id": episode.item_id,
        "task": episode.task,
        "condition": episode.condition_key,
        "success": float(success),
        "completion": _completion(episode),
    }


def last_attempts(episodes: Iterable[Any]) -> list[Any]:
    """Each work item's last attempt (what the report counts), in plan order."""
    latest: dict[str, Any] = {}
    for episode in episodes:
        kept = latest.get(episode.item_id)
        if kept is None or episode.attempt >= kept.attempt:
            latest[episode.item_id] = episode
    return list(latest.values())


def _versions(report: Any, arm: str) -> tuple[str | None, str | None]:
    """The benchmark's and the arm's policy's NAME@vN, as the eval's manifest pins them."""
    manifest = getattr(report, "manifest", None)
    if manifest is None:
        return None, None
    arms = [a for a in manifest.arms if a.name == arm] or manifest.arms[:1]
    policy = arms[0].policy if arms else manifest.policy.label
    return manifest.benchmark.label, policy


def from_report(cell: Cell, report: Any, arm: str) -> CellResult:
    """The cell measured by arm `arm` of the eval `report` describes."""
    single = len(report.arms) <= 1
    mine = [e for e in last_attempts(report.episodes) if e.arm == arm or (single and e.arm == "")]
    result = blank(cell)
    result.arm, result.eval_id = arm, report.eval_id
    # the suites the episodes ran in: the benchmark's own (`suite_of`), else the one the eval named
    # or its default
    ran = list(dict.fromkeys(e.suite for e in mine if e.suite)) or report.arguments.suites
    result.suite = ",".join(ran) or result.suite
    result.eval_wall_s = report.cost.get("wall_s")
    result.benchmark_version, result.policy_version = _versions(report, arm)
    result.wall_clock_s = round(sum(e.duration_s for e in mine), 3)
    result.n_timed_out = sum(e.status == EpisodeStatus.TIMED_OUT for e in mine)
    for key, value in _rates(mine).items():
        setattr(result, key, value)
    by_task: dict[str, list[Any]] = {}
    for episode in mine:
        by_task.setdefault(episode.task, []).append(episode)
    result.tasks = [{"task_id": task, **_rates(items)} for task, items in by_task.items()]
    result.episodes = [_episode(e) for e in mine]
    errors = [e for e in mine if e.status == EpisodeStatus.ERROR]
    owed = [u for u in report.unfinished if u.arm == arm or (single and u.arm == "")]
    if errors:
        result.error = f"{len(errors)} of {len(mine)} episodes errored: {last_line(errors[0].error)}"
    elif owed:
        result.error = f"{len(owed)} episodes unfinished: {owed[0].reason}"
    elif not mine:
        result.error = f"eval {report.eval_id} ran no episode ({report.status})"
    return result
