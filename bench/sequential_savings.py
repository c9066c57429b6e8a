"""Episodes saved by the group-sequential paired test against the fixed-n McNemar test.

    python bench/sequential_savings.py [--runs 4000] [--seed 0] [--looks 5 10]

For a planned effect δ of 0.10 and of 0.20 (rates ½ − δ/2 for A and ½ + δ/2 for B, discordance
ψ = 0.5, two-sided α = 0.05, power 0.8):

- fixed n: the smallest n at which McNemar's exact test reaches power 0.8 at δ, from the exact
  power (a sum over the binomial count of discordant pairs); alongside, the n of the asymptotic
  McNemar z-test by Connor's formula (smaller: the exact test is conservative), column "vs z".
- sequential: `SequentialDesign(effect=δ, looks=K)`, its horizon, and by simulation of the test
  itself (`seq.stats.sequential.simulate`, seeded) the rejection rate and the mean pairs used when
  the true difference is 0, δ and 2δ; next to it the normal-theory expectation from the recursion.

An episode pair is two episodes (A and B), so the ratios hold for episodes as for pairs.
Goal: at least 20% fewer at δ, at least 50% fewer at 2δ.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import stats

from seq.stats.sequential import ScoreWalk, SequentialDesign, fixed_pairs, simulate, spending_boundaries

ALPHA, POWER, PSI = 0.05, 0.8, 0.5


def exact_mcnemar_power(n: int, delta: float, psi: float = PSI, alpha: float = ALPHA) -> float:
    """P(McNemar's exact test rejects) with n pairs: Σ_D Bin(D; n, ψ)·P(reject | D discordant)."""
    theta = (psi + delta) / (2 * psi)  # P(a discordant pair favours B)
    counts = np.arange(n + 1)
    weights = stats.binom.pmf(counts, n, psi)
    power = 0.0
    for d, weight in zip(counts[1:], weights[1:], strict=True):
        if weight < 1e-15:
            continue
        ks = np.arange(d + 1)
        inside = ks[2 * stats.binom.cdf(ks, d, 0.5) <= alpha]  # reject when min(b, c) <= k
        if inside.size:
            k = inside[-1]
            power += weight * (stats.binom.cdf(k, d, theta) + stats.binom.sf(d - k - 1, d, theta))
    return float(power)


def exact_fixed_pairs(delta: float) -> int:
    n = fixed_pairs(delta, PSI, ALPHA, POWER)
    step = 1 if n < 200 else 2
    while exact_mcnemar_power(n, delta) < POWER:
        n += step
    while step > 1 and exact_mcnemar_power(n - 1, delta) >= POWER:
        n -= 1
    return n


def normal_expected_pairs(design: SequentialDesign, delta: float, psi: float = PSI) -> float:
    """E[pairs] with information ∝ pairs: Z at the horizon has mean δ·sqrt(N/ψ)."""
    looks = np.array(design.look_pairs, dtype=float)
    times = looks / design.horizon
    c = spending_boundaries(times, times, design.alpha)
    walk = ScoreWalk(drift=delta * math.sqrt(design.horizon / psi))
    expected, alive = 0.0, 1.0
    for n, t, ck in zip(looks[:-1], times[:-1], c[:-1], strict=True):
        upper, lower = walk.crossing(t, ck)
        expected, alive = expected + n * (upper + lower), alive - upper - lower
        walk.advance(t, ck)
    return expected + alive * looks[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--looks", type=int, nargs="+", default=[5, 10])
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"alpha {ALPHA} two-sided, power {POWER}, discordance {PSI}; {args.runs} simulated runs per row\n")
    columns = [("plan", 5), ("looks", 5), ("true", 5), ("power", 6), ("E[pairs]", 9), ("normal", 7)]
    columns += [("fixed", 6), ("saved", 6), ("vs z", 6)]
    header = " ".join(f"{name:>{width}}" for name, width in columns)
    for delta in (0.10, 0.20):
        fixed, normal_fixed = exact_fixed_pairs(delta), fixed_pairs(delta, PSI, ALPHA, POWER)
        print(
            f"planned effect {delta:.2f}: fixed-n McNemar exact needs {fixed} pairs ({2 * fixed} episodes; "
            f"power {exact_mcnemar_power(fixed, delta):.3f}); the asymptotic z-test, by Connor's formula, "
            f"{normal_fixed}"
        )
        print(header)
        for looks in args.looks:
            design = SequentialDesign(alpha=ALPHA, power=POWER, effect=delta, looks=looks, discordance=PSI)
            for true in (0.0, delta, 2 * delta):
                summary = simulate(design, 0.5 - true / 2, 0.5 + true / 2, PSI, args.runs, args.seed)
                saved = 1 - summary.mean_pairs / fixed
                print(
                    f"{delta:5.2f} {looks:5d} {true:5.2f} {summary.rejection_rate:6.3f} "
                    f"{summary.mean_pairs:9.1f} {normal_expected_pairs(design, true):7.1f} "
                    f"{fixed:6d} {saved:6.1%} {1 - summary.mean_pairs / normal_fixed:6.1%}"
                )
            print(f"{'':>11}horizon {design.horizon} pairs, looks at {design.look_pairs}")
        print()
    print(
        "power: rejection rate (type I error in the 'true 0.00' rows); E[pairs]: simulated mean pairs at "
        "stopping; normal: the same from the recursion; saved: 1 - E[pairs]/fixed; vs z: 1 - E[pairs]/(the "
        "z-test's n)."
    )
    print(f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
