"""An eval id becomes a folder name (`artifacts/ID`, `logs/ID`), so one that climbs out of
SEQ_HOME is refused wherever it enters, and `seq eval rm` deletes only the folder it builds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from attacks import VICTIM, edit, finished_eval, name_artifacts, outside_secret
from conftest import refused_in_one_line, run_cli

import seq

RUN = [
    "eval",
    "run",
    "line-controller",
    "--benchmark",
    "line",
    "--tasks",
    "near",
    "--seeds",
    "0",
    "--envs",
    "1",
]


def _evals() -> list[str]:
    listed = run_cli("eval", "ls", "--json")
    return [row["id"] for row in json.loads(listed.stdout)] if listed.returncode == 0 else []


@pytest.mark.parametrize("climb", ["../../outside", "ABSOLUTE"])
def test_an_eval_id_naming_a_folder_outside_seq_home_is_refused_and_stores_nothing(
    toy_file: Path, tmp_path: Path, climb: str
):
    seq.deploy(toy_file)
    eval_id = str(tmp_path / "outside") if climb == "ABSOLUTE" else climb
    result = run_cli(*RUN, "--eval-id", eval_id, "--shard-id", "0", "--num-shards", "1")
    refused_in_one_line(result, "--eval-id", "expected 1 to 128 letters")
    assert not (tmp_path / "outside").exists()
    assert _evals() == []


def test_the_python_api_refuses_the_same_ids(toy_file: Path, tmp_path: Path):
    seq.deploy(toy_file)
    with pytest.raises(seq.SeqInputError, match="--eval-id"):
        seq.eval.run("line-controller", benchmark="line", envs=1, eval_id="../../outside")
    with pytest.raises(seq.SeqInputError, match="eval id '/etc'"):
        seq.eval.rm("/etc")
    assert not (tmp_path / "outside").exists()


def test_rm_of_a_recorded_id_that_climbs_out_deletes_nothing_outside(
    toy_file: Path, tmp_path: Path, seq_home: Path
):
    finished_eval(toy_file)
    secret = outside_secret(tmp_path)
    bad = "../../outside"  # SEQ_HOME/artifacts/../../outside is tmp_path/outside
    for table, column in (("evals", "id"), ("items", "eval_id"), ("episodes", "eval_id")):
        edit(seq_home / "seq.db", f"UPDATE {table} SET {column}=?", bad)
    refused_in_one_line(run_cli("eval", "rm", bad), "eval id '../../outside'")
    refused_in_one_line(run_cli("eval", "report", bad), "eval id '../../outside'")
    assert secret.read_text() == "TOP-SECRET-CONTENTS"


def test_rm_unlinks_a_symlinked_artifact_folder_and_never_follows_one(
    toy_file: Path, tmp_path: Path, seq_home: Path
):
    finished_eval(toy_file)
    secret = outside_secret(tmp_path)
    folder = seq_home / "artifacts" / VICTIM
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.symlink_to(secret.parent, target_is_directory=True)
    (seq_home / "logs" / VICTIM).mkdir(parents=True, exist_ok=True)
    (seq_home / "logs" / VICTIM / "inner").symlink_to(secret.parent, target_is_directory=True)
    assert run_cli("eval", "rm", VICTIM).returncode == 0
    assert secret.read_text() == "TOP-SECRET-CONTENTS"
    assert not folder.is_symlink() and not (seq_home / "logs" / VICTIM).exists()


def test_a_merged_record_holding_an_id_that_climbs_out_is_refused(
    toy_file: Path, tmp_path: Path, seq_home: Path, monkeypatch: pytest.MonkeyPatch
):
    other = tmp_path / "other-home"
    monkeypatch.setenv("SEQ_HOME", str(other))
    finished_eval(toy_file)
    monkeypatch.setenv("SEQ_HOME", str(seq_home))
    for table, column in (("evals", "id"), ("items", "eval_id"), ("episodes", "eval_id")):
        edit(other / "seq.db", f"UPDATE {table} SET {column}=?", "../../outside")
    result = run_cli("eval", "merge", str(other / "seq.db"))
    refused_in_one_line(result, "seq.db", "'../../outside'", "not merged")
    assert _evals() == []


@pytest.mark.parametrize(
    "named",
    [
        "/etc/passwd",
        "OTHER/artifacts/ev-victim/../../../outside/secret.txt",
        "OTHER/artifacts/ev-other/x.mp4",
    ],
)
def test_a_merged_record_naming_a_file_outside_its_artifact_folder_is_refused(
    toy_file: Path, tmp_path: Path, seq_home: Path, monkeypatch: pytest.MonkeyPatch, named: str
):
    other = tmp_path / "other-home"
    monkeypatch.setenv("SEQ_HOME", str(other))
    finished_eval(toy_file)
    monkeypatch.setenv("SEQ_HOME", str(seq_home))
    name_artifacts(other / "seq.db", VICTIM, video=named.replace("OTHER", str(other)))
    result = run_cli("eval", "merge", str(other / "seq.db"))
    refused_in_one_line(result, "seq.db", "as its video", "not merged")
    assert _evals() == []


def test_a_merged_shard_brings_its_own_artifacts_and_no_other_file(
    toy_file: Path, tmp_path: Path, seq_home: Path, monkeypatch: pytest.MonkeyPatch
):
    other = tmp_path / "other-home"
    monkeypatch.setenv("SEQ_HOME", str(other))
    finished_eval(toy_file)
    monkeypatch.setenv("SEQ_HOME", str(seq_home))
    videos = other / "artifacts" / VICTIM / "videos"
    videos.mkdir(parents=True)
    (videos / "a.mp4").write_bytes(b"an mp4")
    (videos / "link.mp4").symlink_to(outside_secret(tmp_path))
    name_artifacts(other / "seq.db", VICTIM, video=str(videos / "a.mp4"), trace=str(videos / "link.mp4"))
    assert run_cli("eval", "merge", str(other / "seq.db")).returncode == 0
    assert _evals() == [VICTIM]
    here = seq_home / "artifacts" / VICTIM / "videos"
    assert (here / "a.mp4").read_bytes() == b"an mp4" and not (here / "link.mp4").exists()
    (episode,) = seq.eval.report(VICTIM).episodes
    assert episode.artifacts == {"video": str(here / "a.mp4"), "trace": str(here / "link.mp4")}
    out = tmp_path / "copied"
    assert "wrote 1 video(s)" in run_cli("eval", "report", VICTIM, "--videos", str(out)).stdout
