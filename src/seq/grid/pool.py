"""The grid's pooled success: every distinct episode once, its interval clustered by condition.

Cells that share an arm (a policy that ignores a mode's parameter runs one arm for them all)
share its episodes: an episode is its eval and its work item, and the pool counts it once however
many cells measured it. The pooled interval is `seq.stats.clustered_interval` over those
episodes, each in its condition (the benchmark and the item id without arm and trial) and
stratified by its benchmark's task: the trials of a condition, and the arms that ran it, count as
what they are worth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from seq.grid.results import CellResult, success_rates


@dataclass(frozen=True)
class PooledEpisode:
    """One distinct episode of the pool: its outcome, its condition and its task."""

    success: float
    completion: float
    condition: tuple[str, ...]
    task: tuple[str, ...]


def distinct_episodes(cells: Sequence[CellResult]) -> dict[tuple[str, ...], PooledEpisode]:
    """Every distinct episode of `cells`, by (eval id, item id). A cell recorded without its
    episodes (a summary written before they were kept) counts its trials as episodes of its own,
    each its own condition."""
    found: dict[tuple[str, ...], PooledEpisode] = {}
    for cell in cells:
        benchmark = cell.benchmark_version or cell.family
        if not cell.episodes:
            for index in range(cell.n_trials):
                success = float(index < cell.n_success)
                anonymous = ("cell", cell.key, str(index))
                found[anonymous] = PooledEpisode(success, success, anonymous, ("cell", cell.key))
            continue
        for episode in cell.episodes:
            key = (str(cell.eval_id), str(episode["item_id"]))
            found.setdefault(
                key,
                PooledEpisode(
                    float(episode["success"]),
                    float(episode["completion"]),
                    (benchmark, str(episode["condition"])),
                    (benchmark, str(episode["task"])),
                ),
            )
    return found


def pooled(cells: Sequence[CellResult]) -> dict[str, Any]:
    """Success (with its clustered interval) and completion over the distinct episodes of
    `cells`: `n_trials` distinct episodes in `n_conditions` conditions, worth `effective_n`
    independent ones; `n_cell_trials` is the sum of the cells' own trials (more, where cells share
    an arm)."""
    episodes = list(distinct_episodes(cells).values())
    rates, interval = success_rates(
        [e.success for e in episodes],
        [e.completion for e in episodes],
        [e.condition for e in episodes],
        [e.task for e in episodes],
    )
    return {
        **rates,
        "n_conditions": interval.conditions or 0,
        "effective_n": interval.effective_n if episodes else 0.0,
        "interval": interval.method,
        "n_cell_trials": sum(cell.n_trials for cell in cells),
    }
