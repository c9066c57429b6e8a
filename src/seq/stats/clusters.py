"""Episodes that share a condition are one cluster: the design effect of repeated trials.

An eval's episodes nest: tasks ⊃ conditions (task, seed, variation) ⊃ trials. The trials of one
condition start from the same state, so their outcomes are correlated (with a deterministic policy
and simulator they are identical copies), and N episodes in k conditions carry less information
than N independent ones. Every interval and test in `seq.stats` takes that into account through
one number, the design effect of the clustering (Kish 1965, *Survey Sampling*, §5.4):

    deff = 1 + (m̄ − 1)·ρ,   effective n = N / deff,

where m̄ = Σ m_c² / N is the size-weighted mean number of trials per condition and ρ the
intra-class correlation of the outcome within conditions. ρ is the one-way ANOVA estimator with
conditions nested in tasks (Donner & Koval 1980; Searle, Casella & McCulloch 1992, §3.6): tasks are
strata, fixed by the benchmark, so the spread *between* tasks is not counted as clustering; only
the spread between the conditions of one task is.

    MSB = Σ_c m_c (ȳ_c − ȳ_task(c))² / (k − T),   MSW = Σ_i (y_i − ȳ_c(i))² / (N − k),
    m₀ = (N − Σ_t Σ_{c∈t} m_c² / N_t) / (k − T),   ρ = (MSB − MSW) / (MSB + (m₀ − 1)·MSW),

truncated to [0, 1] (a negative estimate would sharpen an interval on chance alone). Tasks with a
single condition say nothing about the spread between conditions of one task: they are pooled into
one stratum (collapsed strata, Cochran 1977 §5A.12). Where no value varies within any condition
and between conditions of a task alike, the data cannot tell copies from independent draws: ρ is
taken as 1 (each condition counts once), the side that never overstates the evidence.

With one trial per condition, deff is exactly 1 and every method reduces to its independent form.
With identical trials (ρ̂ = 1), deff = m̄: N episodes in k conditions count as k outcomes.

A rate near 0 or 1 is the exception where ρ̂ cannot be trusted: when a few rare conditions go the
other way (a seed the policy always fails among seeds it always passes), a sample of fewer than a
hundred conditions often holds none of them, its failures look scattered at random, ρ̂ comes out
near 0 and the interval covers as little as 0.88 of the time. What the sample cannot show, only
more conditions can rule out (by the rule of three, k clean conditions still allow up to 3/k bad
ones): a rate outside [0.1, 0.9] from fewer than 100 conditions counts each condition once (ρ = 1),
which brings every simulated coverage back over 0.96 (`edge_guarded`; bench/coverage.py).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace

import numpy as np

FEW_CONDITIONS = 20  # below this many conditions, ρ (and so any clustered interval) is imprecise
# A rate this near 0 or 1 from fewer conditions than this counts each condition once (`edge_guarded`).
NEAR_EDGE, EDGE_CONDITIONS = 0.1, 100


@dataclass(frozen=True)
class Clustering:
    """Which condition each value belongs to, and which stratum (task) each condition to.

    `cluster_of[i]`: the condition index of value i; `stratum_of[c]`: the stratum index of
    condition c, after tasks with a single condition are pooled into one stratum."""

    cluster_of: np.ndarray
    stratum_of: np.ndarray

    @property
    def conditions(self) -> int:
        return len(self.stratum_of)

    @property
    def sizes(self) -> np.ndarray:
        """Values per condition."""
        return np.bincount(self.cluster_of, minlength=self.conditions)

    @property
    def singletons(self) -> bool:
        """Whether every condition holds one value: the independent case."""
        return len(self.cluster_of) == self.conditions


def clustering(clusters: Sequence[Hashable], strata: Sequence[Hashable] | None = None) -> Clustering:
    """The `Clustering` of values labelled by condition (`clusters[i]`) and task (`strata[i]`).

    A condition's stratum is its first value's; None puts every condition in one stratum."""
    if strata is not None and len(strata) != len(clusters):
        raise ValueError(f"clusters and strata need equal lengths, got {len(clusters)} and {len(strata)}")
    index: dict[Hashable, int] = {}
    cluster_of = np.fromiter(
        (index.setdefault(c, len(index)) for c in clusters), dtype=np.int64, count=len(clusters)
    )
    stratum_label: list[Hashable] = [None] * len(index)
    if strata is not None:
        for c, s in zip(cluster_of.tolist(), strata, strict=True):
            if stratum_label[c] is None:
                stratum_label[c] = ("stratum", s)
    per_stratum: dict[Hashable, int] = {}
    for label in stratum_label:
        per_stratum[label] = per_stratum.get(label, 0) + 1
    pooled = ("pooled",)
    kept = [label if per_stratum[label] > 1 else pooled for label in stratum_label]
    stratum_index: dict[Hashable, int] = {}
    stratum_of = np.fromiter(
        (stratum_index.setdefault(s, len(stratum_index)) for s in kept), dtype=np.int64, count=len(kept)
    )
    return Clustering(cluster_of, stratum_of)


@dataclass(frozen=True)
class DesignEffect:
    """The design effect of a clustering on some values: deff, ρ, the counts behind them."""

    deff: float
    icc: float
    n: int
    conditions: int
    strata: int = 1
    mean_size: float = 1.0  # m̄ = Σ m_c² / N, the deff of identical trials
    edge: bool = False  # ρ taken as 1 for a rate near 0 or 1 from few conditions (`edge_guarded`)

    @property
    def df(self) -> float:
        """Degrees of freedom of the variance behind a clustered interval: conditions less strata
        where ρ is estimated; infinite where it is not (one trial per condition, or ρ = 1: each
        condition one binary outcome, whose variance the binomial gives)."""
        if self.deff == 1.0 or self.icc >= 1.0:
            return math.inf
        return max(1, self.conditions - self.strata)

    @property
    def effective_n(self) -> float:
        """N / deff: how many independent values the clustered ones are worth."""
        return self.n / self.deff if self.deff > 0 else 0.0


def intra_class_correlation(values: np.ndarray, layout: Clustering) -> float:
    """ρ by one-way ANOVA with conditions nested in strata, truncated to [0, 1]; 1 where it cannot
    be told from the data (no spread within and between conditions, or no two conditions in one
    stratum)."""
    y = np.asarray(values, dtype=float)
    k, n = layout.conditions, len(y)
    sizes = layout.sizes.astype(float)
    sums = np.bincount(layout.cluster_of, weights=y, minlength=k)
    means = sums / sizes
    strata = layout.stratum_of
    stratum_sizes = np.bincount(strata, weights=sizes)
    stratum_means = np.bincount(strata, weights=sums) / stratum_sizes
    between_df = k - len(stratum_sizes)
    within_df = n - k
    if between_df <= 0:
        return 1.0
    msb = float(np.sum(sizes * (means - stratum_means[strata]) ** 2)) / between_df
    msw = float(np.sum((y - means[layout.cluster_of]) ** 2)) / within_df if within_df > 0 else 0.0
    m0 = (n - float(np.sum(np.bincount(strata, weights=sizes**2) / stratum_sizes))) / between_df
    denominator = msb + (m0 - 1) * msw
    if denominator <= 0:
        return 1.0
    return float(min(1.0, max(0.0, (msb - msw) / denominator)))


def design_effect_of(values: Sequence[float], layout: Clustering) -> DesignEffect:
    """The `DesignEffect` of `values` under `layout`; exactly 1 where every condition holds one value."""
    y = np.asarray(values, dtype=float)
    if len(y) != len(layout.cluster_of):
        raise ValueError(f"{len(y)} values for a clustering of {len(layout.cluster_of)}")
    if len(y) == 0 or layout.singletons:
        return DesignEffect(1.0, 0.0, len(y), layout.conditions, _strata(layout))
    icc = intra_class_correlation(y, layout)
    mean_size = float(np.sum(layout.sizes.astype(float) ** 2)) / len(y)
    deff = 1.0 + (mean_size - 1.0) * icc
    return DesignEffect(deff, icc, len(y), layout.conditions, _strata(layout), mean_size)


def near_edge(rate: float) -> bool:
    """Whether a rate lies within `NEAR_EDGE` of 0 or 1."""
    return not NEAR_EDGE <= rate <= 1 - NEAR_EDGE


def edge_guarded(effect: DesignEffect, *rates: float) -> DesignEffect:
    """`effect`, or each condition counted once (ρ = 1) where every one of `rates` is near 0 or 1
    and fewer than `EDGE_CONDITIONS` conditions with repeated trials hold them (see the module):
    there the rare conditions that go the other way may not have been drawn, and ρ̂ cannot see them.
    Unchanged with one trial per condition."""
    if effect.mean_size <= 1.0 or effect.icc >= 1.0 or effect.conditions >= EDGE_CONDITIONS:
        return effect
    if not rates or not all(near_edge(rate) for rate in rates):
        return effect
    return replace(effect, deff=effect.mean_size, icc=1.0, edge=True)


def _strata(layout: Clustering) -> int:
    return int(layout.stratum_of.max()) + 1 if len(layout.stratum_of) else 0


def design_effect(
    values: Sequence[float], clusters: Sequence[Hashable], strata: Sequence[Hashable] | None = None
) -> float:
    """deff ≥ 1 of `values` in conditions `clusters` within tasks `strata` (see the module)."""
    return design_effect_of(values, clustering(clusters, strata)).deff
