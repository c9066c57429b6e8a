"""The port's own environment: MuJoCo Warp and the MuJoCo it is built with, apart from the
benchmark's (MetaWorld pins MuJoCo 3.3.0; MuJoCo Warp needs 3.13 or later).

It is a `seq.Image` like any benchmark's (built once with uv, cached under `$SEQ_IMAGES` or
`$SEQ_HOME/images`); `check-model` and `compare --replay` run `python -m seq.port.worker` in it and
read back one JSON result. Where this Python already has MuJoCo Warp (`pip install 'seq[port]'`),
or `$SEQ_PORT_PYTHON` names a Python that has, that Python is used instead. Warp compiles its
kernels once per machine (about 40 s on a CPU) and keeps them in its cache (`~/.cache/warp`, or
`$WARP_CACHE_PATH`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from seq.authoring.declarations import Image
from seq.errors import SeqInputError

# MuJoCo Warp 4.0.0 takes any MuJoCo 4.0.x: pinned, so that every port environment steps alike
PORT_REQUIREMENTS = ("mujoco-warp==4.0.0", "warp-lang==1.19.0", "mujoco==4.0.1")
PORT_IMAGE = Image.debian_slim().uv_pip_install(*PORT_REQUIREMENTS)


class PortRunError(RuntimeError):
    """The port environment's worker failed; the message carries the end of what it printed."""


def port_python(log: Callable[[str], None] | None = None) -> Path:
    """A Python with MuJoCo Warp: `$SEQ_PORT_PYTHON`, this one, else the port image (built once)."""
    named = os.environ.get("SEQ_PORT_PYTHON")
    if named:
        return Path(named)
    if importlib.util.find_spec("mujoco_warp") is not None:
        return Path(sys.executable)
    from seq.isolation.images import ensure_image

    return ensure_image(PORT_IMAGE, log=log).python


def run_in_port(command: str, arguments: dict[str, Any], log: Callable[[str], None] | None = None) -> Any:
    """Run `seq.port.worker COMMAND` in the port environment; its JSON result."""
    return run_worker(port_python(log), command, arguments)


def run_worker(
    python: Path, command: str, arguments: dict[str, Any], extra_env: dict[str, str] | None = None
) -> Any:
    """Run `seq.port.worker COMMAND` with `python` (the port's, or a benchmark image's); its JSON
    result. The worker's own lines (progress, warnings) go to this process's stderr."""
    with tempfile.TemporaryDirectory(prefix="seq-port-") as scratch:
        result = Path(scratch) / "result.json"
        process = subprocess.run(
            [str(python), "-m", "seq.port.worker", command, json.dumps(arguments), str(result)],
            stdout=sys.stderr,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(extra_env or {})},
        )
        answer = json.loads(result.read_text()) if result.is_file() else None
        if process.returncode == 2 and isinstance(answer, dict) and "refused" in answer:
            raise SeqInputError(answer["refused"])
        if process.returncode != 0 or answer is None:
            raise PortRunError(
                f"seq.port.worker {command} failed in {python} (exit {process.returncode}); "
                "its traceback is above."
            )
        return answer
