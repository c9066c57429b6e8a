"""Run a deployed benchmark version's check where it runs, and keep what it printed and measured.

A benchmark that declares nothing about where it runs is checked in a fork of this process where
that is safe (one short episode, nothing imported again: deploy stays fast; a crash costs the
check, not the deploy; a process with threads or one that rendered starts a fresh one), its output
caught at the file descriptors so that even what a C library prints is kept.
One that declares an image, a volume, secrets or a memory limit is checked the way its workers
run: its image is built (the build's lines kept), and the episode runs in a process of the
image's Python with the volume, the secrets and the limit, its output masked.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from seq.engine.deploy_check_episode import check_episode
from seq.engine.worker_isolation import WorkerProcess, isolate
from seq.errors import SeqInputError
from seq.isolation.images import ImageBuildError
from seq.record.checks import FAILED_CHECK, READY, UNCHECKED, CheckRow
from seq.record.store import VersionRow

CHECK_TIMEOUT_S = 900.0  # one short episode in its own process: past this it is stuck
ISOLATING = ("image", "assets", "secrets", "memory")


# Modules that hold an OpenGL context once used: a fork of a process that rendered inherits a
# context the child cannot use (seen: the check's render hung until its timeout).
_GRAPHICS = ("mujoco.egl", "mujoco.osmesa", "mujoco.glfw", "OpenGL.GL", "OpenGL.EGL", "pyglet.gl")


def _fork_is_safe() -> bool:
    """A fork runs the check without importing anything again, but only a single-threaded process
    that has not rendered forks safely (a lock held by another thread, a graphics context); any
    other is checked in a fresh process of this Python."""
    return (
        hasattr(os, "fork")
        and sys.platform.startswith("linux")
        and threading.active_count() == 1
        and not any(name in sys.modules for name in _GRAPHICS)
    )


def _forked(ref: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The check in a fork of this process: nothing is imported again (deploy stays fast), what it
    prints is caught at the file descriptors (a C library's too), and a benchmark that kills its
    process (`os._exit`, a crash) costs the check, not the deploy."""
    with tempfile.TemporaryDirectory(prefix="seq-check-") as folder:
        output, result_file, stage_file = (Path(folder) / name for name in ("output", "result", "stage"))
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns into the caller's code
            code = 1
            try:
                descriptor = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                os.dup2(descriptor, 1)
                os.dup2(descriptor, 2)
                sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
                sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
                result = check_episode(ref, on_stage=stage_file.write_text)
                result_file.write_text(json.dumps(result, default=str))
                code = 0
            finally:
                for stream in (sys.stdout, sys.stderr):
                    stream.flush()
                os._exit(code)
        status = _wait(pid, CHECK_TIMEOUT_S)
        printed = output.read_text(errors="replace") if output.is_file() else ""
        if result_file.is_file():
            return json.loads(result_file.read_text()), printed
        stage = stage_file.read_text() if stage_file.is_file() else "start"
        return {"figures": {}, "failure": _died(stage, status)}, printed


def _wait(pid: int, timeout_s: float) -> int | None:
    """The child's exit code (negative: the signal that ended it); None: killed past `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.01)


def _died(stage: str, code: int | None) -> dict[str, Any]:
    """The failure of a check whose process ended before it could say how it went."""
    if code is None:
        message = f"ran past {CHECK_TIMEOUT_S:g} s"
        return {"stage": stage, "type": "TimeoutError", "message": message, "module": None}
    how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
    return {"stage": stage, "type": "ProcessDied", "message": f"its process {how}", "module": None}


def _apart(process: WorkerProcess, ref: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The check in a process of the benchmark's own Python, with its workers' environment."""
    with tempfile.TemporaryDirectory(prefix="seq-check-") as folder:
        result_file = Path(folder) / "check.json"
        command = [process.python, "-m", "seq.engine.deploy_check_episode", str(result_file), json.dumps(ref)]
        try:
            done = subprocess.run(
                command,
                env=process.environment_for(dict(os.environ)),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=CHECK_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired as timed_out:
            stage = _stage(result_file)
            return {"figures": {}, "failure": _died(stage, None)}, (timed_out.stdout or b"").decode()
        output = done.stdout.decode(errors="replace")
        if not result_file.is_file():
            return {"figures": {}, "failure": _died(_stage(result_file), done.returncode)}, output
        return json.loads(result_file.read_text()), output


def _stage(result_file: Path) -> str:
    """The stage a check in another process reached (`seq.engine.deploy_check_episode.main` keeps it)."""
    stage = Path(f"{result_file}.stage")
    return stage.read_text() if stage.is_file() else "start"


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
        used = isolation.manifest  # what an eval's manifest would say it ran with
        if used.get("image"):
            figures["image"] = {**used["image"], "build": build}
        result, output = _apart(isolation.process, row.ref)
    elif _fork_is_safe():
        result, output = _forked(row.ref)
    else:  # no fork to rely on: a fresh process of this Python
        result, output = _apart(WorkerProcess(), row.ref)
    if masker:
        output, result = masker.text(output) or "", masker.value(result)
    figures.update(result["figures"])
    failure = result["failure"]
    if failure is None:
        return CheckRow(row.name, row.version, READY, output, figures, None, time.time())
    figures["failure"] = failure
    message = _message(row, failure, bool(declared.get("image")))
    return CheckRow(row.name, row.version, FAILED_CHECK, output, figures, message, time.time())
