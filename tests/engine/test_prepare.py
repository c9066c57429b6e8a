"""Preparing an eval: what a policy asks of the benchmark does not shadow the arms being built,
and the cheap refusals come before the benchmark is reset."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import TOY

import seq


def deploy_toy_with(folder: Path, policy: str) -> None:
    """Deploy the toy benchmark and policies with one more policy, `policy`'s source."""
    path = folder / "toy_plus.py"
    path.write_text(TOY + textwrap.dedent(policy))
    seq.deploy(path)


def test_a_policy_asking_benchmark_parameters_with_envs_per_worker_is_checked_not_crashed(tmp_path):
    # the arms and the values a policy asks of the benchmark once shared one name: the second
    # envs-per-worker check then read a dict of parameters as the list of arms
    deploy_toy_with(
        tmp_path,
        """
        @seq.policy(name="asks-for-delay")
        class AsksForDelay(LineController):
            benchmark_parameters = {"delay": 0.0}
        """,
    )
    assert seq.eval.dry_run("asks-for-delay", benchmark="line", envs=2)["episodes"] == 6
    with pytest.raises(seq.SeqInputError, match="takes one observation at a time"):
        seq.eval.dry_run("asks-for-delay", benchmark="line", envs=2, envs_per_worker=2)


def test_what_the_request_alone_refuses_is_refused_before_the_benchmark_is_reset(tmp_path):
    # checking a policy's inputs resets the benchmark (a simulator started): a sequential test of
    # one arm is refused first, from the request and the versions alone
    deploy_toy_with(
        tmp_path,
        """
        @seq.policy(name="wants-an-image")
        class WantsAnImage(LineController):
            inputs = {"image": ((32, 32, 3), "uint8")}
        """,
    )
    with pytest.raises(seq.SeqInputError, match="compares two arms"):
        seq.eval.dry_run("wants-an-image", benchmark="line", sequential=True)
    with pytest.raises(seq.SeqInputError, match="does not take benchmark line@v1's observation"):
        seq.eval.dry_run("wants-an-image", benchmark="line")
