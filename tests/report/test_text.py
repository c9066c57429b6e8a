"""The report's lines of prose (`seq.report.text`), as every view prints them."""

from __future__ import annotations

from dataclasses import replace

import seq
from seq.report.report_content import Unfinished
from seq.report.text import unfinished_lines

DEAD = "the policy server at ws://127.0.0.1:9 was unreachable for 3 episodes in a row; not run"


def test_items_left_for_one_reason_are_one_line_with_their_count(toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", envs=1, seeds=[0])
    left = [Unfinished(f"near/s{seed}/t0", "", "near", seed, DEAD, 1) for seed in range(16)]
    lost = Unfinished("far/s0/t0", "", "far", 0, "the policy server closed the connection", 1)
    lines = unfinished_lines(replace(report, unfinished=[*left, lost]))
    assert lines == [
        f"16 work items (first near/s0/t0): {DEAD}",
        "far/s0/t0: the policy server closed the connection",
    ]
