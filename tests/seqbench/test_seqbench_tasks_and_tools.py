"""Task files: validation (file, row and column named; exit 2), the builder and the materializers."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest
from seqbench_helpers import REPO, cohort_files, one_line_error, seqbench_cli

from seq.seqbench.tasks import COLUMNS, read_task_file, validate_files

TOOLS = REPO / "tools"


def _tool(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=60)


def test_validate_csv_accepts_the_cohort():
    result = seqbench_cli(
        "validate-csv",
        *cohort_files(
            "full.csv", "oracle.csv", "nonce.csv", "nonce-counterfactual.csv", "noise.csv", "supervision.csv"
        ),
    )
    assert result.returncode == 0, result.stderr
    assert "6 file(s)" in result.stdout and "valid" in result.stdout


def test_validate_csv_names_file_row_and_column(tmp_path):
    good = list(csv.DictReader(cohort_files("full.csv")[0].open()))[:6]
    good[1]["family"] = "poetry"
    good[2]["target"] = ""
    good[3]["id"] = good[0]["id"]
    good[4]["candidates"] = "m1|m2"
    good[5]["meta"] = "{not json"
    bad = tmp_path / "bad.csv"
    with bad.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(good)
    result = seqbench_cli("validate-csv", bad)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    err = result.stderr
    assert f"{bad}, row 3, column family: 'poetry' is not one of" in err
    assert f"{bad}, row 4, column target: is empty" in err
    assert f"{bad}, row 5, column id: '{good[0]['id']}' repeats {bad} row 2" in err
    assert f"{bad}, row 6, column candidates: do not include the target" in err
    assert f"{bad}, row 7, column meta: is not valid JSON" in err


def test_an_interrupted_build_leaves_a_truncated_file_that_validation_reports(tmp_path):
    target = tmp_path / "full.csv"
    assert _tool(TOOLS / "build_csv.py", target, "--scale", "0.1").returncode == 0
    text = target.read_text()
    target.write_text(text[: len(text) // 2].rsplit(",", 3)[0])  # cut mid-row, as a killed build would
    result = seqbench_cli("validate-csv", target)
    assert result.returncode == 2
    assert "interrupted build" in result.stderr and "rebuild it" in result.stderr
    run = seqbench_cli(
        "run",
        REPO / "specs/runs/full_v1.yaml",
        "--algorithm",
        "random",
        "--tasks",
        target,
        "--output",
        tmp_path / "out",
    )
    assert "interrupted build" in one_line_error(run)
    assert _tool(TOOLS / "build_csv.py", target, "--scale", "0.1").returncode == 0  # simply rebuilt
    assert validate_files([target])[1] == []


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """The causal v2 data prepared once by its script, which runs every tool in turn."""
    folder = tmp_path_factory.mktemp("prepared") / "data"
    result = subprocess.run(
        ["bash", str(TOOLS / "prepare_causal_v2.sh"), str(folder), "0.2"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    return folder


def test_prepare_script_writes_every_file_and_they_validate(prepared):
    names = sorted(p.name for p in prepared.iterdir())
    assert names == sorted(
        ["full.csv", "oracle.csv", "nonce.csv", "nonce-counterfactual.csv", "noise.csv", "supervision.csv"]
    )
    rows, problems = validate_files(sorted(prepared.iterdir()))
    assert not problems and rows > 0


def test_the_build_is_deterministic(prepared, tmp_path):
    again = tmp_path / "full.csv"
    assert _tool(TOOLS / "build_csv.py", again, "--scale", "0.2").returncode == 0
    assert again.read_bytes() == (prepared / "full.csv").read_bytes()


def test_materialized_rows_keep_their_source(prepared):
    base, _ = read_task_file(prepared / "full.csv")
    sources = {r.id: r for r in base}
    proofs, _ = read_task_file(prepared / "supervision.csv")
    proof_sources = [r for r in base if r.split == "train" and r.family in ("multihop", "compose")]
    assert len(proofs) == len(proof_sources)  # one row per source example
    for row in proofs:
        source = sources[row.pair_id]
        assert row.target == source.target and row.input.startswith(source.input + " proof ")
    noise, _ = read_task_file(prepared / "noise.csv")
    flipped = [r for r in noise if r.meta["flipped"]]
    assert 0 < len(flipped) < len(noise) and all(r.target != sources[r.pair_id].target for r in flipped)
    nonce, _ = read_task_file(prepared / "nonce.csv")
    counterfactual, _ = read_task_file(prepared / "nonce-counterfactual.csv")
    assert nonce and all(r.condition == "stress" and r.pair_id in sources for r in nonce)
    assert counterfactual and all(r.target != r.meta["original_target"] for r in counterfactual)
    oracle, _ = read_task_file(prepared / "oracle.csv")
    assert oracle and all(r.variant == "oracle" and r.target == sources[r.pair_id].target for r in oracle)


def test_a_missing_source_file_is_one_sentence(tmp_path):
    result = _tool(
        TOOLS / "materialize_noise.py", tmp_path / "absent.csv", tmp_path / "out.csv", "--seed", "1"
    )
    assert result.returncode == 2 and "absent.csv: does not exist" in result.stderr
    assert "Traceback" not in result.stderr
