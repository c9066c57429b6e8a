"""What an attack on `seq grid` found (#23), on the tiny coin benchmark (tests/grid/coin.py): cell
folders that collide or leave the run directory, a resume across a redeploy, huge numbers, bad
URLs, bad YAML, unusable output dirs, damaged summaries, and what `seq grid ls` says."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import refused_in_one_line, run_cli

import seq
from seq.errors import SeqInputError
from seq.grid import GridConfig
from seq.grid.cells import expand

COIN = Path(__file__).with_name("coin.py")

GRID = """
policies: [coin-player]
families:
  coin:
    variations:
      heads: {tasks: [heads]}
seeds: [0, 1]
workers: 1
output_dir: runs
"""


@pytest.fixture(autouse=True)
def coin(seq_home: Path) -> None:
    seq.deploy(str(COIN))


def _config(tmp_path: Path, text: str, name: str = "grid.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _axes(**top: object) -> dict:
    heads = {"coin": {"variations": {"heads": {"tasks": ["heads"]}}}}
    return {"policies": ["coin-player"], "families": heads, **top}


def _refused(data: dict, *fragments: str) -> None:
    with pytest.raises(SeqInputError) as refused:
        expand(GridConfig.from_dict(data, "g.yaml"))
    for fragment in ("g.yaml", *fragments):
        assert fragment in str(refused.value)


# -- 1. cell folders ----------------------------------------------------------------------------


def test_the_attack_of_two_cells_in_one_folder_is_refused_before_any_cell_runs(tmp_path: Path) -> None:
    path = _config(tmp_path, """
policies: [coin-player]
families:
  x: {benchmark: coin, variations: {".": {tasks: [heads]}}}
  ".": {benchmark: coin, variations: {x: {tasks: [tails]}}}
output_dir: runs
""")  # fmt: skip
    result = run_cli("grid", "run", str(path), "--gate", "--threshold", "0.9")
    refused_in_one_line(result, "grid.yaml", "key 'families.x.variations'", "'.' cannot name a cell")
    assert seq.eval.ls() == [] and not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("data", "key"),
    [
        (_axes(modes={"..": {}}), "modes"),
        (_axes(families={"a/b": {"benchmark": "coin"}}), "families"),
        (_axes(families={"": {"benchmark": "coin"}}), "families"),
        (_axes(families={"coin": {"variations": [".."]}}), "families.coin.variations"),
        (_axes(policies=[{"id": "..", "policy": "coin-player"}]), "policies[0].id"),
        (_axes(policies=["../coin-player"]), "policies[0]"),
        ({"suites": [{"name": "..", "benchmark": "coin", "policy": "coin-player"}]}, "suites[0].name"),
        ({"suites": [{"name": "s", "benchmark": "coin", "policy": "coin-player", "mode": "/"}]},
         "suites[0].mode"),
    ],
)  # fmt: skip
def test_a_name_that_is_a_path_step_or_holds_a_slash_is_refused_naming_its_key(data: dict, key: str) -> None:
    _refused(data, f"key {key!r}", "cannot name a cell")


def test_two_names_cleaned_to_one_folder_are_refused_and_every_folder_stays_inside(tmp_path: Path) -> None:
    variations = {"a b": {"tasks": ["heads"]}, "a_b": {"tasks": ["tails"]}}
    _refused(_axes(families={"coin": {"variations": variations}}), "cells default@coin-player/coin/a b",
             "default@coin-player/coin/a_b", "share", "'default/coin-player/coin/a_b'")  # fmt: skip
    variations = {"a b": {"tasks": ["heads"]}, "a-b": {"tasks": ["tails"]}}  # one name in videos/
    _refused(_axes(families={"coin": {"variations": variations}}), "a b and default@coin-player/coin/a-b")
    _refused(_axes(modes={"summary.json": {}}), "clash with the run directory's own files")
    odd = _axes(families={"...": {"benchmark": "coin", "variations": {"..x": {"tasks": ["heads"]}}}})
    (cell,) = expand(GridConfig.from_dict(odd))
    run_dir = tmp_path / "run"
    assert (run_dir / cell.path).resolve().is_relative_to(run_dir) and cell.path.count("/") == 3


# -- 2. a resume across a redeploy ---------------------------------------------------------------


def test_resume_refuses_to_pool_cells_of_a_benchmark_redeployed_since(tmp_path: Path) -> None:
    path = _config(tmp_path, GRID.replace("      heads: {tasks: [heads]}", "      heads: {tasks: [heads]}\n"
                                          "      tails: {tasks: [tails]}"))  # fmt: skip
    first = seq.grid.run(path)
    assert {(c.benchmark_version, c.policy_version) for c in first.cells} == {("coin@v1", "coin-player@v1")}
    assert seq.grid.run(path, resume=True).n_trials == 4  # unchanged: the resume goes on
    changed = tmp_path / "v2" / "coin.py"
    changed.parent.mkdir()
    changed.write_text(COIN.read_text() + "\n# the second version\n")
    seq.deploy(str(changed))
    result = run_cli("grid", "run", str(path), "--resume", "--gate")
    refused_in_one_line(result, "--resume", "grid.yaml", "benchmark coin@v1 → coin@v2",
                        "policy coin-player@v1 → coin-player@v2", "would pool two versions")  # fmt: skip
    assert json.loads((first.run_dir / "versions.json").read_text())["benchmark"] == {"coin": "coin@v1"}


# -- 3 to 6. numbers, URLs and YAML --------------------------------------------------------------


@pytest.mark.parametrize(
    ("top", "key", "said"),
    [
        ({"seeds": 100000000000}, "seeds", "from 1 to 1,000,000"),
        ({"seeds": [10**20]}, "seeds", "a seed is from 0 to 2,147,483,647"),
        ({"seeds": [-1]}, "seeds", "a seed is from 0"),
        ({"trials": 10**20}, "trials", "below 1,000,001"),
        ({"trials": 1e20}, "trials", "expected an integer"),
        ({"max_steps": 2**31}, "max_steps", "below 2,147,483,648"),
        ({"workers": 10**12}, "workers", "below"),
        ({"seeds": 1000, "trials": 10000}, "families.coin.variations.heads", "10,000,000 episodes per cell"),
        ({"timeout_s": math.nan}, "timeout_s", "expected a finite number"),
        ({"timeout_s": math.inf}, "timeout_s", "expected a finite number"),
        ({"timeout_s": 10**400}, "timeout_s", "expected a number"),
        ({"policies": [{"id": "r", "url": "ws://127.0.0.1:99999"}]}, "policies[0].url", "ws://HOST:PORT"),
        ({"policies": [{"id": "r", "url": "ws://[::1"}]}, "policies[0].url", "ws://HOST:PORT"),
        ({"policies": [{"id": "r", "url": "ws://:80"}]}, "policies[0].url", "ws://HOST:PORT"),
    ],
)
def test_huge_or_non_finite_numbers_and_bad_urls_are_refused_at_load(top: dict, key: str, said: str) -> None:
    _refused(_axes(**top), f"key {key!r}", said)


def test_a_huge_count_of_seeds_is_refused_by_the_cli_in_one_line(tmp_path: Path) -> None:
    path = _config(tmp_path, GRID.replace("seeds: [0, 1]", "seeds: 100000000000"))
    refused_in_one_line(run_cli("grid", "run", str(path)), "grid.yaml", "key 'seeds'", "1,000,000")
    path.write_text(GRID + "timeout_s: .nan\n")
    refused_in_one_line(run_cli("grid", "run", str(path)), "grid.yaml", "key 'timeout_s'", "finite")


def test_yaml_that_is_not_utf8_or_gives_a_key_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "grid.yaml"
    path.write_bytes(GRID.encode() + b"# caf\xe9\n")
    refused_in_one_line(run_cli("grid", "run", str(path)), "grid.yaml", "not UTF-8")
    path.write_text(GRID + "seeds: [5]\n")
    refused_in_one_line(run_cli("grid", "run", str(path)), "grid.yaml", "key 'seeds' is given twice")
    path.write_text(GRID.replace("heads: {tasks: [heads]}", "heads: {tasks: [heads], tasks: [tails]}"))
    with pytest.raises(SeqInputError, match="key 'tasks' is given twice"):
        GridConfig.from_yaml(path)
    path.write_text(GRID.replace("  coin:\n", "  coin: {benchmark: coin}\n  coin:\n", 1))
    with pytest.raises(SeqInputError, match="key 'coin' is given twice"):
        GridConfig.from_yaml(path)


# -- 7. the output dir ---------------------------------------------------------------------------


def test_an_output_dir_that_cannot_hold_runs_is_one_sentence(tmp_path: Path) -> None:
    path = _config(tmp_path, GRID)
    (tmp_path / "afile").write_text("")
    refused_in_one_line(run_cli("grid", "run", str(path), "-o", str(tmp_path / "afile")),
                        "--output", "afile", "cannot make a folder there")  # fmt: skip
    refused_in_one_line(run_cli("grid", "run", str(path), "--output-dir", "/proc/nope"),  # the old spelling
                        "--output", "/proc/nope")  # fmt: skip
    path.write_text(GRID.replace("output_dir: runs", "output_dir: afile"))
    refused_in_one_line(run_cli("grid", "run", str(path)), "grid.yaml", "key 'output_dir'", "afile")


def test_resume_of_a_run_whose_grid_json_is_damaged_is_one_sentence(tmp_path: Path) -> None:
    path = _config(tmp_path, GRID)
    first = seq.grid.run(path)
    for damage in ("{nope", "[1, 2]"):
        (first.run_dir / "grid.json").write_text(damage)
        refused_in_one_line(run_cli("grid", "run", str(path), "--resume"), "--resume", "grid.json", "damaged")


# -- 8 and 9. seq grid ls / show, filters ------------------------------------------------------


def test_ls_goes_on_past_damaged_summaries_and_show_names_the_file(tmp_path: Path) -> None:
    path = _config(tmp_path, GRID)
    good = seq.grid.run(path)
    bad = seq.grid.run(path)
    for damage in ("[1, 2]", '{"cells": 5}', '{"cells": [], "n_trials": "x"}', "{nope"):
        (bad.run_dir / "summary.json").write_text(damage)
        listed = run_cli("grid", "ls")
        assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
        assert f"damaged: {bad.run_dir}/summary.json" in listed.stdout
        assert good.run_dir.name in listed.stdout  # the other run is still listed
        refused_in_one_line(run_cli("grid", "show", str(bad.run_dir)), bad.run_dir.name, "summary.json")
    rows = json.loads(run_cli("grid", "ls", "--json").stdout)
    assert [row["status"] for row in rows] == ["damaged", "done"]


def test_ls_gives_n_and_the_interval_and_says_a_lone_error_cell_is_no_success(tmp_path: Path) -> None:
    path = _config(tmp_path, GRID.replace("heads: {tasks: [heads]}", "boom: {tasks: [boom]}"))
    assert run_cli("grid", "run", str(path)).returncode == 1
    listed = run_cli("grid", "ls").stdout
    assert "1 cell(s), 1 errored, complete, not gated" in listed and " n=2" in listed
    (row,) = json.loads(run_cli("grid", "ls", "--json").stdout)
    assert row["status"] == "errors" and row["errors"] == 1
    path.write_text(GRID)
    assert run_cli("grid", "run", str(path), "--gate", "--threshold", "0.9").returncode == 0
    newest = run_cli("grid", "ls").stdout.splitlines()[1]  # newest first, three lines a run
    assert "success 1.00 [0.34, 1.00] n=2, 1 cell(s), complete, gate PASS" in newest


@pytest.mark.parametrize("flag", ["--families", "--modes", "--policies"])
def test_an_empty_filter_is_refused_not_taken_for_the_whole_grid(tmp_path: Path, flag: str) -> None:
    path = _config(tmp_path, GRID)
    refused_in_one_line(run_cli("grid", "run", str(path), flag, ","), flag, "empty")
    assert seq.eval.ls() == []


def test_the_gate_fails_when_one_policy_or_family_ran_two_versions() -> None:
    from seq.grid.results import CellResult
    from seq.grid.summary import gate

    def cell(variation: str, policy_version: str) -> CellResult:
        return CellResult("default", "p", "coin", variation, "", f"default@p/coin/{variation}",
                          n_success=2, n_trials=2, benchmark_version="coin@v1",
                          policy_version=policy_version)  # fmt: skip

    assert gate([cell("a", "p@v1"), cell("b", "p@v1")], 0.9, "rate", {}) == []
    assert gate([cell("a", "p@v1"), cell("b", "p@v2")], 0.9, "rate", {}) == [
        "the cells of policy p ran 2 versions (p@v1, p@v2)"
    ]
