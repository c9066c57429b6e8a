"""Coverage, type-I error, gate false passes and power of seq's intervals and tests on clustered evals.

    python bench/coverage.py [--replications 300] [--seed 0] [--tables all]

Simulated evals of tasks × seeds × trials episodes (shapes 10x5x10, 1x20x10, 20x1x10, 5x4x5 and
the one-trial 10x5x1). Each task has a fixed success rate around the level of the column (0.1 to
0.95); each condition (task, seed) draws its own rate p_c ~ Beta with the task's rate as its mean
and intra-class correlation ρ = 1/(α + β + 1) at ICC 0, 0.1, 0.3 or 0.5 (p_c = the task's rate at
0); its trials are Bernoulli(p_c). A mean metric is task mean + √ρ·N(0, 1) per condition +
√(1 − ρ)·N(0, 1) per trial. Policies A and B draw their condition rates independently, so the
paired differences have the same ICC. The population target is the mean over the fixed tasks of
each task's expected value (for B − A, of the difference of the two).

Side by side, today's naive methods (every episode independent) and the clustered ones
(`seq.stats.clustered_interval`, `seq.stats.compare_paired(..., clusters=, strata=)`):

- coverage of the pooled rate's Wilson interval, a mean's bootstrap interval and the paired
  difference's Tango interval (target ≥ 0.93 for a nominal 95 %);
- the lower-bound gate's false passes (interval's low ≥ threshold) with the true rate exactly at
  the threshold (target ≤ 0.05);
- type-I error of "A better"/"B better" (rates, target ≤ 0.05), of "B higher"/"B lower" (means:
  the paired BCa bootstrap of before, Student's t unclustered and clustered; from n = 5 pairs)
  and of "within threshold" with B − A exactly at the +0.05 margin (target ≤ 0.025); the
  group-sequential test's "A/B better" (`seq.stats.sequential_test`, 5 looks, pairs in the
  engine's trial-major order, so each look adds two trials of every condition);
- power of "B better" at B − A = 0.10 (rates level ∓ 0.05, clipped to [0, 1]) at ICC 0: what
  clustering costs where there is nothing to cluster.

A clustered figure that misses its target by more than twice its Monte Carlo error (√(t(1 − t)/R)
for a target t over R replications: 0.007 at t = 0.05 and 0.008 at t = 0.93, R = 1000) is marked
`*`; one that misses by less, which a method of exactly the nominal size does in about half its
cells, `~`. Every cell has its own seed (from --seed and its place in the table): the table is the
same on every run, and one cell does not depend on others.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from seq.stats import SequentialDesign, clustered_interval, compare_paired, metric_interval, sequential_test
from seq.stats.paired import paired_bootstrap_interval

LEVEL = 0.95
COVERAGE_TARGET, ALPHA_TARGET, EQUIVALENCE_TARGET = 0.93, 0.05, 0.025
MARGIN, EFFECT = 0.05, 0.10
ICCS = (0.0, 0.1, 0.3, 0.5)
RATES = (0.1, 0.5, 0.8, 0.95)
BETTER = ("A better", "B better")
DIRECTION = ("B higher", "B lower")
EQUIVALENT = "within threshold"


@dataclass(frozen=True)
class Shape:
    """An eval's layout: `tasks` × `seeds` conditions per task × `trials` per condition."""

    tasks: int
    seeds: int
    trials: int

    @property
    def name(self) -> str:
        return f"{self.tasks}x{self.seeds}x{self.trials}"

    @property
    def episodes(self) -> int:
        return self.tasks * self.seeds * self.trials

    @property
    def clusters(self) -> list[int]:
        """Each episode's condition, in the order `outcomes` flattens them."""
        return np.repeat(np.arange(self.tasks * self.seeds), self.trials).tolist()

    @property
    def strata(self) -> list[int]:
        """Each episode's task."""
        return np.repeat(np.arange(self.tasks), self.seeds * self.trials).tolist()


SHAPES = (Shape(10, 5, 10), Shape(1, 20, 10), Shape(20, 1, 10), Shape(5, 4, 5), Shape(10, 5, 1))
PAIRED_SHAPES = (Shape(10, 5, 10), Shape(1, 20, 10), Shape(20, 1, 10), Shape(10, 5, 1))
SMALL_PAIRS = (5, 10, 20, 50)  # unclustered paired means: n independent pairs


def task_rates(level: float, tasks: int, shift: float = 0.0) -> np.ndarray:
    """Fixed rates of `tasks` tasks spread evenly around `level` (± a quarter of its distance to
    0 or 1), moved by `shift` and kept inside [0, 1]."""
    spread = 0.25 * min(level, 1 - level)
    return np.clip(level + spread * np.linspace(-1, 1, tasks) * (tasks > 1) + shift, 0.0, 1.0)


def condition_rates(
    rng: np.random.Generator, rates: np.ndarray, icc: float, reps: int, seeds: int
) -> np.ndarray:
    """[reps, tasks, seeds] condition success rates: Beta with mean the task's rate and ICC `icc`."""
    shape = (reps, len(rates), seeds)
    if icc == 0:
        return np.broadcast_to(rates[None, :, None], shape)
    concentration = (1 - icc) / icc  # α + β
    mean = rates[None, :, None]
    return rng.beta(mean * concentration, (1 - mean) * concentration, size=shape)


def outcomes(rng: np.random.Generator, rates: np.ndarray, trials: int) -> np.ndarray:
    """[reps, episodes] 0/1 outcomes, `trials` Bernoulli draws per condition."""
    draws = rng.random((*rates.shape, trials)) < rates[..., None]
    return draws.reshape(rates.shape[0], -1).astype(float)


def normal_values(rng: np.random.Generator, shape: Shape, icc: float, reps: int) -> np.ndarray:
    """[reps, episodes] of a mean metric: task mean (−1 to 1) + condition effect + trial noise."""
    means = np.linspace(-1, 1, shape.tasks) * (shape.tasks > 1)
    condition = math.sqrt(icc) * rng.standard_normal((reps, shape.tasks, shape.seeds, 1))
    trial = math.sqrt(1 - icc) * rng.standard_normal((reps, shape.tasks, shape.seeds, shape.trials))
    return (means[None, :, None, None] + condition + trial).reshape(reps, -1)


def cell_rng(seed: int, *place: int) -> np.random.Generator:
    return np.random.default_rng([seed, *place])


def share(flags: Sequence[bool]) -> float:
    return float(np.mean(flags))


def covers(low: float | None, high: float | None, target: float) -> bool:
    return low is not None and high is not None and low <= target <= high


# ---- the tables -------------------------------------------------------------------------------

Row = tuple[str, list[tuple[float, ...]]]  # a label and its cells, each a figure per method


@dataclass
class Table:
    """Rows of cells, each a (naive, clustered, ...) tuple of rates, printed under `title`."""

    title: str
    columns: Sequence[str]
    methods: Sequence[str]
    target: float
    above: bool  # the target is a floor (coverage, power) rather than a ceiling
    rows: list[Row]
    check: Sequence[bool] = ()  # which methods are held to the target (default: all but the first)

    def print(self, replications: int) -> None:
        noise = 2 * math.sqrt(self.target * (1 - self.target) / replications)
        width = 7 * len(self.methods)
        print(self.title)
        print(" " * 16 + "".join(f"{c:>{width}}" for c in self.columns))
        print(" " * 16 + "".join(f"{m:>6} " for m in self.methods) * len(self.columns))
        held = self.check or [i > 0 for i in range(len(self.methods))]
        for label, cells in self.rows:
            figures = (
                self._figure(v, h, noise) for cell in cells for v, h in zip(cell, held, strict=True)
            )
            print(f"{label:16}" + "".join(figures))
        print()

    def _figure(self, value: float, held: bool, noise: float) -> str:
        short = self.target - value if self.above else value - self.target
        mark = " " if short <= 0 or not held else "~" if short <= noise else "*"
        return f"{value:6.3f}{mark}"


def pooled_rates(reps: int, seed: int) -> tuple[Table, Table]:
    """Coverage of the pooled rate's Wilson interval and the lower-bound gate's false passes."""
    coverage, gate = [], []
    for s, shape in enumerate(SHAPES):
        clusters, strata = shape.clusters, shape.strata
        for i, icc in enumerate(ICCS):
            cov_cells, gate_cells = [], []
            for r, level in enumerate(RATES):
                rng = cell_rng(seed, 1, s, i, r)
                rates = task_rates(level, shape.tasks)
                truth = float(rates.mean())
                ys = outcomes(rng, condition_rates(rng, rates, icc, reps, shape.seeds), shape.trials)
                naive = [metric_interval(y, LEVEL, "rate") for y in ys]
                clustered = [clustered_interval(y, clusters, strata, LEVEL, "rate") for y in ys]
                cov_cells.append(
                    tuple(share([covers(x.low, x.high, truth) for x in way]) for way in (naive, clustered))
                )
                gate_cells.append(
                    tuple(
                        share([x.low is not None and x.low >= truth for x in way])
                        for way in (naive, clustered)
                    )
                )
            coverage.append((f"{shape.name:9} {icc:4.1f}", cov_cells))
            gate.append((f"{shape.name:9} {icc:4.1f}", gate_cells))
    columns = [f"rate {level}" for level in RATES]
    return (
        Table(
            "pooled rate, Wilson: coverage of the mean task rate (target >= 0.93)",
            columns,
            ("naive", "clust"),
            COVERAGE_TARGET,
            True,
            coverage,
        ),
        Table(
            "gate low >= threshold, true rate = threshold: false passes (target <= 0.05)",
            columns,
            ("naive", "clust"),
            ALPHA_TARGET,
            False,
            gate,
        ),
    )


def means(reps: int, seed: int) -> Table:
    """Coverage of a mean's bootstrap interval, naive and scaled by √deff."""
    rows: list[Row] = []
    for s, shape in enumerate(SHAPES):
        clusters, strata = shape.clusters, shape.strata
        cells = []
        for i, icc in enumerate(ICCS):
            ys = normal_values(cell_rng(seed, 2, s, i), shape, icc, reps)
            naive = [metric_interval(y, LEVEL, "mean") for y in ys]
            clustered = [clustered_interval(y, clusters, strata, LEVEL, "mean") for y in ys]
            cells.append(
                tuple(share([covers(x.low, x.high, 0.0) for x in way]) for way in (naive, clustered))
            )
        rows.append((f"{shape.name:16}", cells))
    return Table(
        "mean, BCa bootstrap: coverage of the mean task mean (target >= 0.93)",
        [f"ICC {icc}" for icc in ICCS],
        ("naive", "clust"),
        COVERAGE_TARGET,
        True,
        rows,
    )


Score = Callable[[list, list, float], tuple[tuple[float, ...], ...]]


def paired_rate_runs(
    reps: int, seed: int, table: int, shift: float, iccs: Sequence[float], score: Score
) -> list[list[Row]]:
    """For A at level − shift/2 and B at level + shift/2, per shape, ICC and level, the figures of
    `score(naive comparisons, clustered comparisons, true B − A)`: one list of rows per figure."""
    figures: list[list[Row]] = []
    for s, shape in enumerate(PAIRED_SHAPES):
        clusters, strata = shape.clusters, shape.strata
        for i, icc in enumerate(iccs):
            cells = []
            for r, level in enumerate(RATES):
                rng = cell_rng(seed, table, s, i, r)
                rate_a = task_rates(level, shape.tasks, -shift / 2)
                rate_b = task_rates(level, shape.tasks, shift / 2)
                a = outcomes(rng, condition_rates(rng, rate_a, icc, reps, shape.seeds), shape.trials)
                b = outcomes(rng, condition_rates(rng, rate_b, icc, reps, shape.seeds), shape.trials)
                naive = [
                    compare_paired(x, y, threshold=MARGIN, kind="rate") for x, y in zip(a, b, strict=True)
                ]
                clustered = [
                    compare_paired(x, y, threshold=MARGIN, kind="rate", clusters=clusters, strata=strata)
                    for x, y in zip(a, b, strict=True)
                ]
                cells.append(score(naive, clustered, float((rate_b - rate_a).mean())))
            label = f"{shape.name:9} {icc:4.1f}"
            if not figures:
                figures = [[] for _ in cells[0]]
            for figure, rows in enumerate(figures):
                rows.append((label, [cell[figure] for cell in cells]))
    return figures


def _rate_of(verdicts: Sequence[str]) -> Callable[[list, list, float], tuple[tuple[float, ...]]]:
    def score(naive: list, clustered: list, truth: float) -> tuple[tuple[float, ...]]:
        return (tuple(share([c.verdict in verdicts for c in way]) for way in (naive, clustered)),)

    return score


def _null(naive: list, clustered: list, truth: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Tango's coverage of the true difference, and how often a better verdict fires."""
    coverage = tuple(
        share([covers(c.difference.low, c.difference.high, truth) for c in way]) for way in (naive, clustered)
    )
    return coverage, _rate_of(BETTER)(naive, clustered, truth)[0]


def paired_rates(reps: int, seed: int) -> list[Table]:
    """Tango's coverage and the verdicts' type-I error with no true difference, false equivalence
    at the margin, and power at a true difference with ICC 0."""
    columns, methods = [f"rate {level}" for level in RATES], ("naive", "clust")
    coverage, type_one = paired_rate_runs(reps, seed, 3, 0.0, ICCS, _null)
    (margin,) = paired_rate_runs(reps, seed, 4, MARGIN, ICCS, _rate_of((EQUIVALENT,)))
    (power,) = paired_rate_runs(reps, seed, 5, EFFECT, (0.0,), _rate_of(("B better",)))
    return [
        Table(
            "paired rates, B - A = 0: Tango covers 0 (target >= 0.93)",
            columns,
            methods,
            COVERAGE_TARGET,
            True,
            coverage,
        ),
        Table(
            "paired rates, B - A = 0: 'A better' or 'B better' (target <= 0.05)",
            columns,
            methods,
            ALPHA_TARGET,
            False,
            type_one,
        ),
        Table(
            f"paired rates, B - A = +{MARGIN}, the margin: '{EQUIVALENT}' (target <= 0.025)",
            columns,
            methods,
            EQUIVALENCE_TARGET,
            False,
            margin,
        ),
        Table(
            f"paired rates, B - A = {EFFECT} (rate -/+ 0.05), ICC 0: power of 'B better'",
            columns,
            methods,
            0.0,
            True,
            power,
        ),
    ]


def paired_means(reps: int, seed: int) -> Table:
    """Type-I error of "B higher"/"B lower": the paired BCa bootstrap (before), Student's t
    unclustered and Student's t at the effective n."""
    layouts: list[tuple[str, Shape, tuple[float, ...]]]
    layouts = [(f"n {n} pairs", Shape(1, n, 1), (0.0,)) for n in SMALL_PAIRS]
    layouts += [(shape.name, shape, ICCS) for shape in SHAPES if shape.trials > 1]
    rows: list[Row] = []
    for s, (name, shape, iccs) in enumerate(layouts):
        clusters, strata = shape.clusters, shape.strata
        for i, icc in enumerate(iccs):
            rng = cell_rng(seed, 6, s, i)
            a, b = normal_values(rng, shape, icc, reps), normal_values(rng, shape, icc, reps)
            bootstrap, t, clustered = [], [], []
            for x, y in zip(a, b, strict=True):
                interval = paired_bootstrap_interval(x, y, LEVEL)
                bootstrap.append(interval.low > 0 or interval.high < 0)
                t.append(compare_paired(x, y, kind="mean").verdict in DIRECTION)
                together = compare_paired(x, y, kind="mean", clusters=clusters, strata=strata)
                clustered.append(together.verdict in DIRECTION)
            label = f"{name:9} {icc:4.1f}" if len(iccs) > 1 else f"{name:16}"
            rows.append((label, [(share(bootstrap), share(t), share(clustered))]))
    return Table(
        "paired means, no true difference: 'B higher' or 'B lower' (target <= 0.05)",
        ["B - A"],
        ("boot", "t", "t-cl"),
        ALPHA_TARGET,
        False,
        rows,
        check=(False, False, True),
    )


SEQUENTIAL_SHAPES = (Shape(10, 5, 10), Shape(1, 20, 10), Shape(20, 1, 10))


def sequential(reps: int, seed: int) -> Table:
    """Type-I error of the group-sequential test's "A better"/"B better" (5 looks over the pairs in
    the engine's trial-major order: each look adds two trials of every condition)."""
    rows: list[Row] = []
    for s, shape in enumerate(SEQUENTIAL_SHAPES):
        conditions = shape.tasks * shape.seeds
        clusters = [c for _ in range(shape.trials) for c in range(conditions)]
        strata = [c // shape.seeds for c in clusters]
        design = SequentialDesign(alpha=1 - LEVEL, max_pairs=shape.episodes, looks=5)
        for i, icc in enumerate(ICCS):
            cells = []
            for r, level in enumerate(RATES):
                rng = cell_rng(seed, 7, s, i, r)
                rates = task_rates(level, shape.tasks)
                a, b = (
                    outcomes(rng, condition_rates(rng, rates, icc, reps, shape.seeds), shape.trials)
                    .reshape(reps, conditions, shape.trials)
                    .transpose(0, 2, 1)
                    .reshape(reps, -1)
                    .tolist()
                    for _ in "ab"
                )
                naive = [sequential_test(x, y, design).decision for x, y in zip(a, b, strict=True)]
                clustered = [
                    sequential_test(x, y, design, clusters, strata).decision
                    for x, y in zip(a, b, strict=True)
                ]
                cells.append(tuple(share([d in BETTER for d in way]) for way in (naive, clustered)))
            rows.append((f"{shape.name:9} {icc:4.1f}", cells))
    return Table(
        "sequential test, 5 looks, B - A = 0: 'A better' or 'B better' (target <= 0.05)",
        [f"rate {level}" for level in RATES],
        ("naive", "clust"),
        ALPHA_TARGET,
        False,
        rows,
    )


TABLES = ("rates", "means", "paired", "paired-means", "sequential")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--replications", type=int, default=300, help="simulated evals per cell (default 300)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tables", nargs="+", choices=(*TABLES, "all"), default=["all"])
    args = parser.parse_args()
    if args.replications < 1:
        parser.error("--replications must be at least 1")
    chosen = TABLES if "all" in args.tables else tuple(args.tables)
    start = time.perf_counter()
    print(
        f"{args.replications} simulated evals per cell, seed {args.seed}, nominal level {LEVEL}\n"
        "rows: tasks x seeds x trials, ICC; a clustered figure that misses its target:\n"
        "'*' by more than twice its Monte Carlo error, '~' by less\n"
    )
    if "rates" in chosen:
        for table in pooled_rates(args.replications, args.seed):
            table.print(args.replications)
    if "means" in chosen:
        means(args.replications, args.seed).print(args.replications)
    if "paired" in chosen:
        for table in paired_rates(args.replications, args.seed):
            table.print(args.replications)
    if "paired-means" in chosen:
        paired_means(args.replications, args.seed).print(args.replications)
    if "sequential" in chosen:
        sequential(args.replications, args.seed).print(args.replications)
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
