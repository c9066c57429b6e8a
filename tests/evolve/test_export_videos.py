"""`seq evolve export-hard-cases --format lerobot` with videos, on a toy benchmark that draws its
state: the hard cases run again (same act seeds), recorded one frame per step, into LeRobot's
v3.0 video layout; each row's video frame shows the state in that row."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import run_cli
from test_loop_toy import LINE

pq = pytest.importorskip("pyarrow.parquet")
av = pytest.importorskip("av")

DRAWN = LINE.replace(
    """    def reset(self, seed=None):""",
    """    metadata = {"render_fps": 10}

    def render(self):
        \"\"\"A white bar 100 pixels per unit of x long.\"\"\"
        image = np.zeros((16, 256, 3), dtype=np.uint8)
        image[:, : int(round(100 * self.x))] = 255
        return image

    def reset(self, seed=None):""",
)
assert DRAWN != LINE


def _frames(path):
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        decoded = [(frame.time, frame.to_ndarray(format="rgb24")) for frame in container.decode(stream)]
        return float(stream.average_rate), decoded


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    home = tmp_path_factory.mktemp("evolve-videos")
    env = {"SEQ_HOME": str(home)}
    path = home / "walk.py"
    path.write_text(DRAWN)
    assert run_cli("deploy", str(path), env=env).returncode == 0
    done = run_cli("evolve", "run", "walk", "--policy", "walk-wobbly", "--reference", "walk-steady",
                   "--trials", "12", "--reference-trials", "1", "--envs", "1", env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    out = home / "dataset"
    done = run_cli(
        "evolve", "export-hard-cases", str(out), "--format", "lerobot", "--max-episodes", "4", env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # the reruns take time: the user is told how many before they start, and what was written
    assert "seq: rerunning 4 hard cases with a camera" in done.stderr
    assert done.stdout.strip() == f"wrote 4 hard cases to {out}"
    return out


def test_each_row_has_its_frame_in_one_video_file(exported):
    info = json.loads((exported / "meta" / "info.json").read_text())
    key = "observation.images.scene"
    assert info["fps"] == 10 and info["total_episodes"] == 4
    assert info["features"][key]["dtype"] == "video" and info["features"][key]["shape"] == [16, 256, 3]
    video = exported / info["video_path"].format(video_key=key, chunk_index=0, file_index=0)
    rows = pq.read_table(exported / "data" / "chunk-000" / "file-000.parquet").to_pylist()
    episodes = pq.read_table(exported / "meta" / "episodes" / "chunk-000" / "file-000.parquet").to_pylist()
    fps, frames = _frames(video)
    assert fps == 10 and len(frames) == len(rows) == sum(e["length"] for e in episodes)
    for episode in episodes:
        start, end = episode[f"videos/{key}/from_timestamp"], episode[f"videos/{key}/to_timestamp"]
        assert episode["seq/reproduced"] and episode[f"videos/{key}/file_index"] == 0
        assert end - start == pytest.approx(episode["length"] / fps)
        for row in rows[episode["dataset_from_index"] : episode["dataset_to_index"]]:
            when, pixels = frames[round((start + row["timestamp"]) * fps)]
            assert when == pytest.approx(start + row["timestamp"], abs=1e-4)  # LeRobot's tolerance
            drawn = (pixels[..., 0] > 127).mean(axis=0).sum() / 100  # the bar's length: x
            assert drawn == pytest.approx(row["observation.state"][0], abs=0.025)
    assert episodes[0][f"videos/{key}/from_timestamp"] == 0
    stats = json.loads((exported / "meta" / "stats.json").read_text())
    assert np.asarray(stats[key]["mean"]).shape == (3, 1, 1)


def test_without_videos_the_export_runs_nothing(exported, tmp_path):
    env = {"SEQ_HOME": str(exported.parent)}
    done = run_cli(
        "evolve", "export-hard-cases", str(tmp_path), "--format", "lerobot", "--no-videos", env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    info = json.loads((tmp_path / "meta" / "info.json").read_text())
    assert info["video_path"] is None and not (tmp_path / "videos").exists()
    bad = run_cli(
        "evolve", "export-hard-cases", str(tmp_path), "--format", "lerobot", "--max-episodes", "0", env=env
    )
    assert bad.returncode == 2 and "--max-episodes" in bad.stderr


def test_the_reruns_never_stand_for_the_benchmark(exported):
    """The hard cases run again hold only failures: recorded under `walk-evolve-reruns`, never
    `walk`'s latest eval or a point of its trend, and named by the dataset."""
    env = {"SEQ_HOME": str(exported.parent)}
    episodes = pq.read_table(exported / "meta" / "episodes" / "chunk-000" / "file-000.parquet").to_pylist()
    reruns = {episode["seq/rerun_eval"] for episode in episodes}
    listed = json.loads(run_cli("eval", "ls", "--json", env=env).stdout)
    benchmarks = {entry["id"]: entry["benchmark"] for entry in listed}
    assert reruns and {benchmarks[rerun].split("@")[0] for rerun in reruns} == {"walk-evolve-reruns"}
    trend = run_cli("eval", "trend", "walk-wobbly", "--benchmark", "walk", env=env)
    assert trend.returncode == 0 and not any(rerun in trend.stdout for rerun in reruns)
