"""Every LIBERO suite `libero` offers builds and steps, and the docs list exactly those: each
offered suite's first task, init state 0, one step, through `seq.eval.run` in LIBERO's image
(physics only: a suite that cannot be built fails on its models, cameras or not), LIBERO-plus's
included. A suite whose objects no distribution ships is not offered, and says why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import seq
from seq.errors import SeqInputError
from seq.shelf import libero_plus
from seq.shelf.libero import LEFT_OUT, OFFERED
from seq.shelf.libero_tasks import SUITES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "shelf.md"


def test_every_offered_suite_builds_and_steps():
    first_tasks = sorted(
        {libero_plus.tasks(s)[0][0] if s in libero_plus.PLUS_SUITES else SUITES[s][0][0] for s in OFFERED}
    )
    report = seq.eval.run(
        "random",
        benchmark="libero",
        suites=OFFERED,
        tasks=first_tasks,
        seeds=[0],
        max_steps=1,
        params={"benchmark.obs_mode": "state"},
        envs=2,
    )
    failed = {e.suite: e.error for e in report.episodes if e.status != "ok"}
    assert not failed, failed
    assert {e.suite for e in report.episodes} == set(OFFERED)
    assert all(e.steps == 1 for e in report.episodes)


def test_a_left_out_suite_is_refused_and_the_docs_list_exactly_the_offered_ones():
    assert len(LEFT_OUT) == 19 and not set(LEFT_OUT) & set(OFFERED)
    assert set(LEFT_OUT) | set(OFFERED) == set(SUITES) | set(libero_plus.PLUS_SUITES)
    with pytest.raises(SeqInputError, match="no such suite"):
        seq.eval.dry_run("random", benchmark="libero", suites=["libero_goal_with_red_box"])
    section = DOCS.read_text().split("<!-- libero suites -->")[1]
    listed = re.findall(r"`(libero_[a-z0-9_]+)`", section)
    assert set(listed) == set(OFFERED)
