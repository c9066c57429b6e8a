"""Unpaired proportions: A and B run on different episodes (different seeds, or different counts).

Newcombe's hybrid score interval (method 10 of Newcombe 1998) for the difference of two
independent proportions, B − A: each rate gets its Wilson score interval, and the two are combined
by the square-and-add rule. It keeps close to nominal coverage for small n and rates near 0 or 1,
where the Wald interval fails.
"""

from __future__ import annotations

import math

from seq.stats.intervals import wilson_interval
from seq.stats.paired import DifferenceInterval


def newcombe_interval(
    successes_a: int, n_a: int, successes_b: int, n_b: int, level: float = 0.95
) -> DifferenceInterval:
    """Newcombe's hybrid score interval for rate(B) − rate(A), independent samples.

    With p̂_a, p̂_b the rates and (l_a, u_a), (l_b, u_b) their Wilson score intervals at `level`,
    d = p̂_b − p̂_a and
        low  = d − sqrt((p̂_b − l_b)² + (u_a − p̂_a)²),
        high = d + sqrt((u_b − p̂_b)² + (p̂_a − l_a)²).
    Newcombe (1998), Stat Med 17:873–890, method 10 (no continuity correction). Worked example
    (Table II, a): 56/70 against 48/80 → 0.2000, 0.0524 to 0.3339.
    """
    for successes, n in ((successes_a, n_a), (successes_b, n_b)):
        if n < 0 or not 0 <= successes <= max(n, 0):
            raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n_a == 0 or n_b == 0:
        return DifferenceInterval(math.nan, math.nan, math.nan, n_a + n_b, "newcombe", level)
    a = wilson_interval(successes_a, n_a, level)
    b = wilson_interval(successes_b, n_b, level)
    assert a.low is not None and a.high is not None and b.low is not None and b.high is not None  # n > 0
    d = b.mean - a.mean
    low = d - math.sqrt((b.mean - b.low) ** 2 + (a.high - a.mean) ** 2)
    high = d + math.sqrt((b.high - b.mean) ** 2 + (a.mean - a.low) ** 2)
    return DifferenceInterval(d, max(-1.0, low), min(1.0, high), n_a + n_b, "newcombe", level)
