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
LEANING_RIM_APPROACH = 0.04  # a leaning bowl's opening faces sideways: a finger may go in
LEANING_RIM_HELD = 0.02
POSITION_GAIN = 40.0  # action per metre of error (LIBERO's OSC: 1.0 is a 5 cm step)
ROTATION_GAIN = 2.0
REACH_X = -0.05  # beyond this x, the arm reaching down to a table-top object nears full stretch (m)


def _target_object(target: str, objects: dict[str, Any]) -> str:
    """The tracked object a target names (`basket_1_contain_region` → `basket_1`)."""
    for name in sorted(objects, key=len, reverse=True):
        if target == name or target.startswith(name + "_"):
            return name
    raise ValueError(f"libero-scripted: the target {target!r} is not a tracked object.")


def _turn_to_down(axis_angle: np.ndarray, across_x: bool) -> np.ndarray:
    """The rotation (axis-angle, world frame) from the gripper's orientation to pointing straight
    down with its fingers closing along y (or x: turned a quarter about the vertical, whichever
    way is nearer): LIBERO's OSC_POSE takes it as a delta."""
    from scipy.spatial.transform import Rotation

    current = Rotation.from_rotvec(axis_angle)
    down = Rotation.from_rotvec([np.pi, 0.0, 0.0])
    if not across_x:
        return (down * current.inv()).as_rotvec()
    turns = [Rotation.from_rotvec([0.0, 0.0, yaw]) * down * current.inv() for yaw in (np.pi / 2, -np.pi / 2)]
    return min((turn.as_rotvec() for turn in turns), key=lambda rotvec: float(np.linalg.norm(rotvec)))


def _grasp(
    box: np.ndarray, pose: np.ndarray | None, others: list[np.ndarray], hand: np.ndarray
) -> tuple[np.ndarray, bool]:
    """Where to grip an object relative to its box's centre, and whether the fingers close along
    x: across the narrower side that fits the fingers, at the centre; or for an object too wide
    both ways (a bowl), its rim, on the side with room round it that the arm reaches best (the
    one nearer the robot, at -x, when it has room; the side nearer the hand when two score
    about the same, so that the choice holds while the hand moves)."""
    size = box[3:] - box[:3]
    if size[1] <= MAX_GRIP:
        return np.zeros(2), False
    if size[0] <= MAX_GRIP:
        return np.zeros(2), True
    centre = (box[:2] + box[3:5]) / 2
    tilted = _tilted_rim(box, pose)
    if tilted is not None:
        return tilted[0] - centre, tilted[1]
    sides = [
        (np.array([0.0, 1.0]), False),
        (np.array([0.0, -1.0]), False),
        (np.array([-1.0, 0.0]), True),
        (np.array([1.0, 0.0]), True),
    ]

    def offset(side: np.ndarray) -> np.ndarray:
        return side * (size[:2] / 2 - RIM)

    def score(side: np.ndarray) -> float:
        point = centre + offset(side)
        room = min((_distance_xy(point, other) for other in others), default=1.0)
        reach = max(0.0, float(point[0]) - REACH_X)  # the arm straightens past it
        return min(room, 0.05) - 0.25 * float(np.linalg.norm(point - hand[:2])) - reach

    side, across_x = max(sides, key=lambda choice: score(choice[0]))
    return offset(side), across_x


def _tilted_rim(box: np.ndarray, pose: np.ndarray | None) -> tuple[np.ndarray, bool] | None:
    """For a bowl leaning over (it slid off what it stood on), the highest point of its rim,
    a little inside its outer edge, and whether the fingers close along x there (across the
    wall, along the lean); None for one standing upright."""
    if pose is None:
        return None
    from scipy.spatial.transform import Rotation

    up = Rotation.from_quat(pose[3:7]).as_matrix()[:, 2]  # the bowl's axis in the world
    lean = float(np.linalg.norm(up[:2]))
    if lean < 0.3:  # within ~17 degrees of upright
        return None
    direction = up[:2] / lean
    sine, cosine = lean, float(up[2])
    radius = float(max(box[3] - box[0], box[4] - box[1])) / 2  # the rim's diameter stays unforeshortened
    height = (box[5] - pose[2] - radius * sine) / max(cosine, 0.2)  # the rim's plane above the origin
    # the rim's centre leans with the axis; its highest point lies the other way from it
    point = pose[:2] + height * sine * direction - (radius - RIM) * cosine * direction
    return point, bool(abs(direction[0]) > abs(direction[1]))


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
    pose = obs.get("objects", {}).get(name)
    offset, across_x = _grasp(box, None if pose is None else np.asarray(pose, np.float64), others, state[:3])
    centre = (box[:3] + box[3:]) / 2
    rim = bool(offset.any())
    leaning = rim and pose is not None and _tilted_rim(box, np.asarray(pose, np.float64)) is not None
    depth = 0.02 if leaning else 0.01 if rim else 0.025  # how far below the top to grip
    grasp = np.array([*(centre[:2] + offset), max(box[2] + 0.01, box[5] - depth)])
    near = float(np.linalg.norm(grasp - eef))
    # the way the fingers close now; held, the object keeps to it, and to where it is gripped
    hand_across_x = bool(
        np.linalg.norm(_turn_to_down(state[3:6], True)) < np.linalg.norm(_turn_to_down(state[3:6], False))
    )
    axis = 0 if hand_across_x else 1
    # a leaning rim's wall is crossed aslant: thicker between the fingers
    grip_width = LEANING_RIM_HELD if leaning else RIM_HELD if rim else box[3 + axis] - box[axis]
    # fingers nearly closed round a rim: none inside the bowl
    approach = LEANING_RIM_APPROACH if leaning else RIM_APPROACH if rim else OPEN
    # in the object's box (not at the grasp point: a bowl lifted upright changes where that is)
    in_box = float(np.linalg.norm(np.maximum(np.maximum(box[:3] - eef, eef - box[3:]), 0.0))) < 0.015
    holding = 0.001 < gap < grip_width + 0.005 and in_box
    if holding:
        offset, across_x = eef[:2] - centre[:2], hand_across_x
        grasp = eef.copy()
    above_target = (target[:2] + target[3:5]) / 2 + offset
    grip_above_bottom = grasp[2] - box[2]
    # the object's bottom 6 cm above the target, and 3 cm above anything else on the way
    path = [centre[:2] + (above_target - offset - centre[:2]) * k / 10 for k in range(11)]
    highest = max(
        (b[5] for key, b in boxes.items() if key != name and min(_distance_xy(p, b) for p in path) < 0.06),
        default=target[5],
    )
    carry_z = max(target[5] + 0.06, highest + 0.03) + grip_above_bottom
    release_z = target[5] + grip_above_bottom + (0.005 if predicate == "on" else 0.02)
    over_target = float(np.linalg.norm(eef[:2] - above_target))
    object_over_target = _distance_xy(centre[:2], target) == 0.0 and box[2] > target[2] + 0.5 * (
        target[5] - target[2]
    )
    if holding:
        if over_target > 0.015:
            if eef[2] < carry_z - 0.02 and over_target > 0.03:
                return _move(state, np.array([eef[0], eef[1], carry_z]), CLOSE, across_x)
            return _move(state, np.array([*above_target, carry_z]), CLOSE, across_x)
        if eef[2] > release_z + 0.01:
            return _move(state, np.array([*above_target, release_z]), CLOSE, across_x)
        return _move(state, eef, OPEN, across_x)
    if object_over_target:  # placed: let go and back off upwards
        return _move(state, np.array([eef[0], eef[1], carry_z]), OPEN, across_x)
    turned = float(np.linalg.norm(_turn_to_down(state[3:6], across_x)))
    opening = _gripper_towards(gap, approach)
    empty = gap < 0.001 if rim else gap < approach - 0.01 and near > 0.015
    if empty:  # closed on nothing, or closing elsewhere: open, rise
        return _move(state, np.array([eef[0], eef[1], max(eef[2], grasp[2] + 0.08)]), OPEN, across_x)
    if np.linalg.norm(eef[:2] - grasp[:2]) > 0.008 or turned > 0.1:  # above it, fingers turned
        return _move(state, np.array([*grasp[:2], max(grasp[2] + 0.08, eef[2])]), opening, across_x)
    if eef[2] - grasp[2] > 0.008:
        return _move(state, grasp, opening, across_x)
    return _move(state, grasp, CLOSE, across_x)


def _gripper_towards(gap: float, wanted: float) -> float:
    """The gripper command that opens fully (`OPEN`), or servoes the fingers' gap to `wanted`
    (robosuite's gripper action moves the fingers at a speed, not to a place)."""
    if wanted == OPEN:
        return OPEN
    return float(np.clip((gap - wanted) * 15.0, -1.0, 1.0))


def _move(state: np.ndarray, goal: np.ndarray, gripper: float, across_x: bool = False) -> np.ndarray:
    """Towards `goal` (clipped to LIBERO's action range), keeping the gripper pointing down with
    its fingers closing along y (or x)."""
    position = np.clip((goal - state[:3]) * POSITION_GAIN, -1.0, 1.0)
    rotation = np.clip(_turn_to_down(state[3:6], across_x) * ROTATION_GAIN, -1.0, 1.0)
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
