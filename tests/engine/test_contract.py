"""The per-step check of a policy's chunk: its fast path and its full one agree, NaN and inf rows
exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from seq.authoring.env_contract import ContractError
from seq.engine.contract import action_size, checked_chunk


class Box:
    def __init__(self, *shape: int) -> None:
        self.shape = shape


values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.sampled_from([np.nan, np.inf, -np.inf, 3.0e38, -3.0e38]),
)


@given(
    chunk=hnp.arrays(
        dtype=st.sampled_from([np.float32, np.float64]),
        shape=st.tuples(st.integers(1, 12), st.sampled_from([1, 4, 7, 30])),
        elements=values,
    )
)
def test_nan_rows_are_exactly_the_actions_holding_a_nan_or_an_infinity(chunk):
    """Small chunks are summed in Python, large ones by numpy; finite values whose sum overflows
    are no such action."""
    _, flagged = checked_chunk(chunk, Box(chunk.shape[1]), chunk.shape[1], "p")
    expected = ~np.isfinite(chunk).all(axis=1)
    if expected.any():
        assert flagged is not None and flagged.tolist() == expected.tolist()
    else:
        assert flagged is None


def test_a_chunk_of_any_layout_is_checked_the_same_way():
    space = Box(2, 3)
    size = action_size(space)
    assert size == 6
    chunk, flagged = checked_chunk(np.zeros((2, 6), np.float32), space, size, "p")
    assert chunk.shape == (2, 6) and flagged is None
    chunk, flagged = checked_chunk([[[0, 1, 2], [3, 4, np.nan]]], space, size, "p")  # [H, 2, 3]
    assert chunk.shape == (1, 2, 3) and flagged.tolist() == [True]
    assert checked_chunk(np.arange(6)[None], Box(6), 6, "p")[1] is None  # integers hold no NaN
    with pytest.raises(ContractError, match=r"shape \(4,\) \(4 numbers each\).*shape \(2, 3\) \(6 numbers\)"):
        checked_chunk(np.zeros((1, 4)), space, size, "p")
    with pytest.raises(ContractError, match="complex"):
        checked_chunk(np.zeros((1, 6), np.complex64), space, size, "p")
    with pytest.raises(ContractError, match="empty action chunk"):
        checked_chunk(np.zeros((0, 6)), space, size, "p")
    assert action_size(None) is None and action_size(Box()) == 1
