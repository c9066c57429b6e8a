"""`seq benchmark check-model SCENE`: what MuJoCo Warp's MuJoCo would compute differently.

Runs in the port environment. For each exported scene it compiles `scene.xml` with this MuJoCo
and lists, by body/geom/joint name, every compiled field that differs from what the benchmark's
MuJoCo compiled (masses, inertias, geometry, ...); every option of the scene that compiled to
another value, and every default that changed between the two versions; and what MuJoCo Warp
refuses. `physics_changes` is True when any of these would change the motion (a difference in
a site's size, or in the shape of a geom that collides with nothing, is listed as cosmetic).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from seq.port import scene as layout
from seq.port.mujoco_state import MODEL_FIELDS, model_fields, names, option_values
from seq.port.warp_engine import unsupported

RTOL, ATOL = 1e-5, 1e-6  # a micrometre: meshes are processed in floats a little differently


def check_model_here(scene: str) -> dict[str, Any]:
    """The check of every scene in an export folder, as plain data."""

    import mujoco

    directory = Path(scene)
    manifest = layout.read_manifest(directory)
    scenes = []
    for entry in manifest["scenes"]:
        model = layout.load_scene(mujoco, directory, entry["id"])
        exported = layout.read_compiled(directory, entry["id"])
        options = layout.read_options(directory, entry["id"])
        empty = mujoco.MjModel.from_xml_string("<mujoco/>")
        fields = field_differences(mujoco, model, exported)
        changed_options = _differences(options["scene"], option_values(model))
        changed_defaults = _differences(options["defaults"], option_values(empty))
        refused = unsupported(model)
        scenes.append({
            "id": entry["id"],
            "tasks": entry["tasks"],
            "fields": fields,
            "options": changed_options,
            "defaults": changed_defaults,
            "unsupported": refused,
            "physics_changes": bool(any(f["physics"] for f in fields) or changed_options or refused),
        })
    return {
        "scene": str(directory),
        "exported_with": manifest["mujoco"],
        "mujoco": mujoco.__version__,
        "scenes": scenes,
        "physics_changes": any(s["physics_changes"] for s in scenes),
    }


def field_differences(mujoco: Any, model: Any, exported: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """Every compiled field of `model` that differs from `exported` (another compile), by object."""
    here = model_fields(model)
    found: list[dict[str, Any]] = []
    for kind, fields in MODEL_FIELDS.items():
        labels = names(mujoco, model, kind) if kind != "equality" or model.neq else []
        for field in fields:
            if field not in here or field not in exported:
                continue
            ours, theirs = here[field], exported[field]
            if ours.size == 0 and theirs.size == 0:
                continue
            if ours.shape[:1] != theirs.shape[:1]:
                found.append({"field": field, "kind": kind, "name": "(all)",
                              "exported": list(theirs.shape), "port": list(ours.shape), "physics": True})
                continue
            if ours.ndim == 2 and ours.shape[1] != theirs.shape[1]:  # a version added parameters
                width = min(ours.shape[1], theirs.shape[1])
                ours, theirs = ours[:, :width], theirs[:, :width]
            rows = zip(theirs.reshape(len(theirs), -1), ours.reshape(len(ours), -1), strict=True)
            for row, (a, b) in enumerate(rows):
                if not np.allclose(a, b, rtol=RTOL, atol=ATOL):
                    found.append({"field": field, "kind": kind, "name": labels[row],
                                  "exported": a.tolist(), "port": b.tolist(),
                                  "physics": not _cosmetic(model, kind, field, row)})
    return found


def _cosmetic(model: Any, kind: str, field: str, row: int) -> bool:
    """A difference that cannot change the motion: a site's size, or the shape of a geom that
    collides with nothing (its mass is already in its body's, compared on its own)."""
    if field == "site_size":
        return True
    return kind == "geom" and model.geom_contype[row] == 0 and model.geom_conaffinity[row] == 0


def _differences(before: dict[str, list[float]], after: dict[str, list[float]]) -> list[dict[str, Any]]:
    return [
        {"option": key, "exported": before[key], "port": after[key]}
        for key in before
        if key in after and not np.allclose(before[key], after[key], rtol=RTOL, atol=ATOL)
    ]
