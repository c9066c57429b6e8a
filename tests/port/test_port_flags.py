"""`seq benchmark export` and `convert` take tasks, seeds and the output folder as `seq eval run`
and `seq eval export` do (`--tasks a,b`, `--seeds 0-9`, `-o DIR`); the old spellings still work."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import refused_in_one_line, run_cli
from scenes import BALL


def _starts(out: Path) -> list[tuple[str, int]]:
    starts = json.loads((out / "export.json").read_text())["starts"]
    return [(start["task"], start["seed"]) for start in starts]


def test_export_takes_seeds_as_eval_run_does_and_the_old_spellings(tmp_path: Path) -> None:
    source = tmp_path / "ball_bench.py"
    source.write_text(BALL)
    out = tmp_path / "scene"
    exported = run_cli("benchmark", "export", f"{source}:Ball", "--tasks", "drop", "--seeds", "1-2,7",
                       "-o", str(out), "--steps", "5")  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    assert _starts(out) == [("drop", 1), ("drop", 2), ("drop", 7)]  # 7: a seed the benchmark does not list
    old = tmp_path / "old"
    exported = run_cli("benchmark", "export", f"{source}:Ball", "--task", "drop", "--seeds", "0",
                       "--out", str(old), "--steps", "5")  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    assert _starts(old) == [("drop", 0)]  # `--seeds N` is seed N, as everywhere
    refused_in_one_line(
        run_cli("benchmark", "export", f"{source}:Ball", "-o", str(out), "--out", str(old)),
        "give it once, as --output",
    )


def test_an_output_that_is_a_file_is_refused_in_one_sentence(tmp_path: Path) -> None:
    source = tmp_path / "ball_bench.py"
    source.write_text(BALL)
    a_file = tmp_path / "a_file.txt"
    a_file.write_text("mine")
    refused_in_one_line(
        run_cli("benchmark", "export", f"{source}:Ball", "--seeds", "0", "-o", str(a_file), "--steps", "5"),
        f"--output {a_file}: cannot make a folder there",
    )
    scene = tmp_path / "scene"
    exported = run_cli("benchmark", "export", f"{source}:Ball", "--seeds", "0", "-o", str(scene),
                       "--steps", "5")  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    refused_in_one_line(
        run_cli("benchmark", "scaffold", str(scene), "-o", str(a_file)),
        f"--output {a_file}: cannot make a folder there",
    )
    assert a_file.read_text() == "mine"
