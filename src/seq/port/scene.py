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
    with np.load(Path(directory) / entry["file"]) as arrays:
        values = {key: arrays[key] for key in arrays.files}
    return Start(
        task=entry["task"],
        seed=int(entry["seed"]),
        scene=entry["scene"],
        state={k[len("state."):]: v for k, v in values.items() if k.startswith("state.")},
        model_changes={k[len("model."):]: (values[f"rows.{k[len('model.'):]}"], v)
                       for k, v in values.items() if k.startswith("model.")},
        controls=Controls(values["ctrl"], values["mocap_offset"]),
        ref_qpos=values["ref_qpos"],
        ref_xpos=values["ref_xpos"],
        contacts=int(entry["contacts"]),
        facts=dict(entry.get("facts", {})),
    )


def scene_xml(directory: Path, scene_id: str) -> Path:
    return Path(directory) / SCENES / scene_id / "scene.xml"
