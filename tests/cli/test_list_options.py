"""`--seeds` and `--tasks` are read the same way by every command: a descending range, an empty item
or an empty list is refused in one sentence, never read as no seeds or as every task."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import refused_in_one_line, run_cli

COMMANDS = [
    ("eval", "run", "random", "--benchmark", "metaworld"),
    ("benchmark", "export", "metaworld"),
    ("benchmark", "convert", "metaworld"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: " ".join(command[:2]))
@pytest.mark.parametrize(
    ("given", "said"),
    [
        (("--seeds", "5-2"), "--seeds 5-2: a descending range; write it low to high, as 2-5."),
        (("--seeds", "0,,2"), "--seeds 0,,2: an empty item"),
        (("--seeds", ""), "--seeds '' is empty"),
        (("--tasks", ""), "--tasks '' is empty"),
        (("--tasks", "reach-v3,"), "--tasks reach-v3,: an empty item"),
    ],
)
def test_seeds_and_tasks_are_refused_alike(
    command: tuple[str, ...], given: tuple[str, str], said: str, tmp_path: Path
) -> None:
    where = ("-o", str(tmp_path / "out")) if command[0] == "benchmark" else ("--dry-run",)
    refused_in_one_line(run_cli(*command, *given, *where, timeout=120), said)
    assert not (tmp_path / "out").exists()
