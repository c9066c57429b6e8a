"""The acceptance loop on MetaWorld, at a small size: one command evolves the benchmark from the
noisy expert's failures into a version on which it does measurably worse while the scripted
expert still succeeds, and a second cycle starts from that version."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

pytest.importorskip("metaworld")


def test_two_cycles_promote_harder_solvable_conditions(tmp_path):
    done = run_cli(
        "evolve",
        "run",
        "metaworld",
        "--policy",
        "noisy-expert",
        "--reference",
        "metaworld-expert",
        "--param",
        "noise=0.3",
        "--tasks",
        "push-v3,pick-place-v3,door-open-v3",
        "--seeds",
        "0,1,2",
        "--trials",
        "10",
        "--reference-trials",
        "1",
        "--max-candidates",
        "16",
        "--cycles",
        "2",
        timeout=1500,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    import seq.record.store as store_module

    state = json.loads((store_module.seq_home() / "evolve" / "metaworld.json").read_text())
    first, second = state["cycles"]
    assert len({c["type"] for c in first["clusters"]}) >= 2
    assert len({c["operator"] for c in first["candidates"]}) >= 3
    promoted = [c for c in first["candidates"] if c["decision"] == "promote"]
    assert promoted, [c["reasons"] for c in first["candidates"]]
    for candidate in promoted:
        hard = candidate["difficulty"]
        assert hard["seed_success"] - hard["candidate_success"] >= 0.30
        assert hard["low"] > 0
        assert candidate["reference_success"] >= 0.80
    assert first["next"] == "metaworld@v2" and second["base"] == "metaworld@v2"
    # the promoted version is a version of the registry whose manifest names what was added
    shown = run_cli("benchmark", "ls")
    assert shown.returncode == 0
    report = run_cli("evolve", "report", "--benchmark", "metaworld")
    assert report.returncode == 0 and "Promoted:" in report.stdout
    exported = run_cli("evolve", "export-hard-cases", str(tmp_path / "hard"), "--format", "jsonl")
    assert exported.returncode == 0, exported.stderr
    lines = (tmp_path / "hard" / "metaworld-hard-cases.jsonl").read_text().splitlines()
    assert lines and json.loads(lines[0])["failures"]
    lerobot = run_cli("evolve", "export-hard-cases", str(tmp_path / "lr"), "--format", "lerobot")
    assert lerobot.returncode == 0, lerobot.stderr
    info = json.loads((tmp_path / "lr" / "meta" / "info.json").read_text())
    assert info["total_episodes"] == len(lines)
