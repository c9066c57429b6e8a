"""Newcombe's hybrid score interval against the worked examples of Newcombe (1998), Table II."""

from __future__ import annotations

import math

import pytest

from seq.stats.intervals import wilson_interval
from seq.stats.unpaired import newcombe_interval

# Newcombe (1998), Stat Med 17:873-890, Table II, method 10 (score, no continuity correction):
# (m, n) for the first sample, (m, n) for the second, difference, lower, upper.
TABLE_II = [
    ((56, 70), (48, 80), 0.2000, 0.0524, 0.3339),
    ((9, 10), (3, 10), 0.6000, 0.1705, 0.8090),
    ((6, 7), (2, 7), 0.5714, 0.0582, 0.8062),
    ((5, 56), (0, 29), 0.0893, -0.0381, 0.1926),
    ((0, 10), (0, 20), 0.0000, -0.1611, 0.2775),
    ((0, 10), (0, 10), 0.0000, -0.2775, 0.2775),
    ((10, 10), (0, 20), 1.0000, 0.6791, 1.0000),
    ((10, 10), (0, 10), 1.0000, 0.6075, 1.0000),
]


@pytest.mark.parametrize("first,second,difference,low,high", TABLE_II)
def test_newcombe_table_ii(first, second, difference, low, high):
    # Newcombe's difference is first − second; ours is B − A, so the first sample is B.
    interval = newcombe_interval(second[0], second[1], first[0], first[1])
    assert interval.difference == pytest.approx(difference, abs=5e-5)
    assert interval.low == pytest.approx(low, abs=5e-5)
    assert interval.high == pytest.approx(high, abs=5e-5)
    assert interval.method == "newcombe" and interval.n == first[1] + second[1]


def test_newcombe_is_square_and_add_of_wilson():
    a, b = wilson_interval(13, 40), wilson_interval(22, 35)
    interval = newcombe_interval(13, 40, 22, 35)
    d = b.mean - a.mean
    assert interval.low == pytest.approx(d - math.hypot(b.mean - b.low, a.high - a.mean))
    assert interval.high == pytest.approx(d + math.hypot(b.high - b.mean, a.mean - a.low))


def test_newcombe_swapping_sides_negates():
    forward, backward = newcombe_interval(13, 40, 22, 35), newcombe_interval(22, 35, 13, 40)
    assert (forward.low, forward.high) == pytest.approx((-backward.high, -backward.low))


def test_newcombe_level_and_bad_input():
    assert newcombe_interval(56, 70, 48, 80, level=0.99).low < newcombe_interval(56, 70, 48, 80).low
    assert math.isnan(newcombe_interval(0, 0, 3, 5).low)
    with pytest.raises(ValueError):
        newcombe_interval(6, 5, 1, 5)
