"""A grid cell's suite in summary.tsv is the one its episodes ran in: the benchmark's own
(`suite_of`), not the name of the default suite."""

from __future__ import annotations

import csv
from pathlib import Path

import seq


def test_summary_names_the_suites_of_the_benchmark(toy_file: Path, tmp_path: Path) -> None:
    seq.deploy(toy_file)
    config = {
        "policies": ["line-controller"],
        "families": {
            "line": {"variations": {"near": {"tasks": ["near"]}, "both": {"tasks": ["near", "far"]}}}
        },
        "seeds": [0],
        "workers": 1,
        "output_dir": str(tmp_path / "runs"),
    }
    summary = seq.grid.run(config)
    cells = (summary.run_dir / "summary.tsv").read_text().split("\n\n")[0]  # the cells' table
    suites = {row["variation"]: row["suite"] for row in csv.DictReader(cells.splitlines(), delimiter="\t")}
    assert suites == {"near": "easy", "both": "easy,hard"}
