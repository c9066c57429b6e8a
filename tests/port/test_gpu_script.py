"""bench/gpu.sh on a machine without a CUDA GPU: it gets as far as its first GPU call (Warp listing
the CUDA devices, in the port environment's Python) and stops there with one sentence, exit 1,
having measured nothing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from seq.port.environment import port_python

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "gpu.sh"


def test_without_a_gpu_it_stops_at_its_first_gpu_call(tmp_path: Path) -> None:
    figures = tmp_path / "figures.txt"
    environment = {**os.environ, "SEQ_PORT_PYTHON": str(port_python()), "LIFT_SCENE": str(tmp_path / "none")}
    result = subprocess.run(
        ["bash", str(SCRIPT), str(figures)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
        cwd=tmp_path,
    )
    sentence = (
        "bench/gpu.sh: no CUDA GPU was found (Warp sees no CUDA device), so no GPU figure was measured."
    )
    assert result.returncode == 1, result.stderr
    assert result.stdout.strip() == sentence
    assert figures.read_text().splitlines()[1:] == [sentence]  # after its header line, nothing measured
    assert not (tmp_path / "none").exists()  # stopped before exporting the scene
