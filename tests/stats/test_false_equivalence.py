"""The equivalence verdict's false-equivalence rate, by exact enumeration of every paired table.

With the true difference B − A exactly at the margin (±0.05), "within threshold" is a false
verdict; a 95% interval used as two one-sided tests promises it at most 2.5% of the time. For n
pairs, a table is (only_a, only_b) with the rest concordant: trinomial with P(only A) = (ψ − δ)/2,
P(only B) = (ψ + δ)/2 for discordance ψ ≥ |δ|. The rate is the sum of the probabilities of every
table the verdict calls equivalent: no simulation, no sampling error.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from seq.stats import (
    PairedTable,
    agresti_min_interval,
    compare_paired,
    tango_equivalent,
    tango_interval,
    within_threshold,
)

MARGIN = 0.05
# fine near the margin, where the worst case lies (ψ = δ: every discordant pair favours one side)
DISCORDANCE = np.unique(np.round(np.r_[np.arange(0.05, 0.2, 0.001), np.arange(0.2, 1.0, 0.01), 1.0], 6))


def tables(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (only_a, only_b) with only_a + only_b <= n."""
    b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    keep = b + c <= n
    return b[keep], c[keep]


def false_equivalence(n: int, equivalent: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    """The largest chance, over the discordance grid and both signs of the margin, that the tables
    marked `equivalent` occur when B − A is exactly at the margin."""
    b, c = b[equivalent].astype(float)[:, None], c[equivalent].astype(float)[:, None]
    if b.size == 0:
        return 0.0
    log_count = special.gammaln(n + 1) - special.gammaln(b + 1) - special.gammaln(c + 1)
    log_count = log_count - special.gammaln(n - b - c + 1)
    worst = 0.0
    for delta in (MARGIN, -MARGIN):
        psi = DISCORDANCE[DISCORDANCE >= abs(delta)][None, :]
        only_a, only_b = (psi - delta) / 2, (psi + delta) / 2
        log_p = log_count + special.xlogy(b, only_a) + special.xlogy(c, only_b)
        log_p = log_p + special.xlogy(n - b - c, 1 - psi)
        worst = max(worst, float(np.exp(log_p).sum(axis=0).max()))
    return worst


def test_the_verdicts_false_equivalence_is_at_most_2_5_percent_for_20_to_200_pairs():
    rates = {}
    for n in range(20, 201):
        b, c = tables(n)
        rates[n] = false_equivalence(n, tango_equivalent(b, c, n, MARGIN), b, c)
    worst = max(rates, key=rates.get)
    assert rates[worst] <= 0.025, (worst, rates[worst])
    assert rates[worst] > 0.02  # the check is tight: equivalence is reachable, and near its limit
    assert max(rates[n] for n in range(20, 73)) == 0.0  # under 73 pairs nothing is equivalent


def test_seed_000s_agresti_min_interval_fails_the_same_check():
    # the figures: 14.2% at n = 38 and 7.7% at 50, both with 5% discordance
    for n, expected in ((38, 0.142), (50, 0.077)):
        b, c = tables(n)
        inside = np.array(
            [
                within_threshold(agresti_min_interval(PairedTable(0, int(x), int(y), n - int(x + y))))
                for x, y in zip(b, c, strict=True)
            ]
        )
        assert false_equivalence(n, inside, b, c) == pytest.approx(expected, abs=0.0015)


@pytest.mark.parametrize("n", [73, 110, 142, 200])
def test_the_enumerated_rule_is_the_verdict_compare_paired_gives(n):
    """`tango_equivalent` (what the enumeration counts) against `within_threshold` of Tango's
    interval and `compare_paired`'s verdict, on every table on or next to the equivalence region
    and on a sample of the rest."""
    b, c = tables(n)
    inside = tango_equivalent(b, c, n, MARGIN)
    region = {(int(x), int(y)) for x, y in zip(b[inside], c[inside], strict=True)}
    near = {(x + dx, y + dy) for x, y in region for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))}
    rng = np.random.default_rng(n)
    sample = {(int(b[i]), int(c[i])) for i in rng.choice(len(b), 150, replace=False)}
    checked = [(x, y) for x, y in region | near | sample if x >= 0 and y >= 0 and x + y <= n]
    for x, y in checked:
        table = PairedTable(0, x, y, n - x - y)
        expected = bool(tango_equivalent(x, y, n, MARGIN))
        assert within_threshold(tango_interval(table), MARGIN) == expected, (x, y)
        a_side = [1] * x + [0] * y + [0] * (n - x - y)
        b_side = [0] * x + [1] * y + [0] * (n - x - y)
        verdict = compare_paired(a_side, b_side, "success", MARGIN).verdict
        assert (verdict == "within threshold") == expected, (x, y, verdict)
    assert region  # equivalence is reachable at these n
