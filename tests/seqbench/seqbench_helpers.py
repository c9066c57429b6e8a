"""Shared by the seqbench tests: a small task cohort, fixture algorithms, cached reference runs, the CLI."""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from seq.seqbench.families import base_rows, oracle_rows
from seq.seqbench.materialize import counterfactual_rows, noise_rows, nonce_rows, supervision_rows
from seq.seqbench.pipeline import run
from seq.seqbench.tasks import write_task_file

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TINY_SPEC = FIXTURES / "tiny_v1.yaml"
FULL_SPEC = REPO / "specs" / "runs" / "full_v1.yaml"
CAUSAL_SPEC = REPO / "specs" / "runs" / "causal_v2.yaml"
SCREEN_SPEC = REPO / "specs" / "screens" / "screen_v1.yaml"
COHORT_SCALE = 0.25
FULL_V1_FILES = ("full.csv", "oracle.csv", "noise.csv", "supervision.csv")


def _scratch(prefix: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, folder, True)
    return folder


@functools.cache
def cohort() -> Path:
    """A quarter-scale cohort with every materialized file, built once per test session."""
    folder = _scratch("seqbench-cohort-")
    rows = list(base_rows(COHORT_SCALE, 0))
    write_task_file(folder / "full.csv", rows)
    write_task_file(folder / "oracle.csv", oracle_rows(rows))
    nonce = list(nonce_rows(rows, 42))
    write_task_file(folder / "nonce.csv", nonce)
    write_task_file(folder / "nonce-counterfactual.csv", counterfactual_rows(nonce))
    write_task_file(folder / "noise.csv", noise_rows(rows, 42))
    write_task_file(folder / "supervision.csv", supervision_rows(rows))
    return folder


def cohort_files(*names: str) -> list[Path]:
    return [cohort() / name for name in names or FULL_V1_FILES]


def fixture_yaml(
    folder: Path, mode: str = "ok", seed_invariant: bool = False, name: str = "lookup", generate: bool = True
) -> Path:
    """An algorithm YAML for fixtures/fixture_algorithm.py in MODE, with its manifest and initial model."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "name": name,
        "version": "1",
        "capabilities": {"learn": True, "generate": generate, "score": True},
        "external_pretraining": False,
        "seed_invariant": seed_invariant,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "initial.json").write_text("{}")
    script = FIXTURES / "fixture_algorithm.py"
    command = json.dumps(["{python}", str(script), mode])
    path = folder / f"{mode}.yaml"
    path.write_text(f"command: {command}\nmanifest: manifest.json\ninitial_model: initial.json\n")
    return path


@functools.cache
def reference_run(name: str, seeds: tuple[int, ...]) -> Path:
    """A full_v1 run of a shipped reference algorithm on the cohort, made once per session."""
    output = _scratch(f"seqbench-{name}-") / "run"
    run(
        FULL_SPEC, name, cohort_files(), output, seeds=list(seeds), calibration=Path("/nonexistent/none.json")
    )
    return output


def seqbench_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The `seqbench` command line in a subprocess, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-c", "from seq.cli.seqbench import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ},
    )


def one_line_error(result: subprocess.CompletedProcess, code: int = 2) -> str:
    """The single stderr line of a refused command (never a traceback)."""
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]
