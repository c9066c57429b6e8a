"""LIBERO's condition variants, the knobs `seq evolve`'s mutation operators turn on LIBERO.

A condition's `extra` may hold (all optional):

- `obj_dx`, `obj_dy`: metres added to the start position of the object the task's goal moves
  (the first object of its first goal predicate: `akita_black_bowl_1` in `on bowl plate`), after
  the init state is set and before the 10 wait steps, so the object settles where it lands;
- `goal_dx`, `goal_dy`: the same for the goal's receptacle, where it is an object (the plate);
  a fixture's region (a stove, a drawer) is not moved and the condition is refused;
- `horizon`: the condition's step limit (its `max_steps`), in `extra` so that a shortened
  condition has a key of its own.

LIBERO-PRO's own perturbations (`_swap`, `_object`, `_lan`, `_task`, `_with_<object>`) are suites
of the benchmark already; these variants go finer: any offset, on any suite's task.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

VARIANT_KEYS = ("obj_dx", "obj_dy", "goal_dx", "goal_dy", "horizon")

# What `seq evolve` may do to a LIBERO condition (see `seq.evolve.operators`): objects moved a
# few centimetres (LIBERO's tables are crowded), horizons cut to fractions of the target's steps.
EVOLVE_OPERATORS = {
    # the object only: many goals' receptacles are fixtures (a stove, a drawer), which do not move
    "pose": {"keys": ("obj_dx", "obj_dy"), "step_m": 0.03, "max_m": 0.08},
    "horizon": {"fractions": (1.0, 0.8), "min_steps": 40},
}


def check_variant(extra: Mapping[str, Any]) -> dict[str, Any]:
    """The condition's variant, or a ValueError naming the keys LIBERO does not take."""
    unknown = sorted(set(extra) - set(VARIANT_KEYS))
    if unknown:
        raise ValueError(
            f"libero: conditions take {', '.join(VARIANT_KEYS)} in extra; not {', '.join(unknown)}."
        )
    return dict(extra)


def goal_objects(env: Any) -> tuple[str | None, str | None]:
    """The object the goal moves and its receptacle (None where that is not a movable object)."""
    goal = env.parsed_problem["goal_state"]
    args = [str(a) for a in goal[0][1:]] if goal else []
    movable = env.objects_dict
    moved = args[0] if args and args[0] in movable else None
    receptacle = args[1] if len(args) > 1 and args[1] in movable else None
    return moved, receptacle


def apply_variant(env: Any, task: str, extra: Mapping[str, Any]) -> None:
    """Move the goal's objects by the variant's offsets (robosuite's `env`, its init state set)."""
    moved, receptacle = goal_objects(env)
    for name, keys in ((moved, ("obj_dx", "obj_dy")), (receptacle, ("goal_dx", "goal_dy"))):
        offset = np.array([float(extra.get(k, 0.0)) for k in keys])
        if not offset.any():
            continue
        if name is None:
            raise ValueError(f"libero: {task}'s goal has no movable object for {' and '.join(keys)} to move.")
        joint = env.objects_dict[name].joints[-1]
        pose = np.array(env.sim.data.get_joint_qpos(joint), dtype=float)
        pose[0:2] += offset
        env.sim.data.set_joint_qpos(joint, pose)
    env.sim.forward()
