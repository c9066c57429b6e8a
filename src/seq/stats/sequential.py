"""Sequential comparison of paired 0/1 outcomes: stop as soon as the pairs so far decide.

Two procedures, both on the discordant pairs (the pairs where exactly one of A, B succeeds), whose
signs under H0 (equal rates) are fair coin flips whatever the concordant pairs do:

- `sequential_test`: a group-sequential test with a horizon. McNemar's statistic
  Z_k = (only_b − only_a)/sqrt(only_a + only_b) is looked at after `looks` equally spaced batches
  of pairs, against two-sided O'Brien–Fleming-type boundaries from Lan–DeMets alpha spending. The
  boundaries are computed at each look from the information actually seen (the discordant count),
  by recursive numerical integration of the score process (Armitage, McPherson & Rowe 1969).
- `e_process`: an anytime-valid e-process for open-ended monitoring, valid under any stopping rule.

The planning assumption (`SequentialDesign.discordance`) only sizes the horizon; type I error does
not depend on it.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from seq.stats.paired import (
    DifferenceInterval,
    PairedTable,
    effective_table,
    pair_design_effect,
    paired_table,
    tango_limits,
)

_MIN_POINTS, _MAX_POINTS = 101, 4001
UNDECIDED = "undecided (not significant)"


def obrien_fleming_spending(t: float, alpha: float = 0.05) -> float:
    """Two-sided Lan–DeMets O'Brien–Fleming-type alpha spent by information time t ∈ [0, 1].

    Each side spends α/2 by the one-sided function 2 − 2Φ(z_{1−α/4}/√t), so the total is
    α(t) = 4 − 4Φ(z_{1−α/4}/√t), α(1) = α (Lan & DeMets 1983, Biometrika 70:659–663; the
    convention of gsDesign's sfLDOF and ldbounds). With 5 equal looks at α = 0.05 the boundaries
    are 4.877, 3.357, 2.680, 2.290, 2.031.
    """
    from scipy import special

    if t <= 0:
        return 0.0
    return float(min(alpha, 4 * special.ndtr(special.ndtri(alpha / 4) / math.sqrt(min(t, 1.0)))))


def _pdf(x: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _simpson(bound: float, points: int) -> tuple[np.ndarray, np.ndarray]:
    grid = np.linspace(-bound, bound, points)
    weights = np.full(points, 2.0)
    weights[1::2], weights[0], weights[-1] = 4.0, 1.0, 1.0
    return grid, weights * (grid[1] - grid[0]) / 3


class ScoreWalk:
    """The score process S_k (variance = information I_k, mean = drift·I_k) of a group-sequential
    test, carried look by look as its sub-density on the region not yet stopped.

    Recursive numerical integration (Armitage, McPherson & Rowe 1969, JRSS A 132:235–244; Jennison
    & Turnbull 2000, ch. 19): with σ² = I_k − I_{k−1}, μ = drift·σ² and b = c_k·sqrt(I_k),
    P(first exit above at k) = ∫ f_{k−1}(s) Φ((s + μ − b)/σ) ds, and
    f_k(u) = ∫ f_{k−1}(s) φ((u − s − μ)/σ)/σ ds on (−b, b), by Simpson's rule on a grid no coarser
    than σ/4.
    """

    def __init__(self, drift: float = 0.0) -> None:
        self.drift, self.info = drift, 0.0
        self.bound: float | None = None
        self._parent: tuple[np.ndarray, np.ndarray, float, float] | None = None
        self._grid: tuple[float, np.ndarray, np.ndarray] | None = None

    def _density(self, u: np.ndarray) -> np.ndarray:
        if self._parent is None:
            sd = math.sqrt(self.info)
            return _pdf((u - self.drift * self.info) / sd) / sd
        grid, weighted, sd, shift = self._parent
        return weighted @ _pdf((u[None, :] - grid[:, None] - shift) / sd) / sd

    def _materialise(self, sd: float) -> tuple[np.ndarray, np.ndarray]:
        assert self.bound is not None  # the first look has no grid to carry
        if self._grid is None or self._grid[0] != sd:
            points = min(_MAX_POINTS, max(_MIN_POINTS, 2 * math.ceil(4 * self.bound / sd) + 1))
            grid, weights = _simpson(self.bound, points)
            self._grid = (sd, grid, weights * self._density(grid))
        return self._grid[1], self._grid[2]

    def crossing(self, info: float, c: float) -> tuple[float, float]:
        """P(first |Z| ≥ c at the next look, above and below), Z = S/sqrt(info)."""
        return self._crossing(info, c)[:2]

    def _crossing(self, info: float, c: float) -> tuple[float, float, float]:
        """(upper, lower, d(upper + lower)/dc)."""
        from scipy import special

        if self.bound is None:
            mean = self.drift * math.sqrt(info)
            slope = -_pdf(np.array([mean - c, -c - mean])).sum()
            return float(special.ndtr(mean - c)), float(special.ndtr(-c - mean)), float(slope)
        sd, shift, b = math.sqrt(info - self.info), self.drift * (info - self.info), c * math.sqrt(info)
        grid, weighted = self._materialise(sd)
        up, down = (grid + shift - b) / sd, (-b - grid - shift) / sd
        slope = -(weighted @ (_pdf(up) + _pdf(down))) * math.sqrt(info) / sd
        return float(weighted @ special.ndtr(up)), float(weighted @ special.ndtr(down)), float(slope)

    def advance(self, info: float, c: float) -> None:
        """Condition on not stopping at a look with information `info` and boundary c."""
        if self.bound is not None:
            grid, weighted = self._materialise(math.sqrt(info - self.info))
            self._parent = (grid, weighted, math.sqrt(info - self.info), self.drift * (info - self.info))
        self.info, self.bound, self._grid = info, c * math.sqrt(info), None


def spending_boundaries(
    information: Sequence[float] | np.ndarray, times: Sequence[float] | np.ndarray, alpha: float = 0.05
) -> np.ndarray:
    """Two-sided boundaries c_k for |Z_k| at looks with `information` I_k and spending `times` t_k.

    c_k solves P(|Z_j| < c_j for j < k, |Z_k| ≥ c_k) = α(t_k) − α(t_{k−1}) under H0, where
    Corr(Z_j, Z_k) = sqrt(I_j/I_k) and α is `obrien_fleming_spending` (Lan & DeMets 1983).
    """
    spender = _Spender(alpha)
    return np.array([spender.next(i, t) for i, t in zip(information, times, strict=True)])


class _Spender:
    """Boundaries one look at a time, given each look's information and spending time."""

    def __init__(self, alpha: float) -> None:
        self.alpha, self.spent, self.walk = alpha, 0.0, ScoreWalk()

    def next(self, info: float, time: float) -> float:
        """c with P(first crossing here) = α(time) − α spent so far: Newton's method on c, kept in
        a bracket that bisection shrinks whenever a Newton step leaves it."""
        from scipy import special

        target = obrien_fleming_spending(time, self.alpha) - self.spent
        low, high = 0.0, 40.0
        c = float(-special.ndtri(max(target, 1e-300) / 2)) if target > 0 else high
        for _ in range(100):
            upper, lower, slope = self.walk._crossing(info, c)
            excess = upper + lower - target
            if abs(excess) <= 1e-13 or high - low < 1e-12:
                break
            low, high = (c, high) if excess > 0 else (low, c)
            step = c - excess / slope if slope < 0 else math.nan
            c = step if low < step < high else (low + high) / 2
        self.spent += upper + lower
        self.walk.advance(info, c)
        return c


def fixed_pairs(effect: float, discordance: float = 0.5, alpha: float = 0.05, power: float = 0.8) -> int:
    """Pairs for a fixed-n two-sided McNemar test to detect `effect` = rate(B) − rate(A).

    Connor (1987), Biometrics 43:207–211, with ψ the probability that a pair is discordant:
    n = (z_{1−α/2}·sqrt(ψ) + z_{power}·sqrt(ψ − δ²))² / δ², rounded up.
    """
    from scipy import special

    if not 0 < abs(effect) <= discordance <= 1:
        raise ValueError(f"need 0 < |effect| <= discordance <= 1, got {effect} and {discordance}")
    za, zb = -special.ndtri(alpha / 2), special.ndtri(power)
    n = (za * math.sqrt(discordance) + zb * math.sqrt(discordance - effect**2)) ** 2 / effect**2
    return math.ceil(n - 1e-9)


@lru_cache(maxsize=64)
def inflation_factor(looks: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """R = n_max/n_fixed: how much longer the horizon is than the fixed-n test with the same power.

    With equally spaced looks and the spending boundaries c_k, find the drift θ (the mean of Z at
    full information) at which P(reject) = power; R = (θ/(z_{1−α/2} + z_{power}))²
    (Jennison & Turnbull 2000, §7.2.2). R ≈ 1.026 for 5 looks at α = 0.05, power 0.8.
    """
    from scipy import optimize, stats

    info = np.arange(1, looks + 1) / looks
    c = spending_boundaries(info, info, alpha)

    def rejection(theta: float) -> float:
        walk, total = ScoreWalk(drift=theta), 0.0
        for i, ck in zip(info, c, strict=True):
            upper, lower = walk.crossing(i, ck)
            total += upper + lower
            walk.advance(i, ck)
        return total

    fixed = stats.norm.isf(alpha / 2) + stats.norm.ppf(power)
    theta = optimize.brentq(lambda t: rejection(t) - power, 0.5 * fixed, 2 * fixed, xtol=1e-10)
    return float((theta / fixed) ** 2)


@dataclass(frozen=True)
class SequentialDesign:
    """Plan of a group-sequential paired comparison.

    `alpha`: two-sided level. `power`, `effect` (|rate(B) − rate(A)| to detect) and `discordance`
    (ψ, the expected share of discordant pairs; 0.5 is the most two independent policies with
    rates near ½ disagree, so the default errs long) size the horizon when `max_pairs` is None:
    max_pairs = ⌈R · fixed_pairs(effect, ψ, alpha, power)⌉ with R = `inflation_factor(looks, …)`.
    Look k comes after ⌈k·max_pairs/looks⌉ pairs.
    """

    alpha: float = 0.05
    power: float = 0.8
    effect: float = 0.10
    max_pairs: int | None = None
    looks: int = 5
    discordance: float = 0.5

    def __post_init__(self) -> None:
        if not (0 < self.alpha < 1 and 0 < self.power < 1 and self.looks >= 1):
            raise ValueError("need 0 < alpha < 1, 0 < power < 1 and looks >= 1")
        if self.max_pairs is None:
            fixed_pairs(self.effect, self.discordance, self.alpha, self.power)  # validates
        elif self.max_pairs < self.looks:
            raise ValueError(f"max_pairs ({self.max_pairs}) must be at least looks ({self.looks})")

    @property
    def horizon(self) -> int:
        """max_pairs, or the pairs derived from effect, power and discordance."""
        if self.max_pairs is not None:
            return self.max_pairs
        n = fixed_pairs(self.effect, self.discordance, self.alpha, self.power)
        return math.ceil(n * inflation_factor(self.looks, self.alpha, self.power) - 1e-9)

    @property
    def look_pairs(self) -> tuple[int, ...]:
        """Pairs seen at each look: ⌈k·horizon/looks⌉ for k = 1 … looks."""
        n = self.horizon
        return tuple(-(-k * n // self.looks) for k in range(1, self.looks + 1))


@dataclass(frozen=True)
class SequentialDecision:
    """The state of a sequential comparison after the pairs so far.

    `decision`: "A better" | "B better" | "undecided (not significant)" (the horizon was reached
    without a boundary crossing: no evidence of a difference, which is not evidence of none; see
    `interval`) | "continue". `look` and `pairs_used`: the last look reached and its pairs (pairs
    past it wait for the next look). `statistic`: McNemar's Z = (only_b − only_a)/sqrt(D) at
    that look; `boundary`: the critical |Z| there. `interval`: the repeated confidence interval
    (Jennison & Turnbull 1989, JRSS B 51:305–361) for B − A — Tango's score interval with z replaced
    by the boundary — which covers the true difference at every look simultaneously with
    probability ≈ 1 − alpha, so it stays valid whenever the comparison stops. `next_look`: pairs
    needed for the next look, None once decided.
    """

    decision: str
    pairs_used: int
    look: int
    statistic: float
    boundary: float
    interval: DifferenceInterval
    next_look: int | None = None


def decide(
    tables: Sequence[PairedTable], design: SequentialDesign, deffs: Sequence[float] | None = None
) -> SequentialDecision:
    """The decision from the cumulative paired tables at the looks reached so far (in order).

    `deffs[k]`: the design effect of look k's pairs where trials cluster in conditions
    (`seq.stats.clusters`): the look is tested on its table divided by it (`effective_table`), so
    a further trial of a deterministic policy adds no information and tests nothing.

    At look k with D_k > D_{k−1} discordant pairs, reject when |Z_k| ≥ c_k, where c_k spends
    α(t_k) − α(t_{k−1}) of the O'Brien–Fleming-type function at t_k = pairs_k/horizon given the
    correlations sqrt(D_j/D_k) of the Z's (Lan & DeMets 1983, Biometrika 70:659–663). A look with
    no new discordant pair adds no information and tests nothing; its share is spent later.
    """
    looks, horizon, alpha = design.look_pairs, design.horizon, design.alpha
    spender, z, c, last = _Spender(alpha), math.nan, math.inf, None
    for k, observed in enumerate(tables, 1):
        table = effective_table(observed, 1.0 if deffs is None else deffs[k - 1])
        last = observed, table
        if table.discordant > spender.walk.info:
            c = spender.next(table.discordant, looks[k - 1] / horizon)
            z = (table.only_b - table.only_a) / math.sqrt(table.discordant)
            if abs(z) >= c:
                return _decision("B better" if z > 0 else "A better", k, z, c, last, alpha, None)
        if k == len(looks):
            return _decision(UNDECIDED, k, z, c, last, alpha, None)
    if last is None:
        empty = DifferenceInterval(math.nan, -1.0, 1.0, 0, "none (before the first look)", 1 - alpha)
        return SequentialDecision("continue", 0, 0, math.nan, math.inf, empty, looks[0])
    return _decision("continue", len(tables), z, c, last, alpha, looks[len(tables)])


def _decision(
    decision: str,
    look: int,
    z: float,
    c: float,
    tables: tuple[PairedTable, PairedTable],
    alpha: float,
    next_look: int | None,
) -> SequentialDecision:
    """`tables`: the look's observed table and the effective one its test and interval used."""
    from scipy import special

    observed, table = tables
    critical = c if math.isfinite(c) else float(-special.ndtri(alpha / 2))  # no look tested: no α spent
    low, high = tango_limits(table, critical)
    method = "repeated-ci-tango" + (" (clustered)" if table is not observed else "")
    interval = DifferenceInterval(observed.difference, low, high, observed.n, method, 1 - alpha)
    return SequentialDecision(decision, observed.n, look, z, c, interval, next_look)


def sequential_test(
    a: Sequence[float],
    b: Sequence[float],
    design: SequentialDesign,
    clusters: Sequence[Hashable] | None = None,
    strata: Sequence[Hashable] | None = None,
) -> SequentialDecision:
    """Group-sequential McNemar test of rate(A) = rate(B) on the pairs so far, in their fixed order.

    Pairs past the last look reached are not used yet; pairs past the horizon are ignored. Two-sided
    type I error ≤ alpha under the normal approximation to the discordant-pair binomial, whatever
    the concordant pairs and the discordance rate (see `decide`). `clusters[i]`/`strata[i]`: pair
    i's condition and task, where trials repeat conditions: each look is then tested at its
    effective size.
    """
    if len(a) != len(b):
        raise ValueError(f"paired outcomes need equal lengths, got {len(a)} and {len(b)}")
    reached = [n for n in design.look_pairs if n <= len(a)]
    tables = [paired_table(a[:n], b[:n]) for n in reached]
    if clusters is None:
        return decide(tables, design)
    deffs = [
        pair_design_effect(a[:n], b[:n], clusters[:n], None if strata is None else strata[:n]).deff
        for n in reached
    ]
    return decide(tables, design, deffs)


@dataclass(frozen=True)
class SimulationSummary:
    """Operating characteristics of `sequential_test` estimated by simulation."""

    runs: int
    difference: float
    rejection_rate: float
    b_better_rate: float
    mean_pairs: float
    coverage: float


def simulate(
    design: SequentialDesign,
    rate_a: float,
    rate_b: float,
    discordance: float | None = None,
    runs: int = 2000,
    seed: int = 0,
) -> SimulationSummary:
    """Run `decide` on `runs` seeded simulated comparisons (one multinomial draw of the four cells
    per batch of pairs between looks): the rejection rate, the share deciding "B better", the
    mean pairs used and the coverage of the repeated interval for rate_b − rate_a at stopping.
    """
    psi = design.discordance if discordance is None else discordance
    delta = rate_b - rate_a
    only_a, only_b = (psi - delta) / 2, (psi + delta) / 2
    cells = np.array([rate_a - only_a, only_a, only_b, 1 - rate_a - only_b])
    if np.any(cells < -1e-12):
        raise ValueError(f"no paired distribution has rates {rate_a}, {rate_b} and discordance {psi}")
    rng = np.random.default_rng(seed)
    batches = np.diff((0, *design.look_pairs))
    draws = np.stack([rng.multinomial(size, np.clip(cells, 0, 1), size=runs) for size in batches], axis=1)
    cumulative = np.cumsum(draws, axis=1)  # [runs, looks, 4]
    rejected = b_better = covered = 0
    pairs = 0.0
    for run in cumulative:
        result = decide([PairedTable(*map(int, row)) for row in run], design)
        rejected += result.decision in ("A better", "B better")
        b_better += result.decision == "B better"
        covered += result.interval.low <= delta <= result.interval.high
        pairs += result.pairs_used
    return SimulationSummary(runs, delta, rejected / runs, b_better / runs, pairs / runs, covered / runs)


@dataclass(frozen=True)
class EProcess:
    """An anytime-valid e-process on the pairs so far.

    `e_value`: E_t after the last pair; `max_e_value`: its running maximum. `reject`: the maximum
    has reached 1/alpha (by Ville's inequality P(sup_t E_t ≥ 1/α) ≤ α under H0, at any stopping
    time). `rejected_at`: pairs seen when it first did; `direction`: "B better" or "A better" by
    the sign of only_b − only_a then (wrong with probability ≤ alpha). `pairs`: pairs seen;
    `discordant`: discordant pairs among them.
    """

    e_value: float
    max_e_value: float
    reject: bool
    pairs: int
    discordant: int
    rejected_at: int | None
    direction: str | None
    alpha: float


def e_process(a: Sequence[float], b: Sequence[float], alpha: float = 0.05, prior: float = 0.5) -> EProcess:
    """Beta-mixture likelihood-ratio e-process for H0: rate(A) = rate(B), on the discordant pairs.

    Each discordant pair favours B with probability θ (½ under H0). With W pairs for B and L for A
    among D = W + L, mixing the likelihood ratio over θ ~ Beta(κ, κ) (κ = `prior`, ½: the
    Krichevsky–Trofimov mixture) gives the nonnegative H0-martingale
        E_t = 2^D · B(W + κ, L + κ) / B(κ, κ),
    equivalently the wealth of betting λ_i = (W_{i−1} − L_{i−1})/(D_{i−1} + 2κ) on each pair:
    E_t = Π (1 + λ_i X_i), X_i = ±1; concordant pairs leave it unchanged. Robbins (1970), Ann Math
    Stat 41:1397–1409; Howard, Ramdas, McAuliffe & Sekhon (2021), Ann Stat 49:1055–1080 (conjugate
    mixtures); Waudby-Smith & Ramdas (2024), JRSS B 86:1–27 (betting).
    """
    from scipy import special

    table = paired_table(a, b)  # validates
    x, y = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    wins, losses = np.cumsum(~x & y), np.cumsum(x & ~y)
    log_e = (wins + losses) * math.log(2) + special.betaln(wins + prior, losses + prior)
    log_e = log_e - special.betaln(prior, prior)
    current = float(np.exp(log_e[-1])) if log_e.size else 1.0
    crossed = np.flatnonzero(log_e >= math.log(1 / alpha))
    first = int(crossed[0]) if crossed.size else None
    direction = None if first is None else ("B better" if wins[first] > losses[first] else "A better")
    return EProcess(
        e_value=current,
        max_e_value=float(np.exp(max(0.0, log_e.max()))) if log_e.size else 1.0,
        reject=first is not None,
        pairs=table.n,
        discordant=table.discordant,
        rejected_at=None if first is None else first + 1,
        direction=direction,
        alpha=alpha,
    )
