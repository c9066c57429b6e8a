"""`tools/libero_faithfulness.py`: seq's LIBERO files (the `libero` image's package) against
upstream's (the `hf-libero` wheel, fetched from PyPI with pip), and a tampered copy it must catch."""

from __future__ import annotations

import io
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "libero_faithfulness.py"
SPATIAL = "libero/libero/bddl_files/libero_spatial/"
STATES = "libero/libero/init_files/libero_object/"


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hf-libero")
    command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "hf-libero==0.1.4"]
    subprocess.run([*command, "-d", str(folder)], check=True, timeout=300)
    return next(folder.glob("hf_libero-*.whl"))


def _tool(wheel: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(TOOL), "--upstream", str(wheel)], capture_output=True, text=True, timeout=1200
    )


def test_every_bddl_file_and_init_state_equals_upstream(upstream: Path):
    done = _tool(upstream)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    same = "init-state files {0}/{0} equal; states per task: 50"
    assert f"libero_spatial: 10 tasks; BDDL 10/10 byte-identical; {same.format(20)}" in lines
    assert f"libero_goal: 10 tasks; BDDL 10/10 byte-identical; {same.format(10)}" in lines
    assert f"libero_90: 90 tasks; BDDL 90/90 byte-identical; {same.format(180)}" in lines
    assert lines[-1] == "faithful: every file equals upstream's"


def test_a_changed_byte_or_state_is_named(upstream: Path, tmp_path: Path):
    tampered = tmp_path / upstream.name
    with zipfile.ZipFile(upstream) as original, zipfile.ZipFile(tampered, "w") as copy:
        bddl = next(n for n in original.namelist() if n.startswith(SPATIAL) and n.endswith(".bddl"))
        state = next(n for n in original.namelist() if n.startswith(STATES) and n.endswith(".pruned_init"))
        for name in original.namelist():
            data = original.read(name)
            if name == bddl:
                data = data.replace(b"(:language", b"(:language  ", 1)
            elif name == state:
                with zipfile.ZipFile(io.BytesIO(data)) as saved:
                    pickled = saved.read("archive/data.pkl")
                array = pickle.loads(pickled)
                array[3, 7] += 1e-12
                buffer = io.BytesIO()
                with zipfile.ZipFile(buffer, "w") as resaved:  # as torch.save lays it out
                    resaved.writestr("archive/data.pkl", pickle.dumps(array, protocol=2))
                    resaved.writestr("archive/version", "3\n")
                data = buffer.getvalue()
            copy.writestr(name, data)
    done = _tool(tampered)
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert f"DIFFERS: libero_spatial/{Path(bddl).name}: differs from upstream's" in done.stdout
    assert f"DIFFERS: libero_object/{Path(state).name}: float64" in done.stdout  # one value, 1e-12 off
    assert done.stdout.splitlines()[-1] == "2 differences"
