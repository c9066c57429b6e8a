"""What the difficulty gate promotes, simulated: how often a candidate with no true drop passes,
and whether the drop the report shows for the promoted ones is the true one.

One simulated cycle: `conditions` conditions with success rates drawn from `rates`; the cycle's
trials choose the `seeds` conditions that failed at least once and succeeded most (at least
`drop + margin` of the time), as `seq.evolve.operators.generate` does; each seed gets one
candidate, judged by the real gate (`seq.evolve.evidence.difficulty`, `seq.evolve.gates.decide`)
on fresh trials and re-estimated (`seq.evolve.evidence.estimate`) on trials of its own. Beside
it, the evidence as it was before: the candidate measured on the trials that chose its seed,
gated by the Agresti–Min interval above 0.

Two kinds of candidate:
- `SHIFT`: success `true_drop` below its seed's; on a share `coupling` of the trials its outcome
  follows the seed's act seed (the same noise), on the others it is independent;
- `HORIZON`: the step limit cut to `fraction` × the median steps of the seed's successes on the
  cycle's trials; an episode's steps are fixed by its act seed, so the candidate succeeds on a
  trial exactly when the seed succeeded within the limit (its true drop follows from the limit).

`python -m seq.evolve.simulation` prints the table in docs/evolve.md.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from seq.evolve.evidence import TrialBlocks, difficulty, estimate
from seq.evolve.gates import PROMOTE, Thresholds, decide
from seq.stats.paired import agresti_min_interval, paired_table

SHIFT, HORIZON = "shift", "horizon"
STEPS_MEAN, STEPS_SD = 100.0, 15.0  # a success's steps: Normal, fixed by the trial's act seed
ALL_PASS: dict[str, dict[str, Any]] = {  # every critic agrees: only the difficulty gate decides
    "solvability": {"reference_success": 1.0, "episodes": 2, "distinct": 2},
    "safety": {"verdict": "pass"},
    "robustness": {"verdict": "pass"},
    "semantic": {"verdict": "skipped"},
}


@dataclass(frozen=True)
class Summary:
    """Per candidate kind and true drop: how many candidates, how many promoted, and the mean
    true and reported drop (and seed rate) among the promoted, by the gate and by the old way."""

    candidates: int
    promoted: int
    true_drop: float  # mean among the promoted (nan: none)
    reported_drop: float  # mean re-estimated drop among the promoted
    bias_se: float  # the standard error of mean(reported − true) among the promoted
    seed_true: float  # the promoted seeds' true success rate, mean
    seed_selection: float  # their rate on the trials that chose them, mean
    seed_fresh: float  # their rate on the estimate's trials, mean
    old_promoted: int
    old_true_drop: float
    old_reported_drop: float  # the selection-time drop, as the report showed it before
    per_cycle: list[int] = field(default_factory=list, repr=False)  # promotions in each cycle

    @property
    def rate(self) -> float:
        return self.promoted / self.candidates if self.candidates else math.nan

    @property
    def old_rate(self) -> float:
        return self.old_promoted / self.candidates if self.candidates else math.nan

    @property
    def bias(self) -> float:
        return self.reported_drop - self.true_drop


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else math.nan


def _candidate_outcomes(
    kind: str,
    p: float,
    true_drop: float,
    coupling: float,
    noise: np.ndarray,
    steps: np.ndarray,
    limit: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """The candidate's 0/1 outcomes on trials whose act-seed noise is `noise` (and steps `steps`)."""
    seed_success = noise < p
    if kind == HORIZON:
        return (seed_success & (steps <= limit)).astype(float)
    own = rng.random(len(noise))
    follows = rng.random(len(noise)) < coupling
    return (np.where(follows, noise, own) < max(0.0, p - true_drop)).astype(float)


def simulate(
    true_drop: float = 0.0,
    kind: str = SHIFT,
    *,
    cycles: int = 1000,
    conditions: int = 30,
    seeds: int = 2,
    trials: int = 10,
    coupling: float = 0.5,
    fraction: float = 1.0,
    rates: tuple[float, float] = (0.3, 1.0),
    thresholds: Thresholds | None = None,
    seed: int = 0,
) -> Summary:
    """Simulate `cycles` cycles and summarise what the gate promoted (see the module's docstring)."""
    t = thresholds or Thresholds()
    rng = np.random.default_rng(seed)
    blocks = TrialBlocks(trials)
    everything = blocks.estimate.stop
    least = t.drop + t.margin
    candidates = promoted = old_promoted = 0
    new: dict[str, list[float]] = {k: [] for k in ("true", "reported", "seed_true", "seed_sel", "seed_fresh")}
    old: dict[str, list[float]] = {"true": [], "reported": []}
    per_cycle = []
    for _ in range(cycles):
        p = rng.uniform(*rates, size=conditions)
        noise = rng.random((conditions, everything))  # a trial's act seed, as the noise it draws
        steps = rng.normal(STEPS_MEAN, STEPS_SD, size=(conditions, everything))
        success = noise < p[:, None]
        chosen_rate = success[:, blocks.selection].mean(axis=1)
        eligible = [c for c in range(conditions) if least <= chosen_rate[c] < 1.0]
        eligible.sort(key=lambda c: -chosen_rate[c])
        this_cycle = 0
        for c in eligible[:seeds]:
            candidates += 1
            wins = steps[c, blocks.selection][success[c, blocks.selection]]
            limit = fraction * float(np.median(wins))
            cand = _candidate_outcomes(kind, p[c], true_drop, coupling, noise[c], steps[c], limit, rng)
            truth = true_drop
            if kind == HORIZON:
                truth = p[c] * 0.5 * math.erfc((limit - STEPS_MEAN) / (STEPS_SD * math.sqrt(2)))
            seed_runs = dict(enumerate(success[c].astype(float)))
            cand_runs = dict(enumerate(cand))
            hard = difficulty(seed_runs, cand_runs, blocks.gate, t.alpha)
            if decide(hard, ALL_PASS, math.inf, t)[0] == PROMOTE:
                promoted += 1
                this_cycle += 1
                found = estimate(seed_runs, cand_runs, blocks.estimate)
                new["true"].append(truth)
                new["reported"].append(found["drop"])
                new["seed_true"].append(float(p[c]))
                new["seed_sel"].append(float(chosen_rate[c]))
                new["seed_fresh"].append(found["seed_success"])
            # before: the candidate measured on the trials that chose its seed
            chosen = list(blocks.selection)
            table = paired_table(list(cand[chosen]), list(success[c, chosen].astype(float)))
            interval = agresti_min_interval(table)
            if interval.difference >= t.drop and interval.low > 0:
                old_promoted += 1
                old["true"].append(truth)
                old["reported"].append(interval.difference)
        per_cycle.append(this_cycle)
    differences = [r - x for r, x in zip(new["reported"], new["true"], strict=True)]
    se = statistics.stdev(differences) / math.sqrt(len(differences)) if len(differences) > 1 else math.nan
    return Summary(
        candidates,
        promoted,
        _mean(new["true"]),
        _mean(new["reported"]),
        se,
        _mean(new["seed_true"]),
        _mean(new["seed_sel"]),
        _mean(new["seed_fresh"]),
        old_promoted,
        _mean(old["true"]),
        _mean(old["reported"]),
        per_cycle,
    )


def _cell(value: float, digits: int = 2) -> str:
    return "—" if value != value else f"{value:+.{digits}f}"


CASES: list[tuple[str, dict[str, object]]] = [
    ("no drop, independent, close rates", {"coupling": 0.0, "conditions": 100, "rates": (0.5, 0.7)}),
    ("no drop, coupling 0.5", {}),
    ("drop 0.2, coupling 0.5", {"true_drop": 0.2}),
    ("drop 0.4, coupling 0.5", {"true_drop": 0.4}),
    ("horizon at the median", {"kind": HORIZON}),
    ("horizon at 0.8× the median", {"kind": HORIZON, "fraction": 0.8}),
]


def table(cycles: int = 2000, seed: int = 0) -> str:
    """The comparison in docs/evolve.md, as Markdown: each case of `CASES` (30 conditions with
    rates from 0.3 to 1, 2 seeds a cycle, 10 trials a block, unless it says otherwise)."""
    rows = [
        "| candidates | promoted: before / now | drop shown (true) for the promoted: before / now "
        "| seed's rate: choosing trials / true / fresh |",
        "|---|---|---|---|",
    ]
    for name, options in CASES:
        found = simulate(**options, cycles=cycles, seed=seed)  # type: ignore[arg-type]
        rows.append(
            f"| {name} | {found.old_rate:.1%} / {found.rate:.1%} | "
            f"{_cell(found.old_reported_drop)} ({_cell(found.old_true_drop)}) / "
            f"{_cell(found.reported_drop)} ({_cell(found.true_drop)}) | "
            f"{found.seed_selection:.2f} / {found.seed_true:.2f} / {found.seed_fresh:.2f} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":  # pragma: no cover
    print(table())
