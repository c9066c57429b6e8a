"""A file a record names is read, served or copied only from inside its eval's artifact folder:
a record naming /etc/passwd (or a file outside SEQ_HOME, through `..` or a symlink) as an
episode's video gets a 404 from `seq ui` and nothing copied by `seq eval report --videos`."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest
from attacks import SECRET, VICTIM, console, finished_eval, get, name_artifacts, outside_secret
from conftest import run_cli

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


def _attacks(tmp_path: Path, seq_home: Path) -> list[str]:
    """Paths a record could name that lie outside the eval's artifact folder."""
    secret = outside_secret(tmp_path)
    folder = seq_home / "artifacts" / VICTIM / "videos"
    folder.mkdir(parents=True)
    (folder / "link.mp4").symlink_to(secret)
    return [
        "/etc/passwd",
        str(secret),
        str(folder / ".." / ".." / ".." / ".." / "outside" / "secret.txt"),
        str(folder / "link.mp4"),
        "../outside/secret.txt",  # relative: taken from SEQ_HOME
    ]


def test_the_console_serves_no_file_outside_the_eval_artifact_folder(
    toy_file: Path, tmp_path: Path, seq_home: Path
):
    item = finished_eval(toy_file)
    attacks = _attacks(tmp_path, seq_home)
    query = "?" + urlencode({"item": item})
    with console() as port:
        for named in attacks:
            name_artifacts(seq_home / "seq.db", VICTIM, video=named, trajectory=named)
            status, body = get(port, f"/evals/{VICTIM}/video{query}")
            assert status == 404, named
            assert SECRET.encode() not in body and b"root:" not in body
            status, page = get(port, f"/evals/{VICTIM}/episode{query}")
            assert status == 200 and b"/video?" not in page, named
            assert b"is not a file inside this eval" in page
        inside = seq_home / "artifacts" / VICTIM / "videos" / "real.mp4"
        inside.write_bytes(b"an mp4")
        name_artifacts(seq_home / "seq.db", VICTIM, video=str(inside))
        assert get(port, f"/evals/{VICTIM}/video{query}") == (200, b"an mp4")


def test_report_videos_copies_nothing_from_outside_and_says_so(
    toy_file: Path, tmp_path: Path, seq_home: Path
):
    finished_eval(toy_file)
    for named in _attacks(tmp_path, seq_home):
        name_artifacts(seq_home / "seq.db", VICTIM, video=named, trajectory=named)
        out = tmp_path / "copied"
        result = run_cli("eval", "report", VICTIM, "--videos", str(out), "--trajectories", str(out))
        assert result.returncode == 0, result.stderr
        assert "wrote 0 video(s)" in result.stdout and "wrote 0 trajectories" in result.stdout
        assert "1 video file(s) the record names were not copied" in result.stdout
        assert list(out.iterdir()) == [], named
    exported = tmp_path / "vla"
    assert run_cli("eval", "export", VICTIM, "-o", str(exported), "--format", "vla-eval").returncode == 0
    copied = [p for p in exported.rglob("*") if p.is_file() and p.suffix in (".mp4", ".jsonl")]
    assert copied == []
