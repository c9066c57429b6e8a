"""The examples run as documented (kept short here)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import seq

pytest.importorskip("metaworld")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_behaviour_cloning_is_evaluated_by_seq_while_it_trains():
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "train_bc.py"), "--demos", "5", "--epochs", "2", "--eval-seeds", "3"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    epochs = re.findall(r"epoch (\d): loss [\d.]+, success ([\d.]+) .*n=3\) eval (ev-\w+)", result.stdout)
    assert [e[0] for e in epochs] == ["1", "2"]
    for _, success, eval_id in epochs:
        report = seq.eval.report(eval_id)
        assert report.policy == "bc-mlp@v1" and report.metric("success").value == float(success)
