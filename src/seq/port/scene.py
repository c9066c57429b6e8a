"""The exported scene folder, read and written the same way by every side of a port.

    export.json            what was exported: benchmark, MuJoCo version, scenes, starts, what varies
    scenes/s0/scene.xml    the compiled model as MJCF, its assets under scenes/s0/assets/
    scenes/s0/scene.mjb    the same, exact, for the benchmark's own MuJoCo version only
    scenes/s0/compiled.npz the compiled fields (masses, inertias, geometry) on the benchmark's MuJoCo
    scenes/s0/options.json the scene's options, and that MuJoCo's defaults
    starts/TASK__SEED.npz  a start: `state.*` (full state), `model.*` at `rows.*` (the objects'
                           numbers this seed changed from its scene's),
                           the seeded controls (`ctrl`, `mocap_offset`) and the reference run on
                           the benchmark's MuJoCo (`ref_qpos`, `ref_xpos`: one row per step)
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ElementTree
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from seq.authoring.conditions import check_seed, reseeded
from seq.errors import SeqInputError
from seq.port.controls import Controls

# the layout's names, kept here for the modules that read and write a scene folder
from seq.port.manifest import FORMAT, MANIFEST, OPTIONS, SCENES, STARTS, read_manifest  # noqa: F401

COMPILED = "compiled.npz"
MAX_START_BYTES = 256 << 20  # a start file's arrays, unpacked: read only when they fit
RUN_ARRAYS = ("ctrl", "mocap_offset", "ref_qpos", "ref_xpos")


class ExportError(SeqInputError):
    """A benchmark that cannot be exported: one sentence naming the task and why."""


@dataclass(frozen=True)
class Start:
    task: str
    seed: int
    scene: str  # the scene's id
    state: dict[str, np.ndarray]
    model_changes: dict[str, tuple[np.ndarray, np.ndarray]]  # field: (rows, their values)
    controls: Controls
    ref_qpos: np.ndarray
    ref_xpos: np.ndarray
    contacts: int
    facts: dict[str, Any] = field(default_factory=dict)  # what the env said of it (`port_facts`)
    path: Path = Path()  # its file, for what is said of it


def check_counts(seeds: Sequence[int] | None, steps: int | None) -> None:
    """Refuse an empty `--seeds`, a seed out of range, or `--steps` below 1 (None: not given)."""
    if steps is not None and steps < 1:
        raise SeqInputError(f"--steps must be 1 or more, got {steps}.")
    if seeds is not None:
        if isinstance(seeds, (int, str)):
            raise SeqInputError(f"--seeds {seeds}: expected a list of seeds, such as 0,1,2 or 0-9.")
        if not len(seeds):
            raise SeqInputError("--seeds is empty; give at least one seed, such as 0,1,2 or 0-9.")
        for seed in seeds:
            check_seed(seed, "--seeds")


def select_conditions(
    spec: Any, suite: str | None, tasks: Sequence[str] | None, seeds: Sequence[int] | None
) -> list:
    """The suite's conditions, only `tasks` (when given), with `seeds` (when given) for each task,
    as `seq eval run --seeds` makes them."""
    name = suite or spec.default_suite
    if name not in spec.suites:
        raise SeqInputError(f"--suite {name!r}: {spec.name} has suites {sorted(spec.suites)}.")
    known = list(dict.fromkeys(c.task for c in spec.suites[name]))
    for task in tasks or []:
        if task not in known:
            raise SeqInputError(f"--tasks {task!r}: suite {name} of {spec.name} has tasks {known}.")
    check_counts(seeds, None)
    chosen = [condition for condition in spec.suites[name] if not tasks or condition.task in tasks]
    return chosen if seeds is None else reseeded(chosen, list(dict.fromkeys(seeds)))


def run_classic(mujoco: Any, model: Any, data: Any, controls: Controls) -> tuple[np.ndarray, np.ndarray]:
    """Step `data` (at a start) under `controls` with classic MuJoCo: qpos and xpos after each step."""
    mocap_start = np.array(data.mocap_pos)
    steps = len(controls.ctrl)
    qpos, xpos = np.zeros((steps, model.nq)), np.zeros((steps, model.nbody, 3))
    for t in range(steps):
        data.ctrl[:] = controls.ctrl[t]
        data.mocap_pos[:] = mocap_start + controls.mocap_offset[t]
        mujoco.mj_step(model, data)
        qpos[t], xpos[t] = data.qpos, data.xpos
    return qpos, xpos


def read_start(directory: Path, entry: dict[str, Any]) -> Start:
    """A start's file (an entry of a checked manifest), its arrays checked for what they can be
    without the model: a zip of numeric arrays within MAX_START_BYTES, each changed field with its
    rows, the run's arrays there, every number finite. `check_start` checks them against a model."""
    path = Path(directory) / entry["file"]
    values = _arrays(path, "a start's arrays")
    for key, value in values.items():
        if value.dtype.kind == "f" and not np.isfinite(value).all():
            raise SeqInputError(f"{path}: {key}: holds a number that is not finite (NaN or infinity).")
    missing = [key for key in RUN_ARRAYS if key not in values]
    changed = [key[len("model."):] for key in values if key.startswith("model.")]
    missing += [f"rows.{name}" for name in changed if f"rows.{name}" not in values]
    if missing:
        raise SeqInputError(f"{path}: no {', '.join(missing)}; expected what `seq benchmark export` writes.")
    for name in changed:
        if values[f"rows.{name}"].dtype.kind not in "iu" or values[f"rows.{name}"].ndim != 1:
            raise SeqInputError(f"{path}: rows.{name}: expected a list of whole numbers.")
    return Start(
        task=entry["task"],
        seed=int(entry["seed"]),
        scene=entry["scene"],
        state={k[len("state."):]: v for k, v in values.items() if k.startswith("state.")},
        model_changes={name: (values[f"rows.{name}"], values[f"model.{name}"]) for name in changed},
        controls=Controls(values["ctrl"], values["mocap_offset"]),
        ref_qpos=values["ref_qpos"],
        ref_xpos=values["ref_xpos"],
        contacts=int(entry["contacts"]),
        facts=dict(entry.get("facts", {})),
        path=path,
    )


def check_start(mujoco: Any, model: Any, start: Start, steps: int | None = None) -> None:
    """`start` fits `model` (a compiled MuJoCo model of its scene): each state array the size of
    MuJoCo's, each changed field one of the model's, its rows inside it, its values their shape;
    with `steps`, a run of at least that many steps. SeqInputError naming the file and the key."""
    data = mujoco.MjData(model)
    for name, value in start.state.items():
        if hasattr(data, name) and np.size(value) != np.size(getattr(data, name)):
            raise SeqInputError(f"{start.path}: state.{name}: expected {np.size(getattr(data, name))} "
                                f"numbers for this scene, got {np.size(value)}.")
    for name, (rows, values) in start.model_changes.items():
        target = getattr(model, name, None)
        if not isinstance(target, np.ndarray) or name.startswith("_"):
            raise SeqInputError(f"{start.path}: model.{name}: not a field of MuJoCo's model.")
        if len(rows) and (rows.min() < 0 or rows.max() >= len(target) or len(set(rows.tolist())) < len(rows)):
            raise SeqInputError(f"{start.path}: rows.{name}: expected distinct rows from 0 to "
                                f"{len(target) - 1}, got {rows.tolist()[:8]}.")
        if np.size(values) != len(rows) * int(np.prod(target.shape[1:])):
            raise SeqInputError(f"{start.path}: model.{name}: expected {len(rows)} rows of "
                                f"{list(target.shape[1:])}, got shape {list(np.shape(values))}.")
    if steps is None:
        return
    shapes = {"ctrl": (model.nu,), "mocap_offset": (model.nmocap, 3), "ref_qpos": (model.nq,),
              "ref_xpos": (model.nbody, 3)}
    arrays = {"ctrl": start.controls.ctrl, "mocap_offset": start.controls.mocap_offset,
              "ref_qpos": start.ref_qpos, "ref_xpos": start.ref_xpos}
    for name, shape in shapes.items():
        if arrays[name].shape[1:] != shape or len(arrays[name]) < steps:
            raise SeqInputError(f"{start.path}: {name}: expected {steps} steps of {list(shape)}, got shape "
                                f"{list(arrays[name].shape)}.")


def scene_xml(directory: Path, scene_id: str) -> Path:
    return Path(directory) / SCENES / scene_id / "scene.xml"


def load_scene(mujoco: Any, directory: Path, scene_id: str) -> Any:
    """A scene's `scene.xml` compiled by this MuJoCo, once every file it names (includes, meshes,
    textures, and the folders they are read from) is inside the scene's folder."""
    path = scene_xml(directory, scene_id)
    try:
        root = ElementTree.parse(path).getroot()
    except (ElementTree.ParseError, OSError) as error:
        raise SeqInputError(f"{path}: not MuJoCo's XML ({error}).") from None
    for element in root.iter():
        for attribute, value in element.attrib.items():
            if attribute.startswith("file") or attribute.endswith("dir"):
                name = Path(value)
                if name.is_absolute() or ".." in name.parts:
                    raise SeqInputError(f"{path}: <{element.tag} {attribute}={value!r}>: a scene's files are "
                                        "inside its folder (a relative name, no '..').")
    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError as error:
        raise SeqInputError(f"{path}: MuJoCo {mujoco.__version__} cannot load it ({error}).") from None


def read_options(directory: Path, scene_id: str) -> dict[str, dict[str, list[float]]]:
    """A scene's `options.json`, checked: `scene` (its options as its benchmark's MuJoCo compiled
    them) and `defaults` (that MuJoCo's), each option a list of finite numbers."""
    path = Path(directory) / SCENES / scene_id / OPTIONS
    try:
        options = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SeqInputError(f"{path}: not JSON ({error}); expected what `seq benchmark export` writes.") \
            from None
    for key in ("scene", "defaults"):
        table = options.get(key) if isinstance(options, dict) else None
        if not isinstance(table, dict) or not all(
            isinstance(value, list) and value and all(
                isinstance(number, int | float) and not isinstance(number, bool) and math.isfinite(number)
                for number in value)
            for value in table.values()
        ):
            raise SeqInputError(f"{path}: {key}: expected an object of options, each a list of finite "
                                "numbers.")
    return {"scene": dict(options["scene"]), "defaults": dict(options["defaults"])}


def read_compiled(directory: Path, scene_id: str) -> dict[str, np.ndarray]:
    """A scene's compiled fields as its benchmark's MuJoCo compiled them (`compiled.npz`), checked
    as a start's arrays are: a zip of numeric arrays within MAX_START_BYTES."""
    path = Path(directory) / SCENES / scene_id / COMPILED
    if not path.is_file():
        raise SeqInputError(f"{path.parent}: no {COMPILED}; check-model needs the export's own.")
    return _arrays(path, "a scene's compiled fields")


def _arrays(path: Path, what: str) -> dict[str, np.ndarray]:
    """The numeric arrays of an `.npz` file seq wrote, read only when they unpack within
    MAX_START_BYTES; SeqInputError naming the file otherwise."""
    try:
        with zipfile.ZipFile(path) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError) as error:
        raise SeqInputError(f"{path}: not {what} ({error}); expected what `seq benchmark export` writes.") \
            from None
    if unpacked > MAX_START_BYTES:
        raise SeqInputError(f"{path}: its arrays unpack to {unpacked:,} bytes, more than {what} may hold "
                            f"({MAX_START_BYTES:,}).")
    try:
        with np.load(path, allow_pickle=False) as arrays:
            values = {key: arrays[key] for key in arrays.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as error:
        raise SeqInputError(f"{path}: not {what} ({error}); expected what `seq benchmark export` writes.") \
            from None
    for key, value in values.items():
        if value.dtype.kind not in "biuf":
            raise SeqInputError(f"{path}: {key}: expected numbers, got {value.dtype}.")
    return values
