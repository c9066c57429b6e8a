"""`seq benchmark scaffold SCENE --envs N`: a MuJoCo Warp benchmark to finish, from an export.

Writes a folder holding `benchmark.py` (a `@seq.benchmark` in the port image: its worlds are
`seq.port.worlds.WarpWorlds` — every exported start one world, its seed's numbers set world by
world, the options the benchmark's MuJoCo compiled pinned, contact buffers sized from the busiest
start), the scene (copied beside it, or, past 8 MB, left for a volume: the README gives the
`seq volume put`), and a README. The scene's MJB, readable only by the benchmark's own MuJoCo,
stays behind. Left to the author, marked TODO: the controller that turns an
action into actuator inputs, the observation, and the success check.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError, make_output_folder
from seq.port import scene as layout
from seq.port.environment import PORT_REQUIREMENTS
from seq.port.manifest import Engine

VOLUME_OVER_BYTES = 8 * 1024 * 1024
TEMPLATES = Path(__file__).parent / "templates"


def scaffold(
    scene: str | Path, envs: int, out: str | Path | None = None, name: str | None = None,
    check: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the skeleton; returns where it went, whether the scene is in a volume, and its name.
    `check` (a `check_model` result) lists the options pinned back in the skeleton's comments."""
    directory = Path(scene)
    manifest = layout.read_manifest(directory)
    if envs < 1:
        raise SeqInputError(f"--envs must be 1 or more, got {envs}.")
    sapien = manifest.get("engine") == Engine.SAPIEN.value
    name = name or f"{manifest['benchmark']}-{'gpu' if sapien else 'warp'}"
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
        raise SeqInputError(f"--name {name!r}: use lower-case letters, digits and hyphens.")
    target = Path(out or f"{name}")
    if any(make_output_folder(target).iterdir()):
        raise SeqInputError(f"{target}: exists and is not empty; name another folder with --output.")
    size = sum(path.stat().st_size for path in directory.rglob("*")
               if path.is_file() and path.suffix != ".mjb")
    in_volume = size > VOLUME_OVER_BYTES
    volume = f"{name}-scene"
    if not in_volume:
        shutil.copytree(directory, target / "scene", ignore=shutil.ignore_patterns("*.mjb"))
    values = _values(manifest, envs, name, in_volume, volume, check, directory, size, target, sapien)
    for template in ("benchmark.py", "README.md"):
        text = (TEMPLATES / f"{'sapien_' if sapien else ''}{template}.template").read_text()
        (target / template).write_text(text.format(**values))
    return {"out": str(target), "name": name, "volume": volume if in_volume else None,
            "scene_bytes": size, "envs": envs}


def _values(
    manifest: dict[str, Any], envs: int, name: str, in_volume: bool, volume: str,
    check: dict[str, Any] | None, directory: Path, size: int, target: Path, sapien: bool,
) -> dict[str, Any]:
    conditions: dict[str, list[int]] = {}
    for start in manifest["starts"]:
        conditions.setdefault(start["task"], []).append(int(start["seed"]))
    class_name = "".join(part.capitalize() for part in re.split(r"[-_]", name) if part)
    scene_line = (
        'seq.assets_path() / "scene"  # the volume, read-only (README: seq volume put)'
        if in_volume
        else f'Path({json.dumps(str(target.resolve() / "scene"))})  # seq runs a copy of this file'
    )
    common = {
        "name": name,
        "class_name": class_name,
        "benchmark": manifest["benchmark"],
        "envs": envs,
        "tasks": json.dumps(sorted(conditions)),
        "seeds": json.dumps(sorted({seed for seeds in conditions.values() for seed in seeds})),
        "scene_line": scene_line,
        "assets_line": f'\n    assets=seq.Volume.from_name("{volume}"),' if in_volume else "",
        "volume_section": (
            f"The scene ({size / 1e6:.1f} MB) is too large to ship with the code; upload it once:\n\n"
            f"    seq volume put {volume} SCENE_DIR --kind dataset\n\n"
            f"where SCENE_DIR holds the export under `scene/` (the benchmark reads "
            f"`seq.assets_path() / \"scene\"`).\n"
            if in_volume else f"The scene ({size / 1e6:.1f} MB) is copied beside the code, under `scene/`.\n"
        ),
    }
    if sapien:
        return {**common, **_sapien_values(manifest, directory)}
    scenes = (check or {}).get("scenes", [])
    pinned = sorted({option["option"] for scene in scenes for option in scene["options"] + scene["defaults"]})
    options = layout.read_options(directory, manifest["scenes"][0]["id"])
    return {
        **common,
        "mujoco": manifest["mujoco"],
        "requirements": ", ".join(json.dumps(r) for r in PORT_REQUIREMENTS),
        "pinned": (
            "every option, as exported" if check is None
            else ", ".join(f"{o} = {options['scene'].get(o)}" for o in pinned) or "none changed"
        ),
        "busiest": max((start["contacts"] for start in manifest["starts"]), default=0),
    }


def _sapien_values(manifest: dict[str, Any], directory: Path) -> dict[str, Any]:
    """What a SAPIEN skeleton names: its image's pins, GPU systems and no-GPU calls per task."""
    from seq.port.sapien_check import check_sapien_here

    check = check_sapien_here(directory)
    versions = manifest.get("versions", {})
    pins = [f"mani-skill=={versions['mani_skill']}" if "mani_skill" in versions else "mani-skill",
            f"sapien=={manifest['sapien']}", "torch", "numpy<2"]
    calls = ", ".join(f"{c['call']} ({', '.join(c['tasks'])})" for c in check["no_gpu_calls"])
    return {
        "sapien": manifest["sapien"],
        "requirements": ", ".join(json.dumps(p) for p in pins),
        "systems": ", ".join(f"{task} {n}" for task, n in check["gpu_systems"].items()),
        "no_gpu_calls": calls or "none",
    }
