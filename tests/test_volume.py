"""`seq.volume`, the Python twin of `seq volume`: put a folder, list its versions, remove them."""

from __future__ import annotations

from pathlib import Path

import seq


def test_put_ls_and_rm(tmp_path: Path) -> None:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "a.json").write_text('{"task": "a"}')
    first, new = seq.volume.put("tasks", folder)
    assert new and first.files == 1 and first.kind == "dataset"
    assert seq.volume.put("tasks", folder) == (first, False)  # the same content is the same version
    (folder / "b.json").write_text('{"task": "b"}')
    second, new = seq.volume.put("tasks", folder, kind="dataset")
    assert new and second.version != first.version
    listed = seq.volume.ls()
    assert [(v.version, v.current) for v in listed] == [(first.version, False), (second.version, True)]
    assert [v.version for v in seq.volume.rm("tasks", first.version)] == [first.version]
    assert [v.version for v in seq.volume.rm("tasks")] == [second.version]
    assert seq.volume.ls() == []
