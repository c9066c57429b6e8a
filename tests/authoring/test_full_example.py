"""The full authoring example, unchanged, deploys and runs as a user runs it:
put the volume, set the secret, deploy, run an eval. Over MetaWorld, in an image of its own (built
once per test session with uv, shared with tests/isolation through `$SEQ_IMAGES`), with its
recordings, and a `@seq.score` that reads what `@seq.setup` loaded from /assets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

import seq

EXAMPLE_FILE = Path(__file__).parent / "full_example" / "metaworld_custom.py"


def test_the_full_authoring_example_deploys_and_runs_unchanged(tmp_path):
    pytest.importorskip("metaworld")  # the policy runs beside the runner: the benchmark holds a secret
    assets = tmp_path / "assets"
    assets.mkdir()
    (assets / "tasks.json").write_text(json.dumps({"fast_steps": 60}))
    assert run_cli("volume", "put", "metaworld-assets", str(assets), "--kind", "dataset").returncode == 0
    secret = run_cli(
        "secret", "set", "bench-token", "--env", "BENCH_TOKEN", env={"BENCH_TOKEN": "s3cr3t-v4lue"}
    )
    assert secret.returncode == 0, secret.stderr
    deployed = run_cli("deploy", f"{EXAMPLE_FILE}:MetaWorldCustom")
    assert deployed.returncode == 0, deployed.stderr
    assert "metaworld-custom@v1  (benchmark, registered)" in deployed.stdout

    ran = run_cli(
        "eval", "run", "metaworld-expert", "--benchmark", "metaworld-custom", "--envs", "2", "--json",
        timeout=900,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    episodes = seq.Store().episodes(report["eval_id"])
    assert len(episodes) == 4 and all(e.status == "ok" for e in episodes), [e.error for e in episodes]
    assert all(e.metrics["success"] == 1.0 for e in episodes)

    expected = sum(e.steps <= 60 for e in episodes) / 4  # score's bar came from /assets/tasks.json
    scores = seq.Store().scores(report["eval_id"])
    assert scores[("", "overall", "all")] == ({"fast_success": expected}, None)
    assert set(scores) >= {("", "suite", "reaching"), ("", "task", "button-press-topdown-v3")}

    manifest = seq.Store().get_eval(report["eval_id"]).manifest
    assert manifest.image.key and manifest.environment.packages["metaworld"] == "3.1.1"
    assert manifest.assets.volume == "metaworld-assets"
    assert manifest.secrets.names == ["bench-token"]
    assert (manifest.memory.total, manifest.memory.per_worker) == ("32 GiB", "16 GiB")  # memory=32, --envs 2
    videos = [e for e in episodes if e.artifacts.get("video")]
    assert sorted((e.task, e.seed) for e in videos) == [("button-press-topdown-v3", 0), ("reach-v3", 0)]
    assert "s3cr3t-v4lue" not in ran.stdout + ran.stderr
