"""One-sided exact tests on paired 0/1 outcomes, for gates that ask one question: is B better?

`mcnemar_exact` (`seq.stats.paired`) asks whether two paired rates differ, either way. A gate that
promotes only when B beats A asks one way, and its false-pass rate is that of the one-sided test:
under H0 (rate(B) ≤ rate(A)) each discordant pair favours B with probability at most ½, so the
p-value is the binomial upper tail P(X ≥ only_b), X ~ Binomial(only_a + only_b, ½), computed
exactly in integers. Conditioning on the discordant pairs makes the test valid whatever the
dependence within a pair (the pairs themselves must be independent of one another).
McNemar (1947), Psychometrika 12:153–157; Fagerland, Lydersen & Laake (2013), BMC Med Res
Methodol 13:91 (the exact conditional version).
"""

from __future__ import annotations

import math
from fractions import Fraction

from seq.errors import SeqInputError
from seq.stats.paired import PairedTable


def _check_alpha(alpha: float) -> None:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise SeqInputError(f"alpha must be a number strictly between 0 and 1, got {alpha!r}.")


def binomial_upper_tail(successes: int, n: int) -> float:
    """P(X ≥ successes) for X ~ Binomial(n, ½), exactly (integer sums; 1 for successes ≤ 0)."""
    if successes <= 0:
        return 1.0
    if successes > n:
        return 0.0
    tail = sum(math.comb(n, k) for k in range(successes, n + 1))
    return float(Fraction(tail, 2**n))


def mcnemar_exact_greater(table: PairedTable) -> float:
    """McNemar's exact test, one-sided: the p-value of H0 rate(B) ≤ rate(A) against rate(B) > rate(A).

    p = P(X ≥ only_b), X ~ Binomial(only_a + only_b, ½); p = 1 when no pair is discordant.
    A 4–0 table (four pairs favour B, none A) gives p = 1/16 = 0.0625; 5–0 gives 0.031.
    """
    return binomial_upper_tail(table.only_b, table.discordant)


def fewest_discordant(alpha: float) -> int:
    """The fewest discordant pairs with which `mcnemar_exact_greater` can reach p ≤ `alpha`
    (all of them favouring B): the smallest d with ½^d ≤ alpha (5 at alpha 0.05)."""
    _check_alpha(alpha)
    return max(1, math.ceil(math.log(alpha) / math.log(0.5) - 1e-12))


def exact_size(pairs: int, alpha: float, discordance: float) -> float:
    """The chance that `mcnemar_exact_greater` rejects at `alpha` with no true difference, on `pairs`
    independent pairs of which each is discordant with probability `discordance` (each way ½).

    Summed exactly over the number of discordant pairs; at most `alpha` for every input, which is
    what makes the test a gate (its size, not its nominal level)."""
    _check_alpha(alpha)
    if not 0 <= discordance <= 1:
        raise SeqInputError(f"discordance must be between 0 and 1, got {discordance!r}.")
    size = 0.0
    for d in range(pairs + 1):
        weight = math.comb(pairs, d) * discordance**d * (1 - discordance) ** (pairs - d)
        # the fewest pairs favouring B that reject, given d discordant ones
        least = next((k for k in range(d + 1) if binomial_upper_tail(k, d) <= alpha), None)
        if least is not None:
            size += weight * binomial_upper_tail(least, d)
    return size
