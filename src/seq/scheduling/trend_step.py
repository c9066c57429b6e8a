"""One step of a trend: the eval that stands for each version, and a version against the one
before it on the episodes both ran.

An episode is its condition and its trial (`episode_key`), whatever the arm and however many
trials its eval ran: trial 0 of an eval of one trial (item ids without `|trial=0`) is trial 0 of
an eval of ten. An episode that either side lost to an error is left out of the paired
statistics, and the step says which; where the newer version lost episodes the older one ran,
its verdict says so in place of the comparison's (never "within threshold" on what is left).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from seq.record.episode import EpisodeResult
from seq.record.store import COMPLETED
from seq.stats import compare_paired

# Why an episode is left out of a step's paired statistics (`TrendStep.left_out`'s keys).
NEWER_ERRORED = "newer errored"  # the newer version errored where the older one ran
OLDER_ERRORED = "older errored"
BOTH_ERRORED = "both errored"
ONLY_OLDER = "only older"  # the newer version's eval has no such episode
ONLY_NEWER = "only newer"
LEFT_OUT = (NEWER_ERRORED, OLDER_ERRORED, BOTH_ERRORED, ONLY_OLDER, ONLY_NEWER)

A_BETTER = "A better"  # the one verdict of `compare_paired` an error of the newer cannot flatter


def episode_key(episode: EpisodeResult) -> str:
    """What pairs an episode across evals: its condition and its trial."""
    return f"{episode.condition_key}|trial={episode.trial}"


@dataclass(frozen=True)
class Candidate:
    """What choosing a version's stand-in reads of one of its evals (one arm of it)."""

    eval_id: str
    status: str
    episodes: int
    full: bool  # it ran every task of the suites it ran (no --tasks)
    created_at: float


def stand_in(
    version: int, candidates: Sequence[Candidate], named: str | None = None
) -> tuple[int, str | None]:
    """Which of a version's evals (oldest first) stands for it, and a caveat where it is not
    plainly the best: the one the user named; else the one with the most episodes on the
    benchmark's full conditions (completed before not, then the newest, then its first arm);
    else, where none ran them all, the one with the most episodes."""
    if named is not None:
        index = next(i for i, c in enumerate(candidates) if c.eval_id == named)
    else:
        index = max(
            range(len(candidates)),
            key=lambda i: (
                candidates[i].full,
                candidates[i].episodes,
                candidates[i].status == COMPLETED,
                candidates[i].created_at,
                -i,  # of an eval's arms, the first
            ),
        )
    chosen = candidates[index]
    reasons = []
    if not chosen.full:
        reasons.append(
            "it did not run every task of the benchmark"
            if named is not None
            else f"no eval of v{version} ran every task of the benchmark"
        )
    if chosen.status != COMPLETED:
        reasons.append("it did not complete")
    if not reasons:
        return index, None
    episodes = f"{chosen.episodes} episode{'' if chosen.episodes == 1 else 's'}"
    how = "as named" if named is not None else "with the most episodes"
    return index, (
        f"{chosen.eval_id} ({chosen.status}, {episodes}) stands for v{version} {how}: {'; '.join(reasons)}"
    )


@dataclass(frozen=True)
class Pairing:
    """The episodes two evals share with the metric on both sides (each pair's values, condition
    and task), and those left out, by why (`LEFT_OUT`), as episode keys."""

    keys: list[str]
    older: list[float]
    newer: list[float]
    conditions: list[str]
    tasks: list[str]
    left_out: dict[str, list[str]] = field(default_factory=dict)


def pair(older: Sequence[EpisodeResult], newer: Sequence[EpisodeResult], metric: str) -> Pairing:
    """Pair two evals' episodes (one arm each) by `episode_key`; an errored episode (on either
    side) is left out and named, as is one the other eval did not run."""
    before = {episode_key(e): e for e in older}
    after = {episode_key(e): e for e in newer}
    keys, a_values, b_values, conditions, tasks = [], [], [], [], []
    left_out: dict[str, list[str]] = {}
    for key in sorted(before.keys() | after.keys()):
        a, b = before.get(key), after.get(key)
        if a is None or b is None:
            left_out.setdefault(ONLY_NEWER if a is None else ONLY_OLDER, []).append(key)
        elif not (a.ok or b.ok):
            left_out.setdefault(BOTH_ERRORED, []).append(key)
        elif not b.ok:
            left_out.setdefault(NEWER_ERRORED, []).append(key)
        elif not a.ok:
            left_out.setdefault(OLDER_ERRORED, []).append(key)
        elif metric in a.metrics and metric in b.metrics:
            keys.append(key)
            a_values.append(a.metrics[metric])
            b_values.append(b.metrics[metric])
            conditions.append(b.condition_key)
            tasks.append(b.task)
    return Pairing(
        keys,
        a_values,
        b_values,
        conditions,
        tasks,
        {why: left_out[why] for why in LEFT_OUT if why in left_out},
    )


def compare(pairing: Pairing, metric: str, threshold: float, kind: str | None) -> dict[str, Any]:
    """`compare_paired` over the pairs, as a dict: clustered by condition within tasks, so that
    the trials of one condition count as what they are worth."""
    compared = compare_paired(
        pairing.older,
        pairing.newer,
        metric,
        threshold,
        kind=kind,
        clusters=pairing.conditions,
        strata=pairing.tasks,
    )
    return asdict(compared)


def step_verdict(compared: Mapping[str, Any] | None, pairing: Pairing, before: int, after: int) -> str | None:
    """The step's verdict: the comparison's, unless the newer version lost episodes to errors
    that the older one did not: then that, whatever the shared episodes say (short of A being
    better on them too)."""
    lost = len(pairing.left_out.get(NEWER_ERRORED, []))
    verdict = compared["verdict"] if compared is not None else None
    if lost and verdict != A_BETTER:
        return f"v{after} errored on {lost} episode{'' if lost == 1 else 's'} v{before} ran"
    return verdict


def no_interval(compared: Mapping[str, Any]) -> str | None:
    """Why the difference has no interval, where it has none."""
    if compared["n"] < 2:  # one difference has no spread: never a zero-width interval
        return f"too few shared episodes ({compared['n']}; it takes 2)"
    difference = compared["difference"]
    if math.isfinite(difference["low"]) and math.isfinite(difference["high"]):
        return None
    return f"the interval of the differences is degenerate ({difference['method']})"


def by_task(keys: Sequence[str]) -> dict[str, int]:
    """How many of these episode keys each task holds (a key starts with its task)."""
    return dict(Counter(key.split("|", 1)[0] for key in keys))


def flat_parameters(parameters: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """An arm's parameters (side → name → value) as `side.name` → value."""
    return {f"{side}.{name}": value for side, values in parameters.items() for name, value in values.items()}


def differing(older: Mapping[str, Any], newer: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The parameters whose values differ between two arms: name → [older, newer] (None where
    one side has none)."""
    return {
        name: [older.get(name), newer.get(name)]
        for name in sorted(older.keys() | newer.keys())
        if older.get(name) != newer.get(name)
    }
