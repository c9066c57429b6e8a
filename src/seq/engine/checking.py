"""Run a deployed benchmark version's check where it runs, and keep what it printed and measured.

A benchmark that declares nothing about where it runs is checked in this process (one short
episode: deploy stays fast), its output caught at the file descriptors so that even what a C
library prints is kept. One that declares an image, a volume, secrets or a memory limit is checked
the way its workers run: its image is built (the build's lines kept), and the episode runs in a
process of the image's Python with the volume, the secrets and the limit, its output masked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from seq.engine.check import check_episode
from seq.engine.worker_process import WorkerProcess, isolate
from seq.errors import SeqInputError
from seq.isolation.images import ImageBuildError
from seq.record.checks import FAILED_CHECK, READY, UNCHECKED, CheckRow
from seq.record.store import VersionRow

CHECK_TIMEOUT_S = 900.0  # one short episode in its own process: past this it is stuck
ISOLATING = ("image", "assets", "secrets", "memory")


@contextmanager
def _captured() -> Iterator[list[str]]:
    """What this process writes to stdout and stderr meanwhile — through Python or straight to the
    file descriptors — into the one-element list yielded (filled on exit)."""
    found: list[str] = []
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as sink:
        saved = [os.dup(1), os.dup(2)]
        text = open(os.dup(sink.fileno()), "w", buffering=1, encoding="utf-8", errors="replace")  # noqa: SIM115
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            with redirect_stdout(text), redirect_stderr(text):
                yield found
        finally:
            text.flush()
            text.close()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for descriptor in saved:
                os.close(descriptor)
            sink.seek(0)
            found.append(sink.read().decode(errors="replace"))


def _here(ref: dict[str, Any]) -> tuple[dict[str, Any], str]:
    with _captured() as output:
        result = check_episode(ref)
    return result, output[0]


def _apart(process: WorkerProcess, ref: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The check in a process of the benchmark's own Python, with its workers' environment."""
    with tempfile.TemporaryDirectory(prefix="seq-check-") as folder:
        result_file = Path(folder) / "check.json"
        command = [process.python, "-m", "seq.engine.check", str(result_file), json.dumps(ref)]
        try:
            done = subprocess.run(
                command,
                env=process.environment_for(dict(os.environ)),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=CHECK_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired as timed_out:
            output = (timed_out.stdout or b"").decode(errors="replace")
            message = f"ran past {CHECK_TIMEOUT_S:g} s"
            failure = {"stage": "timeout", "type": "TimeoutError", "message": message, "module": None}
            return {"figures": {}, "failure": failure}, output
        output = done.stdout.decode(errors="replace")
        if not result_file.is_file():
            message = f"its process exited with code {done.returncode} before it finished"
            failure = {"stage": "start", "type": "ProcessDied", "message": message, "module": None}
            return {"figures": {}, "failure": failure}, output
        return json.loads(result_file.read_text()), output


def _message(row: VersionRow, failure: dict[str, Any], in_image: bool) -> str:
    """One sentence: what failed the check, naming a missing module."""
    where = "its image" if in_image else "this Python environment"
    see = f"seq benchmark logs {row.name} --version {row.version} shows the check"
    if failure.get("module"):
        fix = "add it to the image's pip_install" if in_image else "install it here"
        return (
            f"benchmark {row.label}: its check failed: module {failure['module']!r} is not installed "
            f"in {where} ({failure['type']}: {failure['message']}); {fix}. {see}."
        )
    return (
        f"benchmark {row.label}: its check failed at {failure['stage']} in {where}: "
        f"{failure['type']}: {failure['message']}. {see}."
    )


def check_version(row: VersionRow) -> CheckRow:
    """Check a benchmark version (see the module's doc); the row says how it went. A volume or a
    secret not there yet leaves it unchecked, saying which."""
    declared = row.declared.get("declared", {})
    isolated = any(declared.get(kind) for kind in ISOLATING)
    figures: dict[str, Any] = {}
    masker = None
    if isolated:
        build: list[str] = []
        try:
            isolation = isolate(row.name, declared, 1, allow_cpu=True, log=build.append)
        except SeqInputError as error:  # an image that does not build fails; a volume not put waits
            failed = FAILED_CHECK if isinstance(error, ImageBuildError) else UNCHECKED
            return CheckRow(row.name, row.version, failed, "\n".join(build), {}, str(error), time.time())
        masker = isolation.process.masker
        if isolation.manifest.get("image"):
            figures["image"] = {**isolation.manifest["image"], "build": build}
        result, output = _apart(isolation.process, row.ref)
    else:
        result, output = _here(row.ref)
    if masker:
        output, result = masker.text(output) or "", masker.value(result)
    figures.update(result["figures"])
    failure = result["failure"]
    if failure is None:
        return CheckRow(row.name, row.version, READY, output, figures, None, time.time())
    figures["failure"] = failure
    message = _message(row, failure, bool(declared.get("image")))
    return CheckRow(row.name, row.version, FAILED_CHECK, output, figures, message, time.time())
