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

from seq.errors import SeqInputError
from seq.port import scene as layout
from seq.port.environment import PORT_REQUIREMENTS

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
    name = name or f"{manifest['benchmark']}-warp"
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
        raise SeqInputError(f"--name {name!r}: use lower-case letters, digits and hyphens.")
    target = Path(out or f"{name}")
    if target.exists() and any(target.iterdir()):
        raise SeqInputError(f"{target}: exists and is not empty; name another folder with --output.")
    target.mkdir(parents=True, exist_ok=True)
    size = sum(path.stat().st_size for path in directory.rglob("*")
               if path.is_file() and path.suffix != ".mjb")
    in_volume = size > VOLUME_OVER_BYTES
    volume = f"{name}-scene"
    if not in_volume:
        shutil.copytree(directory, target / "scene", ignore=shutil.ignore_patterns("*.mjb"))
    values = _values(manifest, envs, name, in_volume, volume, check, directory, size, target)
    for template in ("benchmark.py", "README.md"):
        text = (TEMPLATES / f"{template}.template").read_text()
        (target / template).write_text(text.format(**values))
    return {"out": str(target), "name": name, "volume": volume if in_volume else None,
            "scene_bytes": size, "envs": envs}


def _values(
    manifest: dict[str, Any], envs: int, name: str, in_volume: bool, volume: str,
    check: dict[str, Any] | None, directory: Path, size: int, target: Path,
) -> dict[str, Any]:
    conditions: dict[str, list[int]] = {}
    for start in manifest["starts"]:
        conditions.setdefault(start["task"], []).append(int(start["seed"]))
    scenes = (check or {}).get("scenes", [])
    pinned = sorted({option["option"] for scene in scenes for option in scene["options"] + scene["defaults"]})
    class_name = "".join(part.capitalize() for part in re.split(r"[-_]", name) if part)
    scene_line = (
        'seq.assets_path() / "scene"  # the volume, read-only (README: seq volume put)'
        if in_volume
        else f'Path({json.dumps(str(target.resolve() / "scene"))})  # seq runs a copy of this file'
    )
    first_scene = directory / layout.SCENES / manifest["scenes"][0]["id"]
    options = json.loads((first_scene / layout.OPTIONS).read_text())
    return {
        "name": name,
        "class_name": class_name,
        "benchmark": manifest["benchmark"],
        "mujoco": manifest["mujoco"],
        "envs": envs,
        "requirements": ", ".join(json.dumps(r) for r in PORT_REQUIREMENTS),
        "tasks": json.dumps(sorted(conditions)),
        "seeds": json.dumps(sorted({seed for seeds in conditions.values() for seed in seeds})),
        "scene_line": scene_line,
        "assets_line": f'\n    assets=seq.Volume.from_name("{volume}"),' if in_volume else "",
        "pinned": (
            "every option, as exported" if check is None
            else ", ".join(f"{o} = {options['scene'].get(o)}" for o in pinned) or "none changed"
        ),
        "busiest": max((start["contacts"] for start in manifest["starts"]), default=0),
        "volume_section": (
            f"The scene ({size / 1e6:.1f} MB) is too large to ship with the code; upload it once:\n\n"
            f"    seq volume put {volume} SCENE_DIR --kind dataset\n\n"
            f"where SCENE_DIR holds the export under `scene/` (the benchmark reads "
            f"`seq.assets_path() / \"scene\"`).\n"
            if in_volume else f"The scene ({size / 1e6:.1f} MB) is copied beside the code, under `scene/`.\n"
        ),
    }
