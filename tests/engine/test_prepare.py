"""Preparing an eval: what a policy asks of the benchmark does not shadow the arms being built."""

from __future__ import annotations

import textwrap

import pytest
from conftest import TOY

import seq


def test_a_policy_asking_benchmark_parameters_with_envs_per_worker_is_checked_not_crashed(tmp_path):
    # the arms and the values a policy asks of the benchmark once shared one name: the second
    # envs-per-worker check then read a dict of parameters as the list of arms
    path = tmp_path / "asks.py"
    path.write_text(
        TOY
        + textwrap.dedent("""

            @seq.policy(name="asks-for-delay")
            class AsksForDelay(LineController):
                benchmark_parameters = {"delay": 0.0}
        """)
    )
    seq.deploy(path)
    assert seq.eval.dry_run("asks-for-delay", benchmark="line", envs=2)["episodes"] == 6
    with pytest.raises(seq.SeqInputError, match="takes one observation at a time"):
        seq.eval.dry_run("asks-for-delay", benchmark="line", envs=2, envs_per_worker=2)
