"""Python twins of `seq benchmark export / check-model / compare --replay`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.port.controls import DEFAULT_STEPS
from seq.port.environment import run_in_port, run_worker
from seq.port.manifest import Engine
from seq.port.scene import check_counts, read_manifest

IN_IMAGE = "SEQ_PORT_IN_IMAGE"  # set in a benchmark image's export worker: export there


def export_benchmark(
    target: str,
    out: str | Path = "scene",
    *,
    seeds: Sequence[int] | None = None,
    tasks: Sequence[str] | None = None,
    suite: str | None = None,
    steps: int = DEFAULT_STEPS,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Export a benchmark's scenes and starts (`FILE[:Class]` or a name) into `out`, where the
    benchmark runs: in its image when it declares one, else in this Python. `seeds` and `tasks`
    narrow the suite's conditions as `seq.eval.run`'s do. The manifest."""
    from seq.isolation.images import ensure_image, image_of
    from seq.port.mujoco_export import export_here
    from seq.port.target import load_benchmark

    say = log or (lambda line: print(line, file=sys.stderr))
    check_counts(seeds, steps)
    _, spec = load_benchmark(target)
    image = spec.declared.get("image")
    arguments: dict[str, Any] = {"target": target, "out": str(Path(out).resolve()),
                 "seeds": None if seeds is None else list(seeds),
                 "tasks": None if tasks is None else list(tasks),
                 "suite": suite, "steps": steps}
    if image is None or os.environ.get(IN_IMAGE):
        return export_here(**{**arguments, "out": Path(arguments["out"])}, log=say)
    built = ensure_image(image_of(image), log=say)
    return run_worker(built.python, "export", arguments, {**built.environment, IN_IMAGE: "1"})


def check_model(scene: str | Path, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """What MuJoCo Warp's MuJoCo compiles differently in an exported scene (`seq.port.check_model`);
    for a SAPIEN scene, what stands between it and SAPIEN's GPU PhysX (`seq.port.sapien_check`)."""
    manifest = read_manifest(Path(scene))  # a folder that is not a scene is refused before the port starts
    if manifest.get("engine") == Engine.SAPIEN.value:
        from seq.port.sapien_check import check_sapien_here

        return check_sapien_here(scene)
    return run_in_port("check-model", {"scene": str(Path(scene).resolve())}, log)


def compare_replay(
    scene: str | Path,
    port: str | Path | None = None,
    *,
    conditions: int | None = None,
    atol: float = 1e-3,
    steps: int | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Replay each exported start on classic MuJoCo and MuJoCo Warp (`seq.port.replay`)."""
    from seq.port.replay import replay_steps

    manifest = read_manifest(Path(scene))  # bad input is refused before the port starts
    if port is not None:
        read_manifest(Path(port))
    replay_steps(manifest, conditions=conditions, atol=atol, steps=steps)
    if manifest.get("engine") == Engine.SAPIEN.value:
        if port is not None:
            raise SeqInputError(f"{port}: a SAPIEN scene is replayed on its own GPU PhysX; name one scene.")
        return _replay_sapien(manifest, scene, conditions=conditions, atol=atol, steps=steps, log=log)
    port_path = None if port is None else str(Path(port).resolve())
    arguments = {"scene": str(Path(scene).resolve()), "port": port_path,
                 "conditions": conditions, "atol": atol, "steps": steps}
    return run_in_port("replay", arguments, log)


def _replay_sapien(
    manifest: dict[str, Any], scene: str | Path, *, conditions: int | None, atol: float, steps: int | None,
    log: Callable[[str], None] | None,
) -> dict[str, Any]:
    """A SAPIEN scene's starts on SAPIEN's GPU PhysX (its CPU PhysX where no CUDA is), in the
    benchmark's image, against the export's reference (`seq.port.sapien_worlds`)."""
    from seq.isolation.images import ensure_image, image_of
    from seq.port.target import load_benchmark

    say = log or (lambda line: print(line, file=sys.stderr))
    arguments: dict[str, Any] = {"scene": str(Path(scene).resolve()), "conditions": conditions, "atol": atol,
                                 "steps": steps}
    image = load_benchmark(manifest["target"])[1].declared.get("image")
    if image is None or os.environ.get(IN_IMAGE):
        from seq.port.sapien_worlds import replay_sapien_here

        return replay_sapien_here(**arguments)
    built = ensure_image(image_of(image), log=say)
    return run_worker(built.python, "sapien-replay", arguments, {**built.environment, IN_IMAGE: "1"})
