"""`seq benchmark compare --replay SCENE [PORT]`: the same seeded controls, step by step, on
classic MuJoCo and on MuJoCo Warp, from each exported start.

Runs in the port environment. Three runs of each start are held side by side:
- the reference: the export's run on the benchmark's own MuJoCo (`ref_*` in the start's file);
- classic: the exported scene on this environment's classic MuJoCo;
- warp: the port's scene (the exported one unless another is named) on MuJoCo Warp.
The starts of a scene run on Warp as the worlds of one batch. Both scenes take the options the
benchmark's MuJoCo compiled (a default changed between versions
is pinned back, as a scaffold pins it). A warp run apart from classic is the port's difference;
a classic run apart from the reference is the MuJoCo version's, and a warp run that differs from
the reference only as classic does is named the version's, not the port's. Where Warp parts from
classic at the moment and joint where the two MuJoCo versions part too, the start is named
sensitive there (a contact settling), and the port is not held to it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from seq.errors import SeqInputError
from seq.port import scene as layout
from seq.port.mujoco_check import field_differences
from seq.port.mujoco_state import apply_fields, model_fields, names, pin_options, set_state
from seq.port.worlds import WarpWorlds

SAME_PLACE_STEPS = 5


def replay_here(
    scene: str, port: str | None = None, conditions: int | None = None, atol: float = 1e-3,
    steps: int | None = None,
) -> dict[str, Any]:
    """Replay each start (the first `conditions` of them) for `steps` steps; plain data."""
    import mujoco

    directory, port_directory = Path(scene), Path(port or scene)
    manifest = layout.read_manifest(directory)
    port_manifest = layout.read_manifest(port_directory)
    steps = replay_steps(manifest, conditions=conditions, atol=atol, steps=steps)
    port_ids = {entry["id"] for entry in port_manifest["scenes"]}
    scene_changes = {} if port_directory == directory else _scene_changes(mujoco, directory, port_directory)
    entries = manifest["starts"][:conditions]
    for entry in entries:
        if entry["scene"] not in port_ids:
            raise SeqInputError(f"{port_directory}: has no scene {entry['scene']} for {entry['task']}.")
    starts = [layout.read_start(directory, entry) for entry in entries]
    classic_models = []
    for start in starts:
        options = layout.read_options(directory, start.scene)["scene"]
        model = layout.load_scene(mujoco, directory, start.scene)
        classic_models.append(_model(mujoco, model, start, options, steps))
    warp_runs = _run_on_warp(port_directory, starts, steps)
    results = []
    for index, start in enumerate(starts):
        classic_model = classic_models[index]
        controls = type(start.controls)(start.controls.ctrl[:steps], start.controls.mocap_offset[:steps])
        classic_data = mujoco.MjData(classic_model)
        set_state(mujoco, classic_model, classic_data, start.state)
        classic = layout.run_classic(mujoco, classic_model, classic_data, controls)
        warp = warp_runs[index]
        reference = (start.ref_qpos[:steps], start.ref_xpos[:steps])
        labels = (names(mujoco, classic_model, "body"), _qpos_joints(mujoco, classic_model, "joint"),
                  _qpos_joints(mujoco, classic_model, "body"))
        port_gap = first_gap(warp, classic, atol, labels)
        version_gap = first_gap(classic, reference, atol, labels)
        results.append({
            "task": start.task, "seed": start.seed, "scene": start.scene,
            "port": port_gap, "version": version_gap, "sensitive": _same_place(port_gap, version_gap),
            "warp_vs_reference": first_gap(warp, reference, atol, labels),
            "max_port": _largest(warp, classic), "max_version": _largest(classic, reference),
        })
    return {
        "scene": str(directory), "port_scene": str(port_directory), "atol": atol, "steps": steps,
        "exported_with": manifest["mujoco"], "mujoco": mujoco.__version__, "starts": results,
        "port_differs": any(r["port"] is not None and not r["sensitive"] for r in results),
        "port_scene_changes": scene_changes,
    }


def replay_steps(manifest: dict[str, Any], *, conditions: int | None, atol: float, steps: int | None) -> int:
    """The steps to replay (the export's run unless `steps`), once `--steps`, `--conditions` and
    `--atol` are what a replay can hold a port to; SeqInputError naming the one that is not."""
    if isinstance(atol, bool) or not isinstance(atol, int | float) or not math.isfinite(atol) or atol < 0:
        raise SeqInputError(f"--atol must be a finite number of 0 or more, got {atol}.")
    if conditions is not None and conditions < 1:
        raise SeqInputError(f"--conditions must be 1 or more, got {conditions}.")
    exported_steps = manifest["steps"]
    steps = exported_steps if steps is None else steps
    if not 1 <= steps <= exported_steps:
        raise SeqInputError(
            f"--steps must be between 1 and {exported_steps} (the export's run), got {steps}."
        )
    return steps


def _run_on_warp(
    port_directory: Path, starts: list[layout.Start], steps: int
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Every start on MuJoCo Warp, the starts of one scene as the worlds of one batch (stepped
    together: a world's motion is the same as when it is stepped alone). qpos and xpos per step."""
    runs = {}
    for scene_id in dict.fromkeys(start.scene for start in starts):
        indices = [i for i, start in enumerate(starts) if start.scene == scene_id]
        batch = [starts[i] for i in indices]
        worlds = WarpWorlds(port_directory, len(batch), scene_id, starts=batch)
        worlds.set_starts(list(range(len(batch))), batch)
        qpos = np.zeros((steps, len(batch), worlds.host_model.nq))
        xpos = np.zeros((steps, len(batch), worlds.host_model.nbody, 3))
        for t in range(steps):
            worlds.step(np.stack([s.controls.ctrl[t] for s in batch]),
                        np.stack([s.controls.mocap_offset[t] for s in batch]))
            qpos[t], xpos[t] = worlds.qpos, worlds.xpos
        for k, i in enumerate(indices):
            runs[i] = (qpos[:, k], xpos[:, k])
    return runs


def _scene_changes(mujoco: Any, directory: Path, port_directory: Path) -> dict[str, list[str]]:
    """Per scene, what the port's scene compiles differently from the exported one (both on this
    MuJoCo): the objects a difference in the motion most likely comes from."""
    changes = {}
    for entry in layout.read_manifest(directory)["scenes"]:
        ported = layout.scene_xml(port_directory, entry["id"])
        if not ported.is_file():
            continue
        exported = model_fields(layout.load_scene(mujoco, directory, entry["id"]))
        found = field_differences(mujoco, layout.load_scene(mujoco, port_directory, entry["id"]), exported)
        by_object: dict[str, list[str]] = {}
        for difference in (f for f in found if f["physics"]):
            by_object.setdefault(f"{difference['kind']} {difference['name']}", []).append(difference["field"])
        changes[entry["id"]] = [f"{name}: {', '.join(fields)}" for name, fields in by_object.items()]
    return changes


def _same_place(port_gap: dict[str, Any] | None, version_gap: dict[str, Any] | None) -> bool:
    """Warp parts from classic MuJoCo where two MuJoCo versions part too (the same joint, within
    SAME_PLACE_STEPS): a moment the motion is sensitive to (a cube settling on its contacts), not
    a change the port made. Named, and not held against the port."""
    return (
        port_gap is not None and version_gap is not None and port_gap["joint"] == version_gap["joint"]
        and abs(port_gap["step"] - version_gap["step"]) <= SAME_PLACE_STEPS
    )


def _model(mujoco: Any, model: Any, start: layout.Start, options: dict[str, list[float]], steps: int) -> Any:
    pin_options(model, options)
    layout.check_start(mujoco, model, start, steps)
    apply_fields(model, start.model_changes)
    return model


def _qpos_joints(mujoco: Any, model: Any, kind: str) -> list[str]:
    """The joint each qpos entry belongs to (`kind="joint"`), or the body that joint moves."""
    joints, bodies = names(mujoco, model, "joint"), names(mujoco, model, "body")
    owner = [""] * model.nq
    for j, address in enumerate(model.jnt_qposadr):
        width = {0: 7, 1: 4}.get(int(model.jnt_type[j]), 1)
        for k in range(address, address + width):
            owner[k] = joints[j] if kind == "joint" else bodies[model.jnt_bodyid[j]]
    return owner


def first_gap(
    a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], atol: float,
    labels: tuple[list[str], list[str], list[str]],
) -> dict[str, Any] | None:
    """The first step where two runs are more than `atol` apart (qpos or body position), naming the
    joint furthest apart then and the body it moves, and the body furthest from where it should
    be (often further down the chain: a hand moves most when its arm's link is heavier); None
    when they never are."""
    (qa, xa), (qb, xb) = a, b
    joint_gap = np.abs(qa - qb)
    body_gap = np.linalg.norm(xa - xb, axis=2)
    apart = (joint_gap > atol) | ~np.isfinite(joint_gap)  # a run that blew up is apart from there on
    body_apart = (body_gap > atol) | ~np.isfinite(body_gap)
    over = np.flatnonzero(apart.any(axis=1) | body_apart.any(axis=1))
    if over.size == 0:
        return None
    step = int(over[0])
    joint, body = int(np.argmax(joint_gap[step])), int(np.argmax(body_gap[step]))
    bodies, joints, moved = labels
    return {"step": step + 1, "joint": joints[joint], "joint_body": moved[joint],
            "joint_gap": float(joint_gap[step, joint]), "body": bodies[body],
            "body_gap": float(body_gap[step, body])}


def _largest(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
    joints = np.abs(a[0] - b[0]).max(initial=0.0)
    return float(max(joints, np.linalg.norm(a[1] - b[1], axis=2).max(initial=0.0)))
