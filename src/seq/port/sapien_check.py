"""`seq benchmark check-model` of a SAPIEN scene: what stands between it and SAPIEN's GPU PhysX.

Reads the export alone (no SAPIEN needed): a dynamic body (or articulation link) with a
triangle-mesh collision shape, which the GPU PhysX cannot simulate; how many GPU systems each
task needs (one per distinct build among its starts, since one system's worlds share their
shapes, materials, masses and joints); and the calls with no GPU form the env made, during its
reset and during the reference run, counted per task. `physics_changes` is True when any of
these needs the port to do something else on the GPU.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from seq.port import manifest as layout
from seq.port.sapien_export import NO_GPU_FORM

TRIANGLE_MESH = "TriangleMesh"
MOVING = ("dynamic", "link")  # kinematic and static bodies may keep a triangle mesh


def check_sapien_here(scene: str | Path) -> dict[str, Any]:
    """The GPU PhysX check of every build in a SAPIEN export folder, as plain data."""
    directory = Path(scene)
    manifest = layout.read_manifest(directory)
    scenes = []
    for entry in manifest["scenes"]:
        build = json.loads((directory / layout.SCENES / entry["id"] / layout.BUILD).read_text())
        meshes = [
            body["name"]
            for body in build["bodies"]
            if body["kind"] in MOVING and any(s["type"] == TRIANGLE_MESH for s in body["shapes"])
        ]
        scenes.append(
            {
                "id": entry["id"],
                "tasks": entry["tasks"],
                "bodies": len(build["bodies"]),
                "articulations": len(build["articulations"]),
                "dynamic_triangle_meshes": meshes,
            }
        )
    systems: dict[str, set[str]] = {}
    for start in manifest["starts"]:
        systems.setdefault(start["task"], set()).add(start["scene"])
    why = {f"{cls}.{method}": reason for (cls, method), reason in NO_GPU_FORM.items()}
    calls: dict[str, dict[str, Any]] = {}
    for start in manifest["starts"]:
        for phase, counted in start.get("no_gpu_calls", {}).items():
            for call, count in counted.items():
                found = calls.setdefault(
                    call,
                    {"call": call, "why": why.get(call, ""), "tasks": [], "reset": 0, "run": 0, "starts": 0},
                )
                found[phase] = found.get(phase, 0) + int(count)
                if start["task"] not in found["tasks"]:
                    found["tasks"].append(start["task"])
        if any(start.get("no_gpu_calls", {}).values()):
            for call in {c for counted in start["no_gpu_calls"].values() for c in counted}:
                calls[call]["starts"] += 1
    blocked = any(s["dynamic_triangle_meshes"] for s in scenes)
    return {
        "engine": layout.Engine.SAPIEN.value,
        "scene": str(directory),
        "exported_with": manifest["sapien"],
        "starts": len(manifest["starts"]),
        "scenes": scenes,
        "gpu_systems": {task: len(ids) for task, ids in systems.items()},
        "no_gpu_calls": sorted(calls.values(), key=lambda c: c["call"]),
        "physics_changes": blocked or bool(calls),
    }
