"""The acceptance loop on MetaWorld, at a small size: one command evolves the benchmark from the
noisy expert's failures into a version on which it does measurably worse while the scripted
expert still succeeds, and a second cycle starts from that version; its hard cases export."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli

pytest.importorskip("metaworld")
pq = pytest.importorskip("pyarrow.parquet")
TOOLS = Path(__file__).resolve().parents[2] / "tools"
VIDEO_EPISODES = 3


@pytest.fixture(scope="module")
def evolved(tmp_path_factory):
    """Two cycles. At this size the gate promotes little on its own: the strongest horizon cut
    tends to wait for review, its reference (the deterministic expert) finishing a few steps
    inside the limit; a person approving it is then what makes metaworld@v2."""
    home = tmp_path_factory.mktemp("evolve-home")
    env = {"SEQ_HOME": str(home)}
    cycle = (
        "evolve", "run", "metaworld", "--policy", "noisy-expert", "--reference", "metaworld-expert",
        "--param", "noise=0.3", "--tasks", "push-v3,pick-place-v3,door-open-v3", "--seeds", "0,1,2",
        "--trials", "10", "--reference-trials", "1", "--max-candidates", "16", "--cycles", "1",
    )  # fmt: skip
    done = run_cli(*cycle, env=env, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    candidates = json.loads((home / "evolve" / "metaworld.json").read_text())["cycles"][0]["candidates"]
    if not [c for c in candidates if c["decision"] == "promote"]:
        waiting = [c for c in candidates if c["decision"] == "review"]
        assert waiting, [c["reasons"] for c in candidates]
        best = max(waiting, key=lambda c: c["estimate"]["drop"])
        approved = run_cli("evolve", "review", "approve", best["id"], "--note", "checked", env=env)
        assert approved.returncode == 0, approved.stderr
    done = run_cli(*cycle, env=env, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    return env, json.loads((home / "evolve" / "metaworld.json").read_text())


def test_two_cycles_promote_harder_solvable_conditions(evolved):
    env, state = evolved
    first, second = state["cycles"]
    assert len({c["type"] for c in first["clusters"]}) >= 2
    assert len({c["operator"] for c in first["candidates"]}) >= 3
    promoted = [c for c in first["candidates"] if c["decision"] == "promote"]
    assert promoted, [c["reasons"] for c in first["candidates"]]
    for candidate in promoted:
        hard = candidate["difficulty"]  # on fresh trials 10–19, paired by act seed
        assert hard["trials"] == [10, 20] and hard["p_value"] <= hard["alpha"] == 0.05
        assert candidate["estimate"]["trials"] == [20, 30]  # re-estimated on trials of its own
        assert candidate["reference_success"] >= 0.80
        if "review" in candidate:  # approved by a person: the reasons it waited are kept
            assert candidate["review"]["approved"] and candidate["reasons"]
        else:
            assert hard["drop"] >= 0.30
    assert first["next"] == "metaworld@v2" and second["base"] == "metaworld@v2"
    status = run_cli("evolve", "status", env=env)
    assert status.returncode == 0 and "latest metaworld@v" in status.stdout
    report = run_cli("evolve", "report", "--benchmark", "metaworld", env=env)
    assert report.returncode == 0 and "Promoted (gate: the one-sided exact test" in report.stdout


def test_the_promoted_version_runs_its_added_conditions(evolved, monkeypatch):
    env, state = evolved
    monkeypatch.setenv("SEQ_HOME", env["SEQ_HOME"])
    import seq

    report = seq.eval.run("metaworld-expert", benchmark="metaworld@v2", suites=["evolved-y1"], envs=1)
    promoted = [c for c in state["cycles"][0]["candidates"] if c["decision"] == "promote"]
    assert len(report.episodes) == len(promoted)
    # the reference still solves every promoted condition, within each one's shortened horizon
    assert all(e.metrics["success"] == 1.0 for e in report.episodes)
    limits = {c["condition"]["max_steps"] for c in promoted} - {None}
    assert all(e.steps <= max(limits, default=500) for e in report.episodes)


@pytest.fixture(scope="module")
def exported(evolved, tmp_path_factory):
    env, state = evolved
    root = tmp_path_factory.mktemp("export")
    for form, flags in (("jsonl", []), ("lerobot", ["--no-videos"])):
        out = str(root / form)
        done = run_cli("evolve", "export-hard-cases", "-o", out, "--format", form, *flags, env=env)
        assert done.returncode == 0, done.stderr
    done = run_cli("evolve", "export-hard-cases", "-o", str(root / "videos"), "--format", "lerobot",
                   "--max-episodes", str(VIDEO_EPISODES), env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return state, root


def _decoded(path):
    """Every frame of an mp4 as (time, mean pixel in 0–1), and its frames per second (PyAV)."""
    import av

    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames = [(f.time, f.to_ndarray(format="rgb24").mean() / 255) for f in container.decode(stream)]
        return float(stream.average_rate), frames


def test_the_lerobot_export_has_the_hard_cases_videos(exported):
    _, root = exported
    root = root / "videos"
    info = json.loads((root / "meta" / "info.json").read_text())
    key = "observation.images.corner2"
    assert info["features"][key]["dtype"] == "video" and info["features"][key]["shape"] == [224, 224, 3]
    assert info["fps"] == 80 and info["total_episodes"] == VIDEO_EPISODES  # MetaWorld steps at 80 Hz
    frames = pq.read_table(root / "data" / "chunk-000" / "file-000.parquet").to_pylist()
    episodes = pq.read_table(root / "meta" / "episodes" / "chunk-000" / "file-000.parquet").to_pylist()
    fps, decoded = _decoded(root / info["video_path"].format(video_key=key, chunk_index=0, file_index=0))
    assert fps == 80 and len(decoded) == len(frames) == sum(e["length"] for e in episodes)
    ends = [0.0] + [e[f"videos/{key}/to_timestamp"] for e in episodes]
    for episode, start in zip(episodes, ends, strict=False):
        assert episode[f"videos/{key}/from_timestamp"] == pytest.approx(start)
        assert episode[f"videos/{key}/to_timestamp"] - start == pytest.approx(episode["length"] / fps)
        assert episode["seq/reproduced"]  # the rerun repeated the original's actions step for step
        rows = frames[episode["dataset_from_index"] : episode["dataset_to_index"]]
        for row in rows:
            when, _ = decoded[round((start + row["timestamp"]) * fps)]
            assert when == pytest.approx(start + row["timestamp"], abs=1e-4)


def test_hard_cases_export_as_jsonl(exported):
    state, root = exported
    lines = (root / "jsonl" / "metaworld-hard-cases.jsonl").read_text().splitlines()
    members = sum(len(c["members"]) for cycle in state["cycles"] for c in cycle["clusters"])
    case = json.loads(lines[0])
    assert len(lines) == members and case["failures"] and len(case["steps"][0]["action"]) == 4


def test_the_lerobot_export_follows_its_v3_layout(exported):
    state, root = exported
    root = root / "lerobot"
    info = json.loads((root / "meta" / "info.json").read_text())
    frames = pq.read_table(root / "data" / "chunk-000" / "file-000.parquet")
    episodes = pq.read_table(root / "meta" / "episodes" / "chunk-000" / "file-000.parquet").to_pylist()
    members = sum(len(c["members"]) for cycle in state["cycles"] for c in cycle["clusters"])
    assert info["codebase_version"] == "v3.0" and info["total_episodes"] == members == len(episodes)
    assert frames.num_rows == info["total_frames"] == sum(e["length"] for e in episodes)
    assert set(info["features"]) == set(frames.column_names)
    assert frames.schema.field("observation.state").type.list_size == 39
    assert [e["dataset_from_index"] for e in episodes[1:]] == [e["dataset_to_index"] for e in episodes[:-1]]
    tasks = pq.read_table(root / "meta" / "tasks.parquet")
    assert json.loads(tasks.schema.metadata[b"pandas"])["index_columns"] == ["task"]


def test_lerobot_reads_the_export(exported):
    reader = os.environ.get("SEQ_LEROBOT_PYTHON")
    if reader is None:
        pytest.skip("lerobot's reader needs torch: set SEQ_LEROBOT_PYTHON (tools/lerobot_venv.sh)")
    _, root = exported
    root = root / "videos"
    frames = pq.read_table(root / "data" / "chunk-000" / "file-000.parquet")
    episodes = pq.read_table(root / "meta" / "episodes" / "chunk-000" / "file-000.parquet").to_pylist()
    second = episodes[1]["dataset_from_index"] + 7  # a frame inside the second episode
    read = subprocess.run(
        [reader, str(TOOLS / "read_lerobot.py"), str(root), "0", str(second)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert read.returncode == 0, read.stderr[-3000:]
    seen = json.loads(read.stdout.strip().splitlines()[-1])
    assert seen["codebase_version"] == "v3.0" and seen["frames"] == frames.num_rows
    assert seen["shapes"]["observation.state"] == [39] and seen["shapes"]["action"] == [4]
    key = "observation.images.corner2"
    assert seen["fps"] == 80 and seen["video_keys"] == [key] and seen["shapes"][key] == [3, 224, 224]
    # lerobot's __getitem__ decoded the same frames as PyAV here, at from_timestamp + timestamp
    _, decoded = _decoded(root / "videos" / key / "chunk-000" / "file-000.mp4")
    for index in (0, second):
        assert seen["video_means"][str(index)][key] == pytest.approx(decoded[index][1], abs=1e-4)


def test_diff_compares_two_policies_on_the_evolved_slices(evolved, monkeypatch):
    env, _ = evolved
    monkeypatch.setenv("SEQ_HOME", env["SEQ_HOME"])
    import seq
    import seq.evolve

    runs = [
        seq.eval.run(policy, benchmark="metaworld@v2", suites=["evolved-y1"], trials=5, params=params, envs=1)
        for policy, params in (("noisy-expert", {"noise": 0.3}), ("metaworld-expert", None))
    ]
    rows = seq.evolve.diff(runs[0].eval_id, runs[1].eval_id)
    assert rows and all(row["pairs"] > 0 for row in rows)
    assert sum(row["difference"] * row["pairs"] for row in rows) > 0  # the reference does better
    shown = run_cli("evolve", "diff", runs[0].eval_id, runs[1].eval_id, env=env)
    assert shown.returncode == 0 and rows[0]["task"] in shown.stdout


def test_review_approve_promotes_and_reject_closes(evolved, monkeypatch):
    env, _ = evolved
    monkeypatch.setenv("SEQ_HOME", env["SEQ_HOME"])
    import seq.evolve
    from seq.evolve import state as log

    already = {c["id"] for c in seq.evolve.review_list("metaworld")}  # the run's own (thin margins)
    state = log.load("metaworld")
    rejected = [c for c in state["cycles"][-1]["candidates"] if c["decision"] == "reject"]
    for candidate in rejected[:2]:  # as if they had been borderline
        candidate["decision"] = "review"
    log.save(state)
    listed = run_cli("evolve", "review", "list", env=env)
    assert listed.returncode == 0 and rejected[0]["id"] in listed.stdout
    before = state["cycles"][-1]["next"]
    approved = run_cli("evolve", "review", "approve", rejected[0]["id"], env=env)
    assert approved.returncode == 0, approved.stderr
    after = log.load("metaworld")["cycles"][-1]["next"]
    assert after != before and after in approved.stdout
    assert run_cli("evolve", "review", "reject", rejected[1]["id"], env=env).returncode == 0
    assert {c["id"] for c in seq.evolve.review_list("metaworld")} == already
    again = run_cli("evolve", "review", "approve", rejected[1]["id"], env=env)
    assert again.returncode == 2 and "not under review" in again.stderr


def test_prune_removes_old_traces_and_keeps_rows(evolved, monkeypatch):
    env, state = evolved
    monkeypatch.setenv("SEQ_HOME", env["SEQ_HOME"])
    import seq.evolve
    from seq.record.store import Store

    first = state["cycles"][0]["eval_id"]
    rows = len(Store().episodes(first))
    done = seq.evolve.prune("metaworld", keep_cycles=1)
    assert done["files"] > 0 and done["bytes"] > 0
    episodes = Store().episodes(first)
    assert len(episodes) == rows
    assert not any(Path(e.artifacts["trace"]).exists() for e in episodes if "trace" in e.artifacts)
