"""`seq.stats.exact`: the one-sided exact McNemar test against scipy's binomial test, and its
size (the chance it rejects with no true difference) at most α for every n and discordance."""

from __future__ import annotations

import pytest
from scipy import stats

from seq.errors import SeqInputError
from seq.stats.exact import binomial_upper_tail, exact_size, fewest_discordant, mcnemar_exact_greater
from seq.stats.paired import PairedTable


@pytest.mark.parametrize("only_a", range(0, 8))
@pytest.mark.parametrize("only_b", range(0, 12))
def test_the_p_value_is_scipys_one_sided_binomial_test(only_a, only_b):
    table = PairedTable(3, only_a, only_b, 2)
    expected = (
        1.0 if only_a + only_b == 0 else stats.binomtest(only_b, only_a + only_b, 0.5, "greater").pvalue
    )
    assert mcnemar_exact_greater(table) == pytest.approx(expected, rel=1e-12)


def test_a_four_to_nothing_table_does_not_reach_five_percent():
    assert mcnemar_exact_greater(PairedTable(6, 0, 4, 0)) == 1 / 16
    assert mcnemar_exact_greater(PairedTable(5, 0, 5, 0)) == 1 / 32
    assert fewest_discordant(0.05) == 5 and fewest_discordant(0.0625) == 4 and fewest_discordant(0.01) == 7


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
def test_its_size_is_at_most_alpha_for_every_n_and_discordance(alpha):
    sizes = [exact_size(n, alpha, d / 20) for n in range(1, 41) for d in range(21)]
    assert max(sizes) <= alpha
    assert max(sizes) > alpha / 4  # not vacuous: at many pairs it comes close to α


def test_large_tables_stay_exact():
    assert binomial_upper_tail(600, 1000) == pytest.approx(stats.binom.sf(599, 1000, 0.5), rel=1e-9)
    assert binomial_upper_tail(0, 5) == 1.0 and binomial_upper_tail(6, 5) == 0.0


def test_a_level_outside_zero_to_one_is_refused():
    with pytest.raises(SeqInputError, match="alpha"):
        fewest_discordant(1.5)
