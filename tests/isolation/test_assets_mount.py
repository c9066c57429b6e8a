"""The assets mount: a worker sees its volume read-only at /assets; the parent's mounts are untouched.

`enter_assets` runs only in subprocesses here, never in the pytest process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from seq.isolation.assets import assets_path
from seq.isolation.volumes import put_volume

PROBE = textwrap.dedent(
    """
    import errno, json, os, sys
    from pathlib import Path
    import seq.isolation.assets as assets
    if len(sys.argv) > 2:
        assets.CLONE_NEWNS = -1  # an unshare that fails, to take the fallback
    line = assets.enter_assets(Path(sys.argv[1]))
    where = assets.assets_path()
    result = {"line": line, "where": str(where), "tasks": json.loads((where / "tasks.json").read_text())}
    for key, target in (("write_assets", Path("/assets/x")), ("write_source", Path(sys.argv[1]) / "x")):
        try:
            target.write_text("no")
            result[key] = "written"
            target.unlink()
        except OSError as error:
            result[key] = errno.errorcode.get(error.errno, str(error.errno))
    print(json.dumps(result))
    """
)


def _mount_points() -> set[str]:
    with open("/proc/self/mountinfo") as handle:
        return {line.split()[4] for line in handle}


def _namespaces_work() -> bool:
    if os.geteuid() != 0:
        return False
    try:
        return subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _probe(source, *extra):
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(source), *extra], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def volume(tmp_path):
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "tasks.json").write_text(json.dumps(["reach", "push"]))
    return put_volume("tasks", folder)[0]


def test_a_worker_sees_the_volume_read_only_at_assets(volume):
    if not _namespaces_work():
        pytest.skip("needs root and mount namespaces")
    before = _mount_points()
    result = _probe(volume.path)
    assert result["line"] == "volume mounted read-only at /assets (mount namespace)"
    assert result["where"] == "/assets" and result["tasks"] == ["reach", "push"]
    assert result["write_assets"] == "EROFS"
    assert result["write_source"] == "EROFS"
    after = _mount_points()
    assert after == before
    assert "/assets" not in after and str(os.path.realpath(volume.path)) not in after


def test_without_a_namespace_the_worker_reads_the_store_path(volume):
    before = _mount_points()
    result = _probe(volume.path, "fail")
    assert result["line"].startswith(f"volume at {os.path.realpath(volume.path)}, read-only by file mode")
    assert "no mount namespace here: unshare(CLONE_NEWNS)" in result["line"]
    assert result["where"] == os.path.realpath(volume.path) and result["tasks"] == ["reach", "push"]
    if os.geteuid() != 0:  # root writes through file modes; nobody else does
        assert result["write_source"] == "EACCES"
    assert _mount_points() == before


def test_assets_path_without_a_volume(monkeypatch):
    monkeypatch.delenv("SEQ_ASSETS", raising=False)
    with pytest.raises(RuntimeError, match="declares no assets= volume"):
        assets_path()
    monkeypatch.setenv("SEQ_ASSETS", "/somewhere")
    assert str(assets_path()) == "/somewhere"
