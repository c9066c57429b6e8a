"""`libero-scripted`: pick-and-place from privileged state, through LIBERO's own OSC controller.

It needs the `libero` benchmark's privileged observation, and asks for it (`obs_mode=state`; a
`--param obs_mode=all` given to the eval is kept):
the objects' poses and bounding boxes, and the task's goal as parsed from its BDDL file. It handles
goals `(On OBJECT TARGET)` and `(In OBJECT TARGET_REGION)` whose target is one of the tracked
objects: every task of `libero_spatial` and `libero_object` (and of their LIBERO-PRO variants).
It needs nothing but NumPy and SciPy, so it can be served from anywhere.

It keeps no memory: each action follows from the observation alone. The gripper points down as
at the start; LIBERO's Panda closes its fingers along the world's y axis, so an object is gripped
across its y extent, and a bowl too wide for the fingers by its rim, at the side away from other
objects. Then: above the grasp point, down, close, up to a carrying height, over the target,
down until the object is just above it, open, and up.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import seq

OPEN, CLOSE = -1.0, 1.0
FINGERS_OPEN = 0.075  # the fingers' gap when open (m)
MAX_GRIP = 0.07  # wider than this, grip a rim
RIM = 0.0065  # how far inside a rim's outer edge to grip it (m)
RIM_APPROACH = 0.02  # the fingers' gap on the way down to a rim (m)
RIM_HELD = 0.004  # the gap, less 5 mm, of fingers closed on a rim (its wall is ~3 mm thick)
POSITION_GAIN = 40.0  # action per metre of error (LIBERO's OSC: 1.0 is a 5 cm step)
ROTATION_GAIN = 2.0


def _target_object(target: str, objects: dict[str, Any]) -> str:
    """The tracked object a target names (`basket_1_contain_region` → `basket_1`)."""
    for name in sorted(objects, key=len, reverse=True):
        if target == name or target.startswith(name + "_"):
            return name
    raise ValueError(f"libero-scripted: the target {target!r} is not a tracked object.")


def _turn_to_down(axis_angle: np.ndarray) -> np.ndarray:
    """The rotation (axis-angle, world frame) from the gripper's orientation to pointing straight
    down with its fingers closing along y: LIBERO's OSC_POSE takes it as a delta."""
    from scipy.spatial.transform import Rotation

    current = Rotation.from_rotvec(axis_angle)
    return (Rotation.from_rotvec([np.pi, 0.0, 0.0]) * current.inv()).as_rotvec()


def _grasp_offset(box: np.ndarray, others: list[np.ndarray], hand: np.ndarray) -> np.ndarray:
    """Where to grip an object relative to its box's centre: the centre, or for a box too wide
    for the fingers, its rim on the y side with more room round it (the side nearer the hand when
    both have about the same, so that the choice holds while the hand moves)."""
    size = box[3:] - box[:3]
    if size[1] <= MAX_GRIP:
        return np.zeros(2)
    centre = (box[:2] + box[3:5]) / 2

    def score(side: float) -> float:
        point = centre + [0.0, side * (size[1] / 2 - RIM)]
        room = min((_distance_xy(point, other) for other in others), default=1.0)
        return min(room, 0.05) - 0.25 * float(np.linalg.norm(point - hand[:2]))

    side = max((1.0, -1.0), key=score)
    return np.array([0.0, side * (size[1] / 2 - RIM)])


def _distance_xy(point: np.ndarray, box: np.ndarray) -> float:
    gap = np.maximum(np.maximum(box[:2] - point, point - box[3:5]), 0.0)
    return float(np.linalg.norm(gap))


def scripted_action(obs: dict[str, Any]) -> np.ndarray:
    """One action of the pick-and-place state machine (module doc)."""
    if "object_boxes" not in obs:
        raise ValueError(
            "libero-scripted needs the libero benchmark's privileged state: --param obs_mode=state "
            "(or obs_mode=all)."
        )
    goals = obs["goal"]
    if len(goals) != 1 or goals[0][0] not in ("on", "in"):
        raise ValueError(f"libero-scripted handles one On/In goal, not {goals}.")
    predicate, name, target_name = (str(part) for part in goals[0])
    boxes = {key: np.asarray(value, dtype=np.float64) for key, value in obs["object_boxes"].items()}
    target_name = _target_object(target_name, boxes)
    box, target = boxes[name], boxes[target_name]
    state = np.asarray(obs["state"], dtype=np.float64)
    eef, gap = state[:3], float(state[6] - state[7])
    # what the hand could hit on the way down: whatever stands higher than the object's bottom
    others = [b for key, b in boxes.items() if key != name and b[5] > box[2] + 0.01]
    offset = _grasp_offset(box, others, state[:3])
    centre = (box[:3] + box[3:]) / 2
    rim = bool(offset.any())
    grasp = np.array([*(centre[:2] + offset), max(box[2] + 0.01, box[5] - (0.01 if rim else 0.025))])
    above_target = (target[:2] + target[3:5]) / 2 + offset
    grip_above_bottom = grasp[2] - box[2]
    carry_z = target[5] + grip_above_bottom + 0.06  # the object's bottom 6 cm above the target
    release_z = target[5] + grip_above_bottom + (0.005 if predicate == "on" else 0.02)

    near = float(np.linalg.norm(grasp - eef))
    grip_width = RIM_HELD if rim else box[4] - box[1]  # a rim, or across the object
    approach = RIM_APPROACH if rim else OPEN  # fingers nearly closed round a rim: none inside the bowl
    holding = 0.001 < gap < grip_width + 0.005 and near < 0.03
    over_target = float(np.linalg.norm(eef[:2] - above_target))
    object_over_target = _distance_xy(centre[:2], target) == 0.0 and box[2] > target[2] + 0.5 * (
        target[5] - target[2]
    )
    if holding:
        if over_target > 0.015:
            if eef[2] < carry_z - 0.02 and over_target > 0.03:
                return _move(state, np.array([eef[0], eef[1], carry_z]), CLOSE)
            return _move(state, np.array([*above_target, carry_z]), CLOSE)
        if eef[2] > release_z + 0.01:
            return _move(state, np.array([*above_target, release_z]), CLOSE)
        return _move(state, eef, OPEN)
    if object_over_target:  # placed: let go and back off upwards
        return _move(state, np.array([eef[0], eef[1], carry_z]), OPEN)
    opening = _gripper_towards(gap, approach)
    empty = gap < 0.001 if rim else gap < approach - 0.01 and near > 0.015
    if empty:  # closed on nothing, or closing elsewhere: open, rise
        return _move(state, np.array([eef[0], eef[1], max(eef[2], grasp[2] + 0.08)]), OPEN)
    if np.linalg.norm(eef[:2] - grasp[:2]) > 0.008:
        return _move(state, np.array([*grasp[:2], max(grasp[2] + 0.08, eef[2])]), opening)
    if eef[2] - grasp[2] > 0.008:
        return _move(state, grasp, opening)
    return _move(state, grasp, CLOSE)


def _gripper_towards(gap: float, wanted: float) -> float:
    """The gripper command that opens fully (`OPEN`), or servoes the fingers' gap to `wanted`
    (robosuite's gripper action moves the fingers at a speed, not to a place)."""
    if wanted == OPEN:
        return OPEN
    return float(np.clip((gap - wanted) * 15.0, -1.0, 1.0))


def _move(state: np.ndarray, goal: np.ndarray, gripper: float) -> np.ndarray:
    """Towards `goal` (clipped to LIBERO's action range), keeping the gripper pointing down."""
    position = np.clip((goal - state[:3]) * POSITION_GAIN, -1.0, 1.0)
    rotation = np.clip(_turn_to_down(state[3:6]) * ROTATION_GAIN, -1.0, 1.0)
    return np.concatenate([position, rotation, [gripper]])


@seq.policy(name="libero-scripted")
class LiberoScripted(seq.Policy):
    """Scripted pick-and-place on LIBERO from privileged state (module doc)."""

    benchmark_parameters = {"obs_mode": "state"}  # what it reads: asked of the benchmark, recorded
    # checked before an eval starts: without the privileged keys it is refused, naming them
    inputs = {"state": (8,), "objects": None, "object_boxes": None, "goal": None}

    @seq.infer
    def infer(self, obs: Any, *, seed: int | None = None, instruction: str | None = None) -> np.ndarray:
        return scripted_action(obs).astype(np.float32)
