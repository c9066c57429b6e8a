"""Metric kinds: declared, then by name, then by every value of the eval; never group by group."""

from __future__ import annotations

import pytest

from seq.errors import SeqInputError
from seq.stats import MEAN, RATE, MetricKind, check_metric_kinds, metric_kinds


def test_declared_then_name_then_values():
    kinds = metric_kinds(
        {
            "grasped": [0.0, 1.0],
            "success": [1.0, 1.0],
            "steps": [1.0, 0.0],
            "flag": [0.0, 1.0, 1.0],
            "distance": [0.2, 1.0],
        },
        declared={"grasped": "mean"},
    )
    assert kinds["grasped"] == MetricKind(MEAN, "declared")
    assert kinds["success"] == MetricKind(RATE, "name")
    assert kinds["steps"] == MetricKind(MEAN, "name")  # 0/1 values do not make steps a rate
    assert kinds["flag"] == MetricKind(RATE, "values")
    assert kinds["distance"] == MetricKind(MEAN, "values")


def test_a_rate_with_other_values_is_a_mean_and_says_why():
    kinds = metric_kinds({"success": [1.0, 0.5], "grasped": [2.0]}, declared={"grasped": "rate"})
    assert kinds["success"].kind == MEAN and "a rate by its name" in kinds["success"].note
    assert kinds["grasped"].kind == MEAN and "declared a rate" in kinds["grasped"].note


def test_declarations_are_checked():
    assert check_metric_kinds({"a": "rate", "b": "mean"}, "@seq.benchmark on X") == {"a": RATE, "b": MEAN}
    with pytest.raises(SeqInputError, match="must map metric names"):
        check_metric_kinds(["a"], "@seq.benchmark on X")
    with pytest.raises(SeqInputError, match="maps 'a' to 'binary'"):
        check_metric_kinds({"a": "binary"}, "@seq.benchmark on X")
