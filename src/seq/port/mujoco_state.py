"""Reading and writing a MuJoCo model's compiled numbers and a data's full state, any version.

Works with the `mujoco` module it is handed (the benchmark's own, or the port environment's), so
the same code runs on both sides of a port. Every array is saved under the name MuJoCo gives it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# What a start is: everything `mj_setState(..., mjSTATE_INTEGRATION)` restores, field by field
# (named, so that two MuJoCo versions with different state layouts read each other's).
STATE_FIELDS = (
    "qpos", "qvel", "act", "qacc_warmstart", "ctrl", "qfrc_applied", "xfrc_applied",
    "mocap_pos", "mocap_quat", "userdata", "eq_active",
)
# Compiled fields that decide the physics, named by the object they belong to.
MODEL_FIELDS = {
    "body": ("body_mass", "body_inertia", "body_ipos", "body_iquat", "body_pos", "body_quat",
             "body_gravcomp"),
    "geom": ("geom_type", "geom_size", "geom_pos", "geom_quat", "geom_friction", "geom_solref",
             "geom_solimp", "geom_margin", "geom_gap", "geom_contype", "geom_conaffinity",
             "geom_condim", "geom_priority", "geom_rbound", "geom_aabb"),
    "joint": ("jnt_type", "jnt_range", "jnt_stiffness", "jnt_limited", "jnt_solref", "jnt_solimp"),
    "dof": ("dof_damping", "dof_armature", "dof_frictionloss"),
    "actuator": ("actuator_gear", "actuator_gainprm", "actuator_biasprm", "actuator_ctrlrange",
                 "actuator_ctrllimited", "actuator_forcerange", "actuator_dyntype", "actuator_gaintype",
                 "actuator_biastype", "actuator_dynprm"),
    "equality": ("eq_type", "eq_data", "eq_solref", "eq_solimp", "eq_active0"),
    "site": ("site_pos", "site_quat", "site_size"),
}
# What a seed may change in a model without changing its structure (a fixture moved or resized).
PER_SEED_FIELDS = tuple(f for fields in MODEL_FIELDS.values() for f in fields if not f.endswith("type"))
# The structure: two models with the same sizes and names are one scene.
SIZE_FIELDS = ("nq", "nv", "nu", "na", "nbody", "njnt", "ngeom", "nsite", "nmesh", "neq", "nmocap")
OPTION_FIELDS = (
    "timestep", "gravity", "wind", "magnetic", "density", "viscosity", "impratio", "tolerance",
    "ls_tolerance", "noslip_tolerance", "ccd_tolerance", "o_margin", "o_solref", "o_solimp",
    "o_friction", "integrator", "cone", "jacobian", "solver", "iterations", "ls_iterations",
    "noslip_iterations", "ccd_iterations", "disableflags", "enableflags",
)
_OBJECT_TYPES = {"body": "mjOBJ_BODY", "geom": "mjOBJ_GEOM", "joint": "mjOBJ_JOINT",
                 "actuator": "mjOBJ_ACTUATOR", "equality": "mjOBJ_EQUALITY", "site": "mjOBJ_SITE"}


def names(mujoco: Any, model: Any, kind: str) -> list[str]:
    """The names of a model's objects of `kind` (a dof is named by its joint), `kind#i` if unnamed."""
    if kind == "dof":
        joints = names(mujoco, model, "joint")
        return [joints[j] for j in np.asarray(model.dof_jntid)]
    count = {"body": model.nbody, "geom": model.ngeom, "joint": model.njnt, "actuator": model.nu,
             "equality": model.neq, "site": model.nsite}[kind]
    object_type = getattr(mujoco.mjtObj, _OBJECT_TYPES[kind])
    found = [mujoco.mj_id2name(model, object_type, i) for i in range(count)]
    if kind == "geom":  # an unnamed geom is known by its body
        bodies = names(mujoco, model, "body")
        return [name or f"geom#{i} of {bodies[model.geom_bodyid[i]]}" for i, name in enumerate(found)]
    return [name or f"{kind}#{i}" for i, name in enumerate(found)]


def model_fields(model: Any) -> dict[str, np.ndarray]:
    """Every field of MODEL_FIELDS a model has (a version without one leaves it out)."""
    return {field: np.array(getattr(model, field)) for fields in MODEL_FIELDS.values()
            for field in fields if hasattr(model, field)}


def option_values(model: Any) -> dict[str, list[float]]:
    """The model's compiled options (`model.opt`), as plain numbers."""
    return {field: np.atleast_1d(np.asarray(getattr(model.opt, field), dtype=float)).tolist()
            for field in OPTION_FIELDS if hasattr(model.opt, field)}


def structure(mujoco: Any, model: Any) -> dict[str, Any]:
    """Sizes and names: what two models must share to be one scene."""
    return {
        "sizes": {size: int(getattr(model, size)) for size in SIZE_FIELDS},
        "names": {kind: names(mujoco, model, kind) for kind in ("body", "geom", "joint", "actuator")},
    }


def get_state(data: Any) -> dict[str, np.ndarray]:
    """A data's full state, by field (time under "time")."""
    state = {field: np.array(getattr(data, field)) for field in STATE_FIELDS if hasattr(data, field)}
    state["time"] = np.array([data.time])
    return state


def set_state(mujoco: Any, model: Any, data: Any, state: dict[str, np.ndarray]) -> None:
    """Put a saved state into `data` (fields this version lacks are skipped) and recompute."""
    mujoco.mj_resetData(model, data)
    for field, value in state.items():
        if field == "time":
            data.time = float(value[0])
        elif hasattr(data, field):
            getattr(data, field)[...] = np.asarray(value).reshape(np.shape(getattr(data, field)))
    mujoco.mj_forward(model, data)


def apply_fields(model: Any, changes: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    """Set a start's own model values (rows of fields, as exported) on a compiled model of the
    same structure; the rows it did not change keep this model's values."""
    for field, (rows, values) in changes.items():
        if hasattr(model, field):
            target = getattr(model, field)
            target[rows] = np.asarray(values).reshape((len(rows), *np.shape(target)[1:]))


def pin_options(model: Any, options: dict[str, list[float]]) -> None:
    """Set a model's options to exported values (the benchmark's MuJoCo compiled them so)."""
    for field, value in options.items():
        if not hasattr(model.opt, field):
            continue
        current = getattr(model.opt, field)
        if np.ndim(current) == 0:
            setattr(model.opt, field, type(current)(value[0]))
        else:
            getattr(model.opt, field)[...] = value
