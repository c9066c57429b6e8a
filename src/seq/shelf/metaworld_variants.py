"""MetaWorld's condition variants, the knobs `seq evolve`'s mutation operators turn.

A condition's `extra` may hold (all optional; absent means MetaWorld's own setting):

- `obj_dx`, `obj_dy`: metres added to the object's start position (the first two entries of the
  task's random vector, which every MetaWorld v3 task reads its object placement from);
- `goal_dx`, `goal_dy`: metres added to the goal position (entries 3 and 4, in tasks whose
  vector holds a goal: pick-place, push, reach, peg-insert …);
- `friction`, `mass`, `damping`: factors on every geom's sliding friction, on the mass of every
  body other than the robot's, and on every joint's damping;
- `distractor` (`box` or `cylinder`), `distractor_along`, `distractor_dx`, `distractor_dy`: a free
  body added to the scene near the object (`seq.shelf.metaworld_distractor`);
- `horizon`: the condition's step limit (its `max_steps`), kept in `extra` too so that a
  shortened condition has a key of its own.

The cached env of a task is set back to its own values before each condition's are applied, so
conditions never leak into one another. `VARIANT_KEYS` is what `seq evolve` may write.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from seq.shelf.metaworld_distractor import KEYS as DISTRACTOR_KEYS
from seq.shelf.metaworld_distractor import place, shape_of

POSE_KEYS = ("obj_dx", "obj_dy", "goal_dx", "goal_dy")
PHYSICS_KEYS = ("friction", "mass", "damping")
VARIANT_KEYS = POSE_KEYS + PHYSICS_KEYS + DISTRACTOR_KEYS + ("horizon",)
ROBOT_BODY_PREFIXES = ("right_", "pedestal", "torso", "head", "screen", "hand", "rightclaw", "leftclaw",
                       "rightpad", "leftpad", "controller_box", "base")  # fmt: skip
MIN_GOAL_DISTANCE = 0.16  # pick-place redraws (forever, with a fixed vector) below 0.15 m


def _originals(env: Any) -> dict[str, np.ndarray]:
    """The task's own physics, kept on first use."""
    base = env.unwrapped
    if not hasattr(base, "_seq_originals"):
        model = base.model
        base._seq_originals = {
            "friction": model.geom_friction[:, 0].copy(),
            "mass": model.body_mass.copy(),
            "damping": model.dof_damping.copy(),
            "objects": _object_bodies(model),
        }
    return base._seq_originals


def _object_bodies(model: Any) -> np.ndarray:
    import mujoco

    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or "" for b in range(model.nbody)]
    return np.array([b > 0 and not n.startswith(ROBOT_BODY_PREFIXES) for b, n in enumerate(names)])


def apply_variant(env: Any, extra: Mapping[str, Any]) -> None:
    """Set the env (already set to its task and goal configuration) to a condition's variant."""
    unknown = sorted(set(extra) - set(VARIANT_KEYS))
    if unknown:
        raise ValueError(f"MetaWorld conditions take {', '.join(VARIANT_KEYS)}; not {', '.join(unknown)}.")
    base = env.unwrapped
    originals = _originals(env)
    model = base.model
    model.geom_friction[:, 0] = originals["friction"] * float(extra.get("friction", 1.0))
    mass = originals["mass"].copy()
    mass[originals["objects"]] *= float(extra.get("mass", 1.0))
    model.body_mass[:] = mass
    model.dof_damping[:] = originals["damping"] * float(extra.get("damping", 1.0))
    offsets = [float(extra.get(key, 0.0)) for key in POSE_KEYS]
    if any(offsets):
        vector = np.array(base._last_rand_vec, dtype=np.float64)
        vector[0:2] += offsets[0:2]
        if len(vector) >= 6:
            vector[3:5] += offsets[2:4]
            gap = vector[3:5] - vector[0:2]
            if np.linalg.norm(gap) < MIN_GOAL_DISTANCE:  # keep the goal apart from the object
                direction = gap / (np.linalg.norm(gap) or 1.0) if np.any(gap) else np.array([0.0, 1.0])
                vector[3:5] = vector[0:2] + direction * MIN_GOAL_DISTANCE
        base._last_rand_vec = vector
    if shape_of(extra) is not None:
        place(env, extra)


# What `seq evolve` may do to a MetaWorld condition (see `seq.evolve.operators`).
EVOLVE_OPERATORS = {
    "pose": {"keys": POSE_KEYS, "step_m": 0.05, "max_m": 0.12},
    "physics": {"keys": PHYSICS_KEYS, "friction": (0.3, 0.5), "mass": (3.0, 6.0), "damping": (3.0, 6.0)},
    "horizon": {"fractions": (1.0, 0.8), "min_steps": 40},
    # in the way (half-way from the object to its goal) and beside the object, seeded by the condition
    "distractor": {"shapes": ("box", "cylinder"), "along": (0.5,), "beside_m": 0.07},
}
