"""What a benchmark's declarations make of its worker processes: which Python runs them (`image=`),
which volume they see read-only (`assets=`), which secrets they get (`secrets=`), how much memory
each may use (`memory=`), how many there are (`cpu=`) and which device they need (`gpu=`).

`isolate` turns a benchmark's declarations into a `WorkerProcess` (how the local backend starts a
worker) and the manifest entries that say what the eval ran with; secrets' values never reach the
manifest, only their names, and a `Masker` hides them in everything recorded.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from seq.authoring.declarations import Image
from seq.authoring.resources import memory_text
from seq.engine.worker_lifecycle import ASSETS_VARIABLE, MEMORY_VARIABLE, RUNNER_VARIABLE
from seq.errors import SeqInputError

if TYPE_CHECKING:  # the secrets store is the runner's business: a worker starts without it
    from seq.isolation.secrets import Masker

log = logging.getLogger("seq.isolation")  # an image's build, step by step (the CLI shows it)
IMAGE_VARIABLE = "SEQ_IMAGE"  # set in an image's workers: `Image.imports()` raises there


def _masker(values: Any) -> Masker:
    from seq.isolation.secrets import Masker

    return Masker(values)


@dataclass(frozen=True)
class WorkerProcess:
    """How the local backend starts a worker: its Python, extra environment and limits."""

    python: str = sys.executable
    environment: Mapping[str, str] = field(default_factory=dict)
    memory_bytes: int | None = None
    assets: str | None = None
    masker: Masker = field(default_factory=lambda: _masker(()))  # what the workers' stderr must not show

    def command(self, fd: int) -> list[str]:
        return [self.python, "-m", "seq.engine", str(fd)]

    def environment_for(self, base: Mapping[str, str]) -> dict[str, str]:
        environment = {**base, **self.environment, RUNNER_VARIABLE: str(os.getpid())}
        if self.memory_bytes is not None:
            environment[MEMORY_VARIABLE] = str(self.memory_bytes)
        if self.assets is not None:
            environment[ASSETS_VARIABLE] = self.assets
        return environment

    def memory_text(self) -> str:
        return memory_text(self.memory_bytes) if self.memory_bytes is not None else "none"


@dataclass
class Isolation:
    """A benchmark's declarations, resolved for one eval."""

    process: WorkerProcess = field(default_factory=WorkerProcess)
    manifest: dict[str, Any] = field(default_factory=dict)
    policy_apart: bool = False  # secrets: the policy (and its adapter) run outside the workers
    declared: tuple[str, ...] = ()  # which of image/assets/secrets/memory the benchmark declares


def visible_gpus() -> list[str]:
    """The names of this machine's NVIDIA cards (`nvidia-smi`), or none."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        listing = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in listing.splitlines() if line.strip()]


def check_gpu(benchmark: str, gpu: str | None, allow_cpu: bool) -> dict[str, Any]:
    """The manifest's `gpu` entry; a named card missing here refuses the eval unless `allow_cpu`."""
    if gpu is None or gpu.lower() == "cpu":
        return {"declared": gpu or "cpu", "used": "cpu"}
    cards = visible_gpus()
    matching = [card for card in cards if gpu.lower() == "any" or gpu.lower() in card.lower()]
    if matching:
        return {"declared": gpu, "used": matching[0]}
    if not allow_cpu:
        found = ", ".join(cards) if cards else "none (nvidia-smi finds no card)"
        raise SeqInputError(
            f"benchmark {benchmark} declares gpu={gpu!r} and this machine has no such card (found: "
            f"{found}); pass --allow-cpu to run it on the CPU anyway."
        )
    return {"declared": gpu, "used": "cpu (--allow-cpu)"}


def check_isolation(declared: Mapping[str, Any], benchmark: str) -> None:
    """Build the declared image (once: it is cached) and check that the volume and the secrets
    exist; raises `SeqInputError` (an `ImageBuildError` for a build) naming what is missing."""
    isolate(benchmark, declared, 1, allow_cpu=True)


def isolate(
    benchmark: str,
    declared: Mapping[str, Any],
    workers: int,
    held_volume: str | None = None,
    allow_cpu: bool = False,
    log: Callable[[str], None] | None = log.info,
) -> Isolation:
    """Resolve `declared` (a benchmark spec's `declared`) for an eval with `workers` workers.

    `held_volume` is the volume version the eval's manifest holds (a resumed eval): it reads the
    same version as before. Builds the image if it is not cached yet; a failed build raises
    `ImageBuildError` before any episode runs.
    """
    manifest: dict[str, Any] = {"gpu": check_gpu(benchmark, declared.get("gpu"), allow_cpu)}
    environment: dict[str, str] = {}
    python = sys.executable
    kinds: list[str] = []
    if declared.get("image") is not None:
        from seq.isolation.images import ensure_image

        image = Image.from_dict(declared["image"])
        built = ensure_image(image, log=log)
        python = str(built.python)
        environment.update(built.environment)
        environment[IMAGE_VARIABLE] = built.key
        manifest["image"] = {"key": built.key, "setup_s": round(built.setup_s, 3), "cached": built.cached}
        kinds.append("image")
    assets = None
    if declared.get("assets") is not None:
        from seq.isolation.volumes import current_volume, volume_version

        name = declared["assets"]["volume"]
        volume = volume_version(name, held_volume) if held_volume else current_volume(name)
        assets = str(volume.path)
        manifest["assets"] = {"volume": volume.name, "version": volume.version, "kind": volume.kind}
        kinds.append("assets")
    masker = _masker(())
    if declared.get("secrets"):
        from seq.isolation.secrets import secret_environment

        names = [entry["secret"] for entry in declared["secrets"]]
        secrets = secret_environment(names)
        environment.update(secrets)
        masker = _masker(secrets.values())
        manifest["secrets"] = {"names": names, "variables": sorted(secrets)}
        kinds.append("secrets")
    memory_bytes = None
    if declared.get("memory") is not None:
        total = int(declared["memory"])
        memory_bytes = max(1, total // workers)
        manifest["memory"] = {"total": memory_text(total), "per_worker": memory_text(memory_bytes)}
        kinds.append("memory")
    process = WorkerProcess(python, environment, memory_bytes, assets, masker)
    return Isolation(process, manifest, policy_apart=bool(declared.get("secrets")), declared=tuple(kinds))
