"""LIBERO's condition variants, the knobs `seq evolve`'s mutation operators turn on LIBERO.

A condition's `extra` may hold (all optional):

- `obj_dx`, `obj_dy`: metres added to the start position of the object the task's goal moves
  (the first object of its first goal predicate: `akita_black_bowl_1` in `on bowl plate`), after
  the init state is set and before the 10 wait steps, so the object settles where it lands;
- `goal_dx`, `goal_dy`: the same for the goal's receptacle, where it is an object (the plate);
  a fixture's region (a stove, a drawer) is not moved and the condition is refused;
- `horizon`: the condition's step limit (its `max_steps`), in `extra` so that a shortened
  condition has a key of its own;
- `distractor` (an object of LIBERO's asset set, one of `DISTRACTORS`), `distractor_along`,
  `distractor_dx`, `distractor_dy`: that object added to the scene as LIBERO-PRO's
  `_with_<object>` suites add theirs (the task's BDDL file with one more object, `DISTRACTOR`, and
  an init region on the task's workspace: `distractor_scene`), then put on the table at the goal's
  object plus `distractor_along` of the way to its receptacle plus (`distractor_dx`,
  `distractor_dy`), or, where that spot is not clear of every other object by `CLEARANCE`, at the
  nearest spot that is (`place_distractor`). The task's own init state sets every other body;
  the distractor settles during the 10 wait steps like the rest.

LIBERO-PRO's own perturbations (`_swap`, `_object`, `_lan`, `_task`, `_with_<object>`) are suites
of the benchmark already; these variants go finer: any offset, any of LIBERO's objects, on any
suite's task.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

DISTRACTOR_KEYS = ("distractor", "distractor_along", "distractor_dx", "distractor_dy")
VARIANT_KEYS = ("obj_dx", "obj_dy", "goal_dx", "goal_dy", "horizon", *DISTRACTOR_KEYS)
# The objects a distractor may be: LIBERO-PRO's own three (`_with_mug`, `_with_milk`,
# `_with_yellow_book`), whose models every LIBERO distribution on PyPI ships, and a few more of
# LIBERO's small objects.
DISTRACTORS = ("libero_mug_yellow", "milk", "yellow_book", "ketchup", "red_coffee_mug", "cream_cheese")
DISTRACTOR = "seq_distractor_1"  # its name in the scene (body names start with it: the detectors' prefix)
CLEARANCE = 0.02  # metres of table between the distractor's box and any other object's
RING_STEP_M, RING_MAX_M, RING_SPOTS = 0.02, 0.3, 16  # where the nearest clear spot is looked for
AREA_MARGIN = 0.05  # the distractor stays within this of the box round the scene's objects

# What `seq evolve` may do to a LIBERO condition (see `seq.evolve.operators`): objects moved a
# few centimetres (LIBERO's tables are crowded), horizons cut to fractions of the target's steps,
# one of LIBERO's objects added in the way or beside the goal's object.
EVOLVE_OPERATORS = {
    # the object only: many goals' receptacles are fixtures (a stove, a drawer), which do not move
    "pose": {"keys": ("obj_dx", "obj_dy"), "step_m": 0.03, "max_m": 0.08},
    "horizon": {"fractions": (1.0, 0.8), "min_steps": 40},
    "distractor": {"objects": ("libero_mug_yellow", "milk"), "along": (0.5,), "beside_m": 0.1},
}


def check_variant(extra: Mapping[str, Any]) -> dict[str, Any]:
    """The condition's variant, or a ValueError naming the keys (or the distractor) LIBERO does
    not take."""
    unknown = sorted(set(extra) - set(VARIANT_KEYS))
    if unknown:
        raise ValueError(
            f"libero: conditions take {', '.join(VARIANT_KEYS)} in extra; not {', '.join(unknown)}."
        )
    distractor_of(extra)
    return dict(extra)


def distractor_of(extra: Mapping[str, Any]) -> str | None:
    """The object a condition adds to the scene (None: none), checked against `DISTRACTORS`."""
    name = extra.get("distractor")
    if name in (None, "", "none"):
        return None
    if name not in DISTRACTORS:
        raise ValueError(f"libero: `distractor` must be one of {', '.join(DISTRACTORS)}; not {name!r}.")
    return str(name)


def distractor_scene(bddl: str, category: str) -> str:
    """The task's BDDL text with one object of `category` added, as LIBERO-PRO's `_with_<object>`
    files add theirs: an object `DISTRACTOR`, an init region on the workspace the task's regions
    stand on (the table, the floor) and `(On DISTRACTOR <workspace>_seq_distractor_init_region)`.
    Where the region puts it does not matter: `place_distractor` moves it after the init state."""
    workspace = re.search(r"\(:target\s+(\w+)\)\s*\(:ranges", bddl)
    if workspace is None:
        raise ValueError("libero: the task's BDDL file has no region on a workspace to add a distractor to.")
    region = (
        "(:regions\n      (seq_distractor_init_region\n"
        f"          (:target {workspace.group(1)})\n"
        "          (:ranges (\n              (0.0 0.0 0.01 0.01)\n            )\n          )\n"
        "          (:yaw_rotation (\n              (0.0 0.0)\n            )\n          )\n      )"
    )
    out, count = re.subn(r"\(:regions", region, bddl, count=1)
    # BDDL lists a category's objects on one line (`milk_1 milk_2 - milk`): a second line of the
    # same category would replace the first
    section = re.search(r"\(:objects(.*?)\)", out, re.S)
    same = section and re.search(
        rf"^([ \t]*[\w ]+?)(\s+-\s+{re.escape(category)}[ \t]*)$", section.group(1), re.M
    )
    if section and same:
        start = section.start(1) + same.start(2)
        out, objects = f"{out[:start]} {DISTRACTOR}{out[start:]}", 1
    else:
        out, objects = re.subn(r"\(:objects", f"(:objects\n    {DISTRACTOR} - {category}", out, count=1)
    init = f"(:init\n    (On {DISTRACTOR} {workspace.group(1)}_seq_distractor_init_region)"
    out, inits = re.subn(r"\(:init", init, out, count=1)
    if (count, objects, inits) != (1, 1, 1):
        raise ValueError("libero: the task's BDDL file lacks a (:regions, (:objects or (:init section.")
    return out


def goal_objects(env: Any) -> tuple[str | None, str | None]:
    """The object the goal moves and its receptacle (None where that is not a movable object)."""
    goal = env.parsed_problem["goal_state"]
    args = [str(a) for a in goal[0][1:]] if goal else []
    movable = env.objects_dict
    moved = args[0] if args and args[0] in movable else None
    receptacle = args[1] if len(args) > 1 and args[1] in movable else None
    return moved, receptacle


def goal_target(env: Any) -> str | None:
    """What the goal's object must end on or in: its receptacle, else the object or fixture whose
    region the goal names (`basket_1_contain_region` → `basket_1`); None for a goal without one."""
    goal = env.parsed_problem["goal_state"]
    if not goal or len(goal[0]) < 3:
        return None
    target = str(goal[0][2])
    known = sorted({*env.objects_dict, *env.fixtures_dict}, key=len, reverse=True)
    return next((name for name in known if target == name or target.startswith(name + "_")), None)


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


def _spots(wanted: np.ndarray) -> list[np.ndarray]:
    """Where to try the distractor: the spot asked for, then rings round it, nearest first."""
    angles = np.arange(RING_SPOTS) * 2 * np.pi / RING_SPOTS
    rings = [
        wanted + r * np.column_stack([np.cos(angles), np.sin(angles)])
        for r in np.arange(RING_STEP_M, RING_MAX_M + 1e-9, RING_STEP_M)
    ]
    return [wanted, *np.concatenate(rings)]


def _centre(box: np.ndarray) -> np.ndarray:
    return (box[:2] + box[3:5]) / 2


def place_distractor(env: Any, boxes: Any, task: str, extra: Mapping[str, Any]) -> np.ndarray:
    """Put the distractor at the spot the variant asks for, or the nearest one clear of every other
    object's box by `CLEARANCE` and within `AREA_MARGIN` of the box round them; returns its x, y.
    `boxes(names)` gives each named object's world bounding box (`LiberoEnv._boxes`)."""
    others = [n for n in (*env.objects_dict, *env.fixtures_dict) if n != DISTRACTOR]
    others = [n for n in others if "table" not in n and "floor" not in n]  # the workspace itself
    found = boxes([*others, DISTRACTOR])
    mine = found[DISTRACTOR]
    half = (mine[3:5] - mine[:2]) / 2
    taken = [found[n] for n in others if n in found]
    moved, _ = goal_objects(env)
    target = goal_target(env)
    anchor = _centre(found[moved]) if moved in found else np.mean([_centre(b) for b in taken], axis=0)
    towards = _centre(found[target]) if target in found else anchor
    wanted = anchor + float(extra.get("distractor_along", 0.0)) * (towards - anchor)
    wanted = wanted + np.array([float(extra.get(k, 0.0)) for k in ("distractor_dx", "distractor_dy")])
    low = np.min([b[:2] for b in taken], axis=0) - AREA_MARGIN + half
    high = np.max([b[3:5] for b in taken], axis=0) + AREA_MARGIN - half
    for xy in _spots(wanted):
        inside = bool(np.all(xy >= low) and np.all(xy <= high))
        clear = all(
            np.any(xy - half - CLEARANCE > b[3:5]) or np.any(xy + half + CLEARANCE < b[:2]) for b in taken
        )
        if inside and clear:
            joint = env.objects_dict[DISTRACTOR].joints[-1]
            pose = np.array(env.sim.data.get_joint_qpos(joint), dtype=float)
            pose[0:2] += xy - _centre(mine)  # its box's centre onto the spot (its origin may be off-centre)
            env.sim.data.set_joint_qpos(joint, pose)
            env.sim.forward()
            return np.asarray(xy)
    raise ValueError(
        f"libero: no spot for the distractor within {RING_MAX_M:g} m of where {task}'s variant asks, "
        f"clear of the other objects by {CLEARANCE:g} m."
    )
