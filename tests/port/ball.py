"""An export made once for the port's fast tests: the raw-MuJoCo ball, in seq's own Python (a
plugin of tests/conftest.py: a conftest.py here would shadow the top one's `from conftest import`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.port.scenes import BALL


@pytest.fixture(scope="session")
def ball_scene(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An exported scene folder (3 starts, 20 steps); copy it before changing it."""
    root = tmp_path_factory.mktemp("ball")
    source = root / "ball_bench.py"
    source.write_text(BALL)
    out = root / "scene"
    exported = run_cli("benchmark", "export", f"{source}:Ball", "--out", str(out), "--steps", "20",
                       env={"SEQ_HOME": str(root / "home")})
    assert exported.returncode == 0, exported.stderr
    return out
