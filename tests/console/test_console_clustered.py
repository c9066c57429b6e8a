"""The console's evals list gives the report's interval: where trials repeat conditions, the
interval of the effective n, not of the episodes."""

from __future__ import annotations

import pytest

import seq
from seq.console.queries import RecordReader
from seq.record.store import Store


@pytest.mark.parametrize("trials", [1, 5])
def test_the_list_shows_the_reports_interval(toy_file, trials):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", envs=2, trials=trials)
    success = report.metric("success")
    reader = RecordReader(Store().path)
    try:
        (summary,) = reader.evals()
    finally:
        reader.close()
    (figure,) = summary.figures
    assert figure.n == 6 * trials
    assert (figure.value, figure.low, figure.high) == pytest.approx(
        (success.value, success.low, success.high)
    )
    if trials > 1:  # a deterministic controller: five trials of six conditions are six outcomes
        assert success.effective_n == pytest.approx(6) and success.method.endswith("(clustered)")
