"""What a LIBERO scene says of itself, written down so that a port can read it without LIBERO.

`scene_facts(env)` runs where LIBERO runs (at `seq benchmark export`, `LiberoEnv.port_facts`):
the tracked objects and fixtures by body, the robot's joints, actuators and sites by name, the
controller's state at the start, and the task's goal compiled from LIBERO's predicate objects
into plain checks. Everything else here needs only NumPy and MuJoCo, so the port (`libero-warp`)
evaluates those checks on its own MuJoCo: `goal_met`, `object_boxes`.

The checks are LIBERO's predicates, term for term (`libero.libero.envs.predicates`,
`object_states`): `On` an object (the target below, in contact, centres within 3 cm on the
table's plane), `On` a region site (its `under` test and, where the region belongs to an object,
contact with it), `In` a region site (its `in_box` test), and `Open`, `Close`, `Turnon`,
`Turnoff` (each joint's position against the object's threshold, which is read off by probing
the object's own test on both sides of it). A goal with another predicate is refused at export.
"""

from __future__ import annotations

from typing import Any

import numpy as np

JOINT_TESTS = {  # predicate: (the object's method, its ranges' key, all joints (True) or any)
    "open": ("is_open", "default_open_ranges", False),
    "close": ("is_close", "default_close_ranges", True),
    "turnon": ("turn_on", "default_turnon_ranges", False),
    "turnoff": ("turn_off", "default_turnoff_ranges", True),
}
ON_TOP_RADIUS = 0.03  # LIBERO's `check_ontop`: centres this close on the table's plane (m)
UNDER_HEIGHT = 0.10  # LIBERO's site `under`: how far above the region an object may be (m)
KINDS = ("always", "joint", "on_object", "on_site", "in_site")


class UnportableGoal(ValueError):
    """A goal whose predicate this module cannot write down."""


# ---- at export, with LIBERO ------------------------------------------------------------------


def scene_facts(env: Any) -> dict[str, Any]:
    """The start's facts (module doc) from LIBERO's env `env` (its `env.env`, the BDDL domain)."""
    model = env.sim.model
    robot = env.robots[0]
    controller = robot.controller
    body = {name: model.body_id2name(index) for name, index in env.obj_body_id.items()}
    goal = [[str(part) for part in predicate] for predicate in env.parsed_problem["goal_state"]]
    return {
        "objects": {obj.name: body[obj.name] for obj in env.objects},
        "fixtures": {name: body[name] for name in sorted(env.fixtures_dict)},
        "goal": goal,
        "checks": [_compiled(env, predicate) for predicate in goal],
        "robot": {
            "arm_joints": list(robot.robot_joints),
            "arm_actuators": [model.actuator_id2name(i) for i in robot._ref_joint_actuator_indexes],
            "gripper_joints": list(robot.gripper_joints),
            "gripper_actuators": list(robot.gripper.actuators),
            "eef_site": model.site_id2name(robot.eef_site_id),
            "eef_body": robot.robot_model.eef_name,
            "gripper_speed": float(robot.gripper.speed),
            "kp": [float(k) for k in np.ravel(controller.kp)],
            "output_max": [float(v) for v in np.ravel(controller.output_max)],
            "control_hz": float(env.control_freq),
        },
        "controller": {  # what LIBERO's OSC holds at the start: it carries over into the episode
            "goal_pos": [float(v) for v in np.ravel(controller.goal_pos)],
            "goal_ori": [float(v) for v in np.ravel(controller.goal_ori)],
            "initial_joint": [float(v) for v in np.ravel(controller.initial_joint)],
            "gripper_action": [float(v) for v in np.ravel(robot.gripper.current_action)],
            # the hand's pose as the controller last read it: the first `controller_pose`
            "pose": [float(v) for v in (*np.ravel(controller.ee_pos), *np.ravel(controller.ee_ori_mat))],
        },
    }


def _compiled(env: Any, predicate: list[str]) -> dict[str, Any]:
    """The check of one goal predicate; one this module cannot write down is kept as `unported`,
    with why, so that the export goes on and the port refuses that task by name."""
    try:
        return _compile(env, predicate)
    except UnportableGoal as error:
        return {"kind": "unported", "predicate": predicate, "why": str(error)}


def _compile(env: Any, predicate: list[str]) -> dict[str, Any]:
    name, args = predicate[0].lower(), predicate[1:]
    states = [env.object_states_dict[arg] for arg in args]
    if name in ("on", "in") and len(args) == 2 and states[0].object_state_type == "object":
        moved = _body(env, args[0])
        if states[1].object_state_type == "object" and name == "on":
            return {"kind": "on_object", "object": moved, "target": _body(env, args[1]),
                    "object_geoms": _geoms(env, args[0]), "target_geoms": _geoms(env, args[1])}
        if states[1].object_state_type == "site":
            site = env.object_sites_dict[args[1]]
            size = [float(v) for v in np.ravel(site.size)]
            if name == "in":
                _known(site, "in_box", ("SiteObject.in_box", "TargetZone.in_box"), predicate)
                return {"kind": "in_site", "object": moved, "site": args[1], "size": size}
            if not hasattr(site, "under"):
                return {"kind": "always"}  # LIBERO's `check_ontop` of such a site is True
            _known(site, "under", ("SiteObject.under",), predicate)
            parent = env.get_object(states[1].parent_name)
            return {"kind": "on_site", "object": moved, "site": args[1], "size": size,
                    "object_geoms": _geoms(env, args[0]),
                    "parent_geoms": None if parent is None else list(parent.contact_geoms)}
    if name in JOINT_TESTS and len(args) == 1:
        return _joint_check(env, name, args[0], states[0], predicate)
    known = ", ".join(["on", "in", *JOINT_TESTS])
    raise UnportableGoal(f"libero: the goal {predicate} has no port (known: {known}).")


def _joint_check(env: Any, name: str, arg: str, state: Any, predicate: list[str]) -> dict[str, Any]:
    method, key, every = JOINT_TESTS[name]
    if state.object_state_type == "site":
        joints, owner = env.object_sites_dict[arg].joints, env.get_object(state.parent_name)
    else:
        owner = env.get_object(arg)
        joints = owner.joints
    ranges = owner.object_properties["articulation"][key]
    test = getattr(owner, method)
    saved = dict(owner.object_properties.get("vis_site_names", {}))  # the stove's tests set it
    try:
        for threshold in (min(ranges), max(ranges)):
            below, at, above = (bool(test(threshold + d)) for d in (-1e-6, 0.0, 1e-6))
            if below != above:
                op = (">=" if at else ">") if above else ("<=" if at else "<")
                return {"kind": "joint", "joints": list(joints), "op": op, "threshold": float(threshold),
                        "every": every}
    finally:
        owner.object_properties["vis_site_names"] = saved
    raise UnportableGoal(f"libero: the goal {predicate}: its test does not change at its ranges {ranges}.")


def _known(site: Any, method: str, known: tuple[str, ...], predicate: list[str]) -> None:
    qualified = getattr(type(site), method).__qualname__
    if qualified not in known:
        raise UnportableGoal(f"libero: the goal {predicate} uses {qualified}, which has no port.")


def _body(env: Any, name: str) -> str:
    return str(env.sim.model.body_id2name(env.obj_body_id[name]))


def _geoms(env: Any, name: str) -> list[str]:
    return list(env.get_object(name).contact_geoms)


# ---- in the port, with MuJoCo alone -----------------------------------------------------------


class GoalChecks:
    """A start's compiled checks, bound to a model's ids: `met(data)` is LIBERO's `_check_success`."""

    def __init__(self, mujoco: Any, model: Any, checks: list[dict[str, Any]]) -> None:
        self.mujoco, self.model = mujoco, model
        self.checks = [self._bind(check) for check in checks]

    def _id(self, kind: Any, name: str) -> int:
        index = self.mujoco.mj_name2id(self.model, kind, name)
        if index < 0:
            raise ValueError(f"libero: the scene has no {kind.name[6:].lower()} {name!r}.")
        return int(index)

    def _geom_ids(self, names: list[str] | None) -> frozenset[int] | None:
        if names is None:
            return None
        return frozenset(self._id(self.mujoco.mjtObj.mjOBJ_GEOM, name) for name in names)

    def _bind(self, check: dict[str, Any]) -> dict[str, Any]:
        if check.get("kind") == "unported":
            raise UnportableGoal(str(check.get("why")))
        if check.get("kind") not in KINDS:
            known = ", ".join(KINDS)
            raise ValueError(f"libero: a goal check of kind {check.get('kind')!r}; known: {known}.")
        bound = dict(check)
        objects = self.mujoco.mjtObj
        for key in ("object", "target"):
            if key in check:
                bound[key] = self._id(objects.mjOBJ_BODY, check[key])
        if "site" in check:
            bound["site"] = self._id(objects.mjOBJ_SITE, check["site"])
            bound["size"] = np.asarray(check["size"], dtype=np.float64)
        for key in ("object_geoms", "target_geoms", "parent_geoms"):
            if key in check:
                bound[key] = self._geom_ids(check[key])
        if check["kind"] == "joint":
            bound["addresses"] = [int(self.model.jnt_qposadr[self._id(objects.mjOBJ_JOINT, j)])
                                  for j in check["joints"]]
        return bound

    def met(self, data: Any) -> bool:
        """Every check holds on `data` (after `mj_forward`: positions and contacts)."""
        return all(self._holds(check, data) for check in self.checks)

    def _holds(self, check: dict[str, Any], data: Any) -> bool:
        kind = check["kind"]
        if kind == "always":
            return True
        if kind == "joint":
            values = [float(data.qpos[address]) for address in check["addresses"]]
            passed = [_compare(value, check["op"], check["threshold"]) for value in values]
            return all(passed) if check["every"] else any(passed)
        moved = np.asarray(data.xpos[check["object"]])
        if kind == "on_object":
            target = np.asarray(data.xpos[check["target"]])
            return bool(
                target[2] <= moved[2]
                and in_contact(data, check["object_geoms"], check["target_geoms"])
                and np.linalg.norm(moved[:2] - target[:2]) < ON_TOP_RADIUS
            )
        where = np.asarray(data.site_xpos[check["site"]])
        frame = np.asarray(data.site_xmat[check["site"]]).reshape(3, 3)
        size = check["size"]
        if kind == "in_site":
            extent = np.abs(frame @ size)
            low, high = where - extent, where + extent
            low[2] -= 0.01
            return bool(np.all(moved > low) and np.all(moved < high))
        # on_site: the region's `under`, and contact with the object it belongs to
        offset = frame @ (moved - where)
        above = size[2] - 0.005 < offset[2] < size[2] + UNDER_HEIGHT
        under = above and bool(np.all(np.abs(offset[:2]) < size[:2]))
        if check["parent_geoms"] is None:
            return bool(under)
        return bool(under and in_contact(data, check["parent_geoms"], check["object_geoms"]))


def _compare(value: float, op: str, threshold: float) -> bool:
    return {"<": value < threshold, "<=": value <= threshold, ">": value > threshold,
            ">=": value >= threshold}[op]


def in_contact(data: Any, first: frozenset[int], second: frozenset[int]) -> bool:
    """A contact between a geom of `first` and one of `second` (robosuite's `check_contact`)."""
    if data.ncon == 0:
        return False
    pairs = np.asarray(data.contact.geom[: data.ncon])
    for one, two in pairs:
        if (one in first and two in second) or (one in second and two in first):
            return True
    return False


def object_boxes(
    mujoco: Any, model: Any, data: Any, names: list[str], cache: dict[str, Any]
) -> dict[str, np.ndarray]:
    """Each named object's world bounding box (`[x0, y0, z0, x1, y1, z1]`), from the oriented
    boxes of its collision geoms (those of its bodies: the body named as it, or `NAME_...`).
    `cache` keeps the geoms found, per model and names, between calls."""
    key = (id(model), tuple(names))
    if cache.get("key") != key:
        owner: dict[str, list[int]] = {}
        for geom in range(model.ngeom):
            if model.geom_contype[geom] == 0 and model.geom_conaffinity[geom] == 0:
                continue  # visual only
            body = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, model.geom_bodyid[geom]) or ""
            for name in names:
                if body == name or body.startswith(name + "_"):
                    owner.setdefault(name, []).append(geom)
        cache["key"], cache["geoms"] = key, {name: np.array(ids) for name, ids in owner.items()}
    boxes = {}
    for name, ids in cache["geoms"].items():
        rotation = data.geom_xmat[ids].reshape(-1, 3, 3)
        center = data.geom_xpos[ids] + np.einsum("gij,gj->gi", rotation, model.geom_aabb[ids, :3])
        extent = np.einsum("gij,gj->gi", np.abs(rotation), model.geom_aabb[ids, 3:])
        boxes[name] = np.concatenate([(center - extent).min(0), (center + extent).max(0)])
    return boxes
