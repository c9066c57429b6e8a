"""`seq benchmark export`: a benchmark's starts and scenes, read through its own reset.

Runs where the benchmark runs (its own MuJoCo): for each task and seed it calls the benchmark's
`@seq.reset` and `env.reset(seed=...)` as an eval would, finds the MuJoCo model and data inside,
and writes (see `seq.port.scene` for the layout): each distinct model once as a scene (tasks whose
models have the same structure share it), each start's full state, the model numbers that start
changed from its scene's (robosuite's Lift draws its cube's size per episode), its contacts, what
changes from seed to seed, and a run of the start under seeded controls on this MuJoCo — the
reference a replay holds other engines to.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from seq.authoring.env_contract import close_env, reset_env
from seq.errors import SeqInputError, make_output_folder
from seq.port import scene as layout
from seq.port.controls import DEFAULT_STEPS, controls_for
from seq.port.find import find_mujoco
from seq.port.mujoco_state import (
    PER_SEED_FIELDS,
    get_state,
    model_fields,
    names,
    option_values,
    set_state,
    structure,
)
from seq.port.scene_files import write_scene
from seq.port.target import load_benchmark

DERIVED = ("geom_aabb", "geom_rbound")  # follow from a geom's size: not named as what a seed changes


def export_here(
    target: str,
    out: Path,
    *,
    seeds: Sequence[int] | None = None,
    tasks: Sequence[str] | None = None,
    suite: str | None = None,
    steps: int = DEFAULT_STEPS,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Export in this process (the benchmark's own environment); returns the manifest. A benchmark
    on SAPIEN (its env holds a PhysX system) is exported by `seq.port.sapien_export`."""
    layout.check_counts(seeds, steps)
    cls, spec = load_benchmark(target)
    conditions = layout.select_conditions(spec, suite, tasks, seeds)
    benchmark = cls()
    if "setup" in spec.hooks:
        getattr(benchmark, spec.hooks["setup"])()
    reset = getattr(benchmark, spec.hooks["reset"])
    _clear(out, log)
    made: dict[int, Any] = {}  # the envs the benchmark made (it may reuse one across seeds)
    if conditions:
        first = reset(conditions[0].seed, conditions[0])
        if _on_sapien(first):
            from seq.port.sapien_export import export_sapien

            return export_sapien(spec, target, conditions, reset, out, steps, log)
        made[id(first)] = first
    import mujoco

    scenes: list[dict[str, Any]] = []
    starts: list[dict[str, Any]] = []
    for condition in conditions:
        env = reset_env(benchmark, spec, condition).env
        try:
            found = find_mujoco(env, mujoco)
        except ValueError as error:
            raise layout.ExportError(f"{spec.name} task {condition.task}: {error}") from None
        model, data = found.model, found.data
        shape = structure(mujoco, model)
        scene = next((s for s in scenes if s["structure"] == shape), None)
        if scene is None:
            scene = _new_scene(mujoco, model, out, len(scenes), shape, found.xml_files, condition.task)
            scenes.append(scene)
        elif condition.task not in scene["tasks"]:
            scene["tasks"].append(condition.task)
        starts.append(_write_start(mujoco, model, data, out, scene, condition, steps))
        facts = getattr(env, "port_facts", None)  # what the env says of its start beside physics
        if callable(facts):
            starts[-1]["facts"] = facts()
        made.setdefault(id(env), env)
        log(f"  {condition.task} seed {condition.seed}: scene {scene['id']}, "
            f"{starts[-1]['contacts']} contacts")
    for env in made.values():  # their renderers' contexts, before the interpreter's exit tears down
        close_env(env)  # the display under them
    manifest = {
        "format": layout.FORMAT,
        "benchmark": spec.name,
        "target": target,
        "mujoco": mujoco.__version__,
        "steps": steps,
        "scenes": [{k: v for k, v in s.items() if k not in ("structure", "fields")} for s in scenes],
        "starts": starts,
        "varies": _what_varies(mujoco, starts, scenes, out),
    }
    (out / layout.MANIFEST).write_text(json.dumps(manifest, indent=2))
    return manifest


def _on_sapien(env: Any) -> bool:
    from seq.port.sapien_export import physx_system

    return physx_system(env) is not None


def _clear(out: Path, log: Callable[[str], None]) -> None:
    """An empty folder to export into: a previous export there is replaced (and said so), anything
    else refused."""
    make_output_folder(out)
    if any(out.iterdir()):
        if not (out / layout.MANIFEST).is_file():
            raise SeqInputError(f"--output {out}: exists and holds other files; name an empty or new folder.")
        try:
            held = len(layout.read_manifest(out)[layout.STARTS])
        except (SeqInputError, KeyError, TypeError):
            held = 0
        log(f"{out}: replacing the export there ({held} starts); export into a new folder to keep it")
        for part in (layout.SCENES, layout.STARTS, layout.MANIFEST):
            target = out / part
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()


def _new_scene(
    mujoco: Any, model: Any, out: Path, index: int, shape: dict, xml_files: list[Path], task: str
) -> dict[str, Any]:
    scene_id = f"s{index}"
    directory = out / layout.SCENES / scene_id
    try:
        write_scene(mujoco, model, directory, xml_files)
    except ValueError as error:
        raise layout.ExportError(f"task {task}: {error}.") from None
    fields: dict[str, Any] = model_fields(model)
    np.savez_compressed(directory / layout.COMPILED, **fields)
    empty = mujoco.MjModel.from_xml_string("<mujoco/>")
    options = {"scene": option_values(model), "defaults": option_values(empty), "mujoco": mujoco.__version__}
    (directory / layout.OPTIONS).write_text(json.dumps(options, indent=2))
    return {"id": scene_id, "path": f"{layout.SCENES}/{scene_id}", "tasks": [task], "structure": shape,
            "fields": fields}


def _write_start(
    mujoco: Any, model: Any, data: Any, out: Path, scene: dict, condition: Any, steps: int
) -> dict[str, Any]:
    state = get_state(data)
    changed = changed_rows(model, scene["fields"])
    probe = mujoco.MjData(model)
    set_state(mujoco, model, probe, state)
    contacts = int(probe.ncon)
    controls = controls_for(model, condition.seed, steps)
    qpos, xpos = layout.run_classic(mujoco, model, probe, controls)
    name = f"{condition.task}__{condition.seed}"
    arrays: dict[str, Any] = {f"state.{k}": v for k, v in state.items()}
    for field, (rows, values) in changed.items():
        arrays[f"rows.{field}"], arrays[f"model.{field}"] = rows, values
    (out / layout.STARTS).mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        out / layout.STARTS / f"{name}.npz",
        ctrl=controls.ctrl, mocap_offset=controls.mocap_offset, ref_qpos=qpos, ref_xpos=xpos, **arrays,
    )
    return {"task": condition.task, "seed": condition.seed, "scene": scene["id"],
            "file": f"{layout.STARTS}/{name}.npz", "contacts": contacts, "model_changes": sorted(changed)}


def changed_rows(model: Any, scene_fields: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per field, the rows (objects) where `model` differs from its scene, and their values."""
    changed = {}
    for field in PER_SEED_FIELDS:
        if field not in scene_fields:
            continue
        ours, theirs = np.asarray(getattr(model, field)), scene_fields[field]
        if ours.size == 0:
            continue
        rows = np.flatnonzero((ours != theirs).reshape(len(ours), -1).any(axis=1))
        if rows.size:
            changed[field] = (rows, ours[rows].copy())
    return changed


def _what_varies(mujoco: Any, starts: list[dict], scenes: list[dict], out: Path) -> dict[str, Any]:
    """Per task: the joints, mocap bodies and model objects whose start differs between seeds."""
    varies: dict[str, Any] = {}
    for scene in scenes:
        model = mujoco.MjModel.from_xml_path(str(out / scene["path"] / "scene.xml"))
        joints, bodies = names(mujoco, model, "joint"), names(mujoco, model, "body")
        for task in scene["tasks"]:
            files = [np.load(out / s["file"]) for s in starts if s["task"] == task]
            moved = set()
            for j, address in enumerate(model.jnt_qposadr):
                width = {0: 7, 1: 4}.get(int(model.jnt_type[j]), 1)
                if _differs([f["state.qpos"][address:address + width] for f in files]):
                    moved.add(joints[j])
            mocap = [bodies[b] for b in range(model.nbody) if model.body_mocapid[b] >= 0
                     and _differs([f["state.mocap_pos"][model.body_mocapid[b]] for f in files])]
            fields = sorted({k[len("model."):] for f in files for k in f.files if k.startswith("model.")})
            objects = sorted({f"{_kind(field)} {label}" for f in files for field in fields
                              if f"rows.{field}" in f.files and field not in DERIVED
                              for label in _labels(mujoco, model, field, f[f"rows.{field}"])})
            varies[task] = {"joints": sorted(moved), "mocap": mocap, "model_fields": fields,
                            "objects": objects}
    return varies


def _kind(field: str) -> str:
    return {"jnt": "joint", "eq": "equality"}.get(field.split("_")[0], field.split("_")[0])


def _labels(mujoco: Any, model: Any, field: str, rows: np.ndarray) -> list[str]:
    kind = _kind(field)
    if kind not in ("body", "geom", "joint", "site", "actuator", "dof"):
        return [str(int(row)) for row in rows]
    labels = names(mujoco, model, kind)
    return [labels[int(row)] for row in rows]


def _differs(values: list[np.ndarray]) -> bool:
    return len(values) > 1 and any(not np.allclose(v, values[0], atol=1e-9) for v in values[1:])
