"""Volumes: content-addressed versions, read-only files, removal, and `seq volume`."""

from __future__ import annotations

import json
import os
import re
import stat

import pytest
from conftest import refused_in_one_line, run_cli

from seq.errors import SeqInputError
from seq.isolation.volumes import (
    current_volume,
    list_volumes,
    put_volume,
    remove_volume,
    volume_version,
)


@pytest.fixture
def tasks_dir(tmp_path):
    folder = tmp_path / "tasks"
    (folder / "sub").mkdir(parents=True)
    (folder / "tasks.json").write_text(json.dumps({"tasks": ["reach", "push"]}))
    (folder / "sub" / "weights.bin").write_bytes(bytes(range(256)) * 10)
    return folder


def test_the_same_content_is_the_same_version(tasks_dir, tmp_path, seq_home):
    first, new = put_volume("tasks", tasks_dir)
    assert new and first.current and first.kind == "dataset"
    assert re.fullmatch(r"[0-9a-f]{16}", first.version)  # a content hash's prefix
    assert (first.files, first.size_bytes) == (2, len((tasks_dir / "tasks.json").read_bytes()) + 2560)
    assert first.path == seq_home / "volumes" / "tasks" / first.version
    assert (first.path / "sub" / "weights.bin").read_bytes() == bytes(range(256)) * 10

    copy = tmp_path / "elsewhere"
    copy.mkdir()
    (copy / "sub").mkdir()
    (copy / "sub" / "weights.bin").write_bytes(bytes(range(256)) * 10)
    (copy / "tasks.json").write_bytes((tasks_dir / "tasks.json").read_bytes())
    again, new = put_volume("tasks", copy)
    assert not new and again.version == first.version
    assert [v.version for v in list_volumes()] == [first.version]


def test_changed_content_is_a_new_version_and_the_old_one_stays(tasks_dir):
    first, _ = put_volume("tasks", tasks_dir)
    (tasks_dir / "tasks.json").write_text("{}")
    second, new = put_volume("tasks", tasks_dir)
    assert new and second.version != first.version
    listed = list_volumes()
    assert [(v.version, v.current) for v in listed] == [(first.version, False), (second.version, True)]
    assert current_volume("tasks").version == second.version
    assert volume_version("tasks", first.version).path.joinpath("tasks.json").read_text() != "{}"
    assert volume_version("tasks", first.version[:6]).version == first.version

    # putting the old content again makes it current without copying it again
    (tasks_dir / "tasks.json").write_text(json.dumps({"tasks": ["reach", "push"]}))
    back, new = put_volume("tasks", tasks_dir)
    assert not new and back.version == first.version and current_volume("tasks").version == first.version
    assert len(list_volumes()) == 2


def test_a_mode_change_is_a_new_version(tasks_dir):
    first, _ = put_volume("tasks", tasks_dir)
    os.chmod(tasks_dir / "tasks.json", 0o755)
    second, new = put_volume("tasks", tasks_dir)
    assert new and second.version != first.version
    assert stat.S_IMODE((second.path / "tasks.json").stat().st_mode) == 0o555


def test_stored_files_are_read_only(tasks_dir):
    version, _ = put_volume("tasks", tasks_dir, kind="weights")
    assert version.kind == "weights"
    for directory, _, files in os.walk(version.path):
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o555
        for name in files:
            assert stat.S_IMODE(os.stat(os.path.join(directory, name)).st_mode) == 0o444
    # the kind stays the volume's when a later put leaves it out
    (tasks_dir / "more.txt").write_text("x")
    assert put_volume("tasks", tasks_dir)[0].kind == "weights"


def test_links_inside_are_copied_and_links_outsiderefused_in_one_line(tasks_dir, tmp_path):
    (tasks_dir / "alias.json").symlink_to("tasks.json")
    (tasks_dir / "subalias").symlink_to("sub")
    version, _ = put_volume("tasks", tasks_dir)
    copied = version.path / "alias.json"
    assert not copied.is_symlink() and copied.read_text() == (tasks_dir / "tasks.json").read_text()
    assert (version.path / "subalias" / "weights.bin").is_file()

    secret = tmp_path / "secret.txt"
    secret.write_text("no")
    (tasks_dir / "leak").symlink_to(secret)
    with pytest.raises(SeqInputError, match="points outside"):
        put_volume("tasks", tasks_dir)
    assert len(list_volumes()) == 1
    assert not list((version.path.parent).glob(".tmp-*"))


def test_a_link_loop_isrefused_in_one_line(tasks_dir):
    (tasks_dir / "sub" / "up").symlink_to("..")
    with pytest.raises(SeqInputError, match="loop"):
        put_volume("tasks", tasks_dir)


def test_remove_one_version_then_all(tasks_dir, seq_home):
    first, _ = put_volume("tasks", tasks_dir)
    (tasks_dir / "tasks.json").write_text("{}")
    second, _ = put_volume("tasks", tasks_dir)
    removed = remove_volume("tasks", second.version)
    assert [v.version for v in removed] == [second.version]
    assert not second.path.exists()
    assert current_volume("tasks").version == first.version

    put_volume("tasks", tasks_dir)
    assert [v.version for v in remove_volume("tasks")] == [first.version, second.version]
    assert list_volumes() == []
    assert not (seq_home / "volumes" / "tasks").exists()
    with pytest.raises(SeqInputError, match="no such volume"):
        current_volume("tasks")


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda d: put_volume("a/b", d), "volume name 'a/b'"),
        (lambda d: put_volume("..", d), "volume name '..'"),
        (lambda d: put_volume("tasks", d, kind="model"), "kind 'model': expected one of dataset, weights"),
        (lambda d: put_volume("tasks", d / "missing"), "does not exist"),
        (lambda d: put_volume("tasks", d / "tasks.json"), "is not a directory"),
        (lambda d: current_volume("nope"), "volume nope: no such volume (seq volume ls lists them"),
        (lambda d: remove_volume("nope"), "volume nope: no such volume"),
    ],
)
def test_bad_input_is_one_sentence(tasks_dir, call, fragment):
    with pytest.raises(SeqInputError) as caught:
        call(tasks_dir)
    assert fragment in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_unknown_version_lists_the_known_ones(tasks_dir):
    version, _ = put_volume("tasks", tasks_dir)
    with pytest.raises(SeqInputError, match=f"no version 'ffff'.*{version.version}"):
        volume_version("tasks", "ffff")


def test_the_command_line(tasks_dir):
    put = run_cli("volume", "put", "tasks", str(tasks_dir))
    assert put.returncode == 0, put.stderr
    version = current_volume("tasks").version
    assert put.stdout.strip() == f"volume tasks: version {version} (new), 2 files, 2.6 KB"
    again = run_cli("volume", "put", "tasks", str(tasks_dir), "--kind", "dataset")
    assert f"version {version} (unchanged)" in again.stdout

    listed = run_cli("volume", "ls")
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if "tasks" in line)
    assert version in row and "dataset" in row and "2.6 KB" in row and "*" in row
    as_json = json.loads(run_cli("volume", "ls", "--json").stdout)
    assert as_json[0]["version"] == version and as_json[0]["current"] is True

    refused_in_one_line(run_cli("volume", "put", "a/b", str(tasks_dir)), "volume name 'a/b'")
    refused_in_one_line(run_cli("volume", "put", "tasks", str(tasks_dir), "--kind", "model"), "kind 'model'")
    refused_in_one_line(run_cli("volume", "put", "tasks", str(tasks_dir / "nope")), "does not exist")
    refused_in_one_line(run_cli("volume", "rm", "tasks", "--version", "0000"), "no version '0000'")
    refused_in_one_line(run_cli("volume", "rm", "other"), "volume other: no such volume")

    removed = run_cli("volume", "rm", "tasks")
    assert removed.returncode == 0 and f"removed volume tasks version {version}" in removed.stdout
    assert list_volumes() == []
