"""The evidence a candidate condition is judged on, from trials that never chose it.

A cycle's eval runs trials 0 … T−1 of each condition (each trial's act seeds are hashed from the
condition's seed and the trial), and the failure seeds are chosen from those episodes: the
conditions that failed at least once and succeeded most, a horizon cut at the median steps of
their successes. Measured on the same trials, a candidate's drop carries no new randomness (a
horizon at the median of those very episodes fails exactly those that took longer) and a seed's
rate is the top of the conditions that happened to fail once. So each condition's trials come in
blocks of T (`TrialBlocks`):

- selection, 0 … T−1: the cycle's eval; chooses the seeds, the clusters and the horizons;
- gate, T … 2T−1: the seed condition and the candidate, on the same act seeds (they pair up
  trial by trial), judged by a one-sided exact McNemar test (`difficulty`);
- estimate, 2T … 3T−1: run again for the candidates that passed or wait for review, so that the
  drop the report shows was measured on trials that neither chose the candidate nor promoted it
  (`estimate`): among the promoted it is unbiased, where the gate's own drop would be inflated
  by the selection the gate made.

The reference's evidence (`reference_evidence`) counts its distinct outcomes: a deterministic
reference's identical episodes are one outcome, however many times it ran.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from seq.stats.exact import mcnemar_exact_greater
from seq.stats.paired import paired_table, tango_interval

EXACT_TEST = "exact McNemar, one-sided"
TIMING_METRICS = ("duration_s", "cpu_s")  # differ between identical episodes
Runs = Mapping[int, float | None]  # trial → success (0/1), None where the episode errored


@dataclass(frozen=True)
class TrialBlocks:
    """Which trials of a condition choose, gate and estimate, `per_block` trials each."""

    per_block: int

    @property
    def selection(self) -> range:
        return range(0, self.per_block)

    @property
    def gate(self) -> range:
        return range(self.per_block, 2 * self.per_block)

    @property
    def estimate(self) -> range:
        return range(2 * self.per_block, 3 * self.per_block)

    def named(self) -> dict[str, range]:
        return {"selection": self.selection, "gate": self.gate, "estimate": self.estimate}


def span(trials: range) -> str:
    """`trials 10–19`: a block as a person reads it."""
    return f"trials {trials.start}–{trials.stop - 1}" if len(trials) > 1 else f"trial {trials.start}"


def pairs(seed_runs: Runs, candidate_runs: Runs, trials: range) -> tuple[list[float], list[float], int]:
    """The seed's and the candidate's outcomes (0/1) on the same trials of `trials` (the same
    act seeds), and how many of those trials were left out: either episode missing or errored
    (None; an error says nothing about how hard a condition is)."""
    seed, candidate, left_out = [], [], 0
    for trial in trials:
        first, second = seed_runs.get(trial), candidate_runs.get(trial)
        if first is None or second is None:
            left_out += 1
            continue
        seed.append(float(first))
        candidate.append(float(second))
    return seed, candidate, left_out


def _rate(outcomes: Sequence[float]) -> float:
    return sum(outcomes) / len(outcomes) if outcomes else math.nan


def difficulty(seed_runs: Runs, candidate_runs: Runs, trials: range, alpha: float) -> dict[str, Any]:
    """The gate's evidence: the target's drop from the seed condition to the candidate on the
    fresh `trials`, paired by trial, with the one-sided exact McNemar p-value of "no drop"."""
    seed, candidate, left_out = pairs(seed_runs, candidate_runs, trials)
    table = paired_table(candidate, seed)  # B − A: the seed minus the candidate, the drop
    return {
        "trials": [trials.start, trials.stop],
        "seed_success": _rate(seed),
        "candidate_success": _rate(candidate),
        "drop": table.difference,
        "pairs": table.n,
        "seed_only": table.only_b,
        "candidate_only": table.only_a,
        "p_value": mcnemar_exact_greater(table) if table.n else 1.0,
        "alpha": alpha,
        "test": EXACT_TEST,
        "left_out": left_out,
    }


def estimate(seed_runs: Runs, candidate_runs: Runs, trials: range) -> dict[str, Any]:
    """The drop re-estimated on `trials` the gate did not see, with Tango's 95 % score interval
    for the paired difference (`seq.stats.tango_interval`) and its pairs."""
    seed, candidate, left_out = pairs(seed_runs, candidate_runs, trials)
    table = paired_table(candidate, seed)
    interval = tango_interval(table) if table.n else None
    return {
        "trials": [trials.start, trials.stop],
        "seed_success": _rate(seed),
        "candidate_success": _rate(candidate),
        "drop": table.difference,
        "low": interval.low if interval else math.nan,
        "high": interval.high if interval else math.nan,
        "pairs": table.n,
        "method": interval.method if interval else "tango",
        "left_out": left_out,
    }


def estimate_text(found: Mapping[str, Any]) -> str:
    """`+0.50 [+0.17, +0.73] (n 10)`: a drop with its interval and pairs."""
    return f"{found['drop']:+.2f} [{found['low']:+.2f}, {found['high']:+.2f}] (n {found['pairs']})"


def outcome_of(episode: Any) -> tuple[Any, ...]:
    """What an episode came to, timing aside: two episodes with the same outcome are one piece of
    evidence (a deterministic policy's repeats)."""
    metrics = {k: v for k, v in (episode.metrics or {}).items() if k not in TIMING_METRICS}
    return (episode.status, episode.ended_by, episode.steps, tuple(sorted(metrics.items())))


def reference_evidence(runs: Sequence[tuple[float, Any]], limit: int) -> dict[str, Any]:
    """The reference on a candidate: its success over its episodes, how many distinct outcomes
    they are, and how many steps its slowest success left of the candidate's step `limit`."""
    successes = [episode.steps for success, episode in runs if success >= 1.0]
    most = max(successes, default=None)
    return {
        "success": _rate([s for s, _ in runs]),
        "episodes": len(runs),
        "distinct": len({outcome_of(episode) for _, episode in runs}),
        "limit": limit,
        "steps": most,
        "spare": None if most is None else limit - most,
    }


def thin_margin(reference: Mapping[str, Any], share: float) -> bool:
    """Whether the reference's success rests on one outcome (every episode the same) that
    finished within `share` of the step limit of its end: a few steps' change would undo it."""
    spare = reference.get("spare")
    if spare is None or reference.get("distinct") != 1:
        return False
    return bool(spare < share * reference["limit"])
