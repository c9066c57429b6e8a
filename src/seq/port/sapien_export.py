"""`seq benchmark export` of a SAPIEN benchmark (ManiSkill's, on SAPIEN's CPU PhysX).

Runs where the benchmark runs (its image). For each task and seed it calls the benchmark's
`@seq.reset` and `env.reset(seed=...)`, finds the PhysX system inside what reset returned, and
writes (layout in `seq.port.manifest`):

- each distinct build once, `scenes/sN/build.json`: every body (static, dynamic, kinematic,
  articulation link) with its mass, inertia and collision shapes (geometry, material,
  density), every articulation's joints (type, limits, drives, armature, friction) and the
  system's settings. One GPU system's worlds share all of this, so starts are grouped by it;
- each start, `starts/TASK__SEED.npz`: every dynamic body's pose and velocities, every
  articulation's root pose, joint positions and velocities and drive targets, the env's own
  state vector where it has one (ManiSkill's `get_state()`), seeded actions, and the run they
  drive on the CPU PhysX (articulation joints and body positions, one row per step): the
  reference a GPU replay is held to;
- per start, the SAPIEN calls with no GPU PhysX form the env made during its reset and during
  that run (`NO_GPU_FORM`), counted.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from seq.authoring.env_contract import reset_observation
from seq.port import manifest as layout
from seq.port.controls import seeded_controls
from seq.port.manifest import BUILD
from seq.port.scene import ExportError

# SAPIEN calls of the CPU PhysX that the GPU PhysX has no form of, and what to use there instead.
NO_GPU_FORM = {
    (
        "PhysxArticulation",
        "compute_passive_force",
    ): "no GPU form: compensate gravity another way (disable the links' gravity, as ManiSkill does)",
    (
        "PhysxArticulation",
        "create_pinocchio_model",
    ): "no GPU form: kinematics from the GPU system's link poses, or a model built once on the CPU",
    ("PhysxArticulationJoint", "set_type"): "a joint's type is fixed once the GPU system starts",
    (
        "PhysxCpuSystem",
        "get_contacts",
    ): "the GPU system answers contacts only through impulse queries (gpu_create_contact_*_query)",
    ("PhysxCpuSystem", "raycast"): "no GPU form",
    ("PhysxCpuSystem", "pack"): "the GPU system's state is read with gpu_fetch_* instead",
    ("PhysxCpuSystem", "unpack"): "the GPU system's state is written with gpu_apply_* instead",
}


def physx_system(env: Any) -> Any | None:
    """The SAPIEN PhysX system inside `env` (ManiSkill's `unwrapped.scene.px`), or None."""
    try:
        import sapien.physx as physx
    except ImportError:
        return None
    seen: set[int] = set()
    frontier = [env]
    for _ in range(5):
        following = []
        for value in frontier:
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, physx.PhysxSystem):
                return value
            for name in ("env", "unwrapped", "_env", "scene", "px", "physx_system", "sub_scenes"):
                found = getattr(value, name, None)
                if isinstance(found, list):
                    following.extend(found[:1])
                elif found is not None:
                    following.append(found)
        frontier = following
    return None


@contextmanager
def recording_no_gpu_calls() -> Iterator[Counter[str]]:
    """Count calls of `NO_GPU_FORM`'s methods made inside the block (SAPIEN's classes patched)."""
    import sapien.physx as physx

    calls: Counter[str] = Counter()
    originals = []
    for class_name, method in NO_GPU_FORM:
        cls = getattr(physx, class_name)
        original = getattr(cls, method)
        originals.append((cls, method, original))
        setattr(cls, method, _counted(original, f"{class_name}.{method}", calls))
    try:
        yield calls
    finally:
        for cls, method, original in originals:
            setattr(cls, method, original)


def _counted(original: Callable[..., Any], name: str, calls: Counter[str]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return original(*args, **kwargs)

    return call


def export_sapien(
    spec: Any,
    target: str,
    conditions: list,
    reset: Callable[..., Any],
    out: Path,
    steps: int,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Export every condition of a SAPIEN benchmark into `out` (emptied by the caller)."""
    import sapien

    builds: list[dict[str, Any]] = []
    makes: dict[str, dict[str, Any]] = {}
    scenes: list[dict[str, Any]] = []
    starts: list[dict[str, Any]] = []
    for condition in conditions:
        env = reset(condition.seed, condition)
        with recording_no_gpu_calls() as at_reset:
            reset_observation(env, condition.seed)
        system = physx_system(env)
        if system is None:
            raise ExportError(f"{spec.name} task {condition.task}: no SAPIEN PhysX system in its env.")
        build = describe_build(system)
        if build not in builds:
            builds.append(build)
            scene_id = f"s{len(scenes)}"
            (out / layout.SCENES / scene_id).mkdir(parents=True, exist_ok=True)
            (out / layout.SCENES / scene_id / BUILD).write_text(json.dumps(build, indent=1))
            scenes.append({"id": scene_id, "path": f"{layout.SCENES}/{scene_id}", "tasks": []})
        scene = scenes[builds.index(build)]
        if condition.task not in scene["tasks"]:
            scene["tasks"].append(condition.task)
        made = _make_spec(env)
        if made is not None:
            makes[condition.task] = made
        state = read_state(system, env)
        contacts = len(system.get_contacts())
        with recording_no_gpu_calls() as in_run:
            actions, reference = _reference_run(env, system, condition.seed, steps)
        name = f"{condition.task}__{condition.seed}"
        (out / layout.STARTS).mkdir(parents=True, exist_ok=True)
        arrays: dict[str, Any] = {
            "actions": actions,
            **state,
            **{f"ref.{k}": v for k, v in reference.items()},
        }
        np.savez_compressed(out / layout.STARTS / f"{name}.npz", **arrays)
        starts.append(
            {
                "task": condition.task,
                "seed": condition.seed,
                "scene": scene["id"],
                "file": f"{layout.STARTS}/{name}.npz",
                "contacts": contacts,
                "no_gpu_calls": {"reset": dict(at_reset), "run": dict(in_run)},
            }
        )
        log(f"  {condition.task} seed {condition.seed}: scene {scene['id']}, {contacts} contacts")
    manifest = {
        "format": layout.FORMAT,
        "engine": layout.Engine.SAPIEN.value,
        "benchmark": spec.name,
        "target": target,
        "sapien": sapien.__version__,
        "versions": _versions(),
        "steps": steps,
        "scenes": scenes,
        "starts": starts,
        "makes": makes,
    }
    (out / layout.MANIFEST).write_text(json.dumps(manifest, indent=2))
    return manifest


def _versions() -> dict[str, str]:
    """The versions of the packages a GPU port pins (ManiSkill's where it is installed)."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for module, distribution in (("mani_skill", "mani-skill"), ("sapien", "sapien")):
        try:
            found[module] = version(distribution)
        except PackageNotFoundError:
            continue
    return found


def describe_build(system: Any) -> dict[str, Any]:
    """What one GPU system's worlds must share: bodies, shapes, materials, masses, joints."""
    import sapien.physx as physx

    bodies = []
    components = [
        *system.rigid_static_components,
        *system.rigid_dynamic_components,
        *system.articulation_link_components,
    ]
    for component in components:
        if isinstance(component, physx.PhysxArticulationLinkComponent):
            kind = "link"
        elif isinstance(component, physx.PhysxRigidStaticComponent):
            kind = "static"
        else:
            kind = "kinematic" if component.kinematic else "dynamic"
        body: dict[str, Any] = {
            "name": component.entity.name,
            "kind": kind,
            "shapes": [_shape(shape) for shape in component.collision_shapes],
        }
        if kind != "static":
            body["mass"] = _round(component.mass)
            body["inertia"] = _round(component.inertia)
        bodies.append(body)
    articulations = []
    for articulation in _articulations(system):
        joints = [_joint(joint) for joint in articulation.joints]
        articulations.append(
            {
                "name": articulation.name,
                "dof": int(articulation.dof),
                "links": [link.entity.name for link in articulation.links],
                "joints": joints,
            }
        )
    config = system.config
    settings = {
        "timestep": _round(system.timestep),
        "gravity": _round(config.gravity),
        **{
            key: bool(getattr(config, key))
            for key in (
                "enable_ccd",
                "enable_enhanced_determinism",
                "enable_friction_every_iteration",
                "enable_pcm",
                "enable_tgs",
            )
        },
        "bounce_threshold": _round(config.bounce_threshold),
    }
    return {
        "bodies": sorted(bodies, key=lambda b: b["name"]),
        "articulations": articulations,
        "system": settings,
    }


def _joint(joint: Any) -> dict[str, Any]:
    pose = joint.pose_in_parent
    described = {"name": joint.name, "type": str(joint.type), "pose_in_parent": _round([*pose.p, *pose.q])}
    if joint.dof:  # a fixed joint has no limits or drive
        described.update(
            {
                "limits": _round(joint.limits),
                "stiffness": _round(joint.stiffness),
                "damping": _round(joint.damping),
                "force_limit": _round(joint.force_limit),
                "drive_mode": str(joint.drive_mode),
                "armature": _round(joint.armature),
                "friction": _round(joint.friction),
            }
        )
    return described


def _shape(shape: Any) -> dict[str, Any]:
    kind = type(shape).__name__.removeprefix("PhysxCollisionShape")
    material = shape.physical_material
    described: dict[str, Any] = {
        "type": kind,
        "local_pose": _round([*shape.local_pose.p, *shape.local_pose.q]),
        "static_friction": _round(material.static_friction),
        "dynamic_friction": _round(material.dynamic_friction),
        "restitution": _round(material.restitution),
        "density": _round(shape.density),
        "collision_groups": [int(g) for g in shape.collision_groups],
    }
    for attribute in ("half_size", "radius", "half_length", "scale"):
        if hasattr(shape, attribute):
            described[attribute] = _round(getattr(shape, attribute))
    if hasattr(shape, "vertices"):
        vertices = np.asarray(shape.vertices, dtype=float)
        described["vertices"] = len(vertices)
        described["extent"] = _round(vertices.max(axis=0) - vertices.min(axis=0)) if len(vertices) else []
    return described


def _round(value: Any) -> Any:
    """Numbers as JSON, rounded to float32's precision (a build compares equal across resets)."""
    array = np.asarray(value, dtype=float)
    rounded = np.round(array.astype(np.float32).astype(float), 7)
    return rounded.tolist() if array.ndim else float(rounded)


def _articulations(system: Any) -> list[Any]:
    found: dict[int, Any] = {}
    for link in system.articulation_link_components:
        found.setdefault(id(link.articulation), link.articulation)
    return sorted(found.values(), key=lambda a: a.name)


def read_state(system: Any, env: Any) -> dict[str, np.ndarray]:
    """A start: every dynamic body's pose and velocities, every articulation's joints and drives."""
    bodies = sorted(system.rigid_dynamic_components, key=lambda c: c.entity.name)
    state = {
        "body.pose": np.array(
            [[*c.entity.pose.p, *c.entity.pose.q] for c in bodies], dtype=np.float64
        ).reshape(-1, 7),
        "body.linear_velocity": np.array([c.linear_velocity for c in bodies], dtype=np.float64).reshape(
            -1, 3
        ),
        "body.angular_velocity": np.array([c.angular_velocity for c in bodies], dtype=np.float64).reshape(
            -1, 3
        ),
    }
    for index, articulation in enumerate(_articulations(system)):
        root = articulation.root_pose
        state[f"articulation{index}.root_pose"] = np.array([*root.p, *root.q], dtype=np.float64)
        state[f"articulation{index}.qpos"] = np.asarray(articulation.qpos, dtype=np.float64)
        state[f"articulation{index}.qvel"] = np.asarray(articulation.qvel, dtype=np.float64)
        joints = articulation.active_joints
        state[f"articulation{index}.drive_target"] = (
            np.concatenate([np.asarray(j.drive_target, dtype=np.float64).reshape(-1) for j in joints])
            if joints
            else np.zeros(0)
        )
        state[f"articulation{index}.drive_velocity_target"] = (
            np.concatenate(
                [np.asarray(j.drive_velocity_target, dtype=np.float64).reshape(-1) for j in joints]
            )
            if joints
            else np.zeros(0)
        )
    env_state = _env_state(env)
    if env_state is not None:
        state["env_state"] = env_state
    return state


def _env_state(env: Any) -> np.ndarray | None:
    """ManiSkill's flat simulator state (`get_state()`), which its GPU env's `set_state` takes."""
    unwrapped = getattr(getattr(env, "env", env), "unwrapped", None)
    get = getattr(unwrapped, "get_state", None)
    if get is None:
        return None
    value = get()
    value = value.cpu().numpy() if hasattr(value, "cpu") else np.asarray(value)
    return value.reshape(-1).astype(np.float64)


def _make_spec(env: Any) -> dict[str, Any] | None:
    """How the env was made (gymnasium's registered id and keyword arguments, JSON's share of
    them): the benchmark's own scene code, which a GPU port builds its worlds with."""
    for value in (env, getattr(env, "env", None)):
        spec = getattr(value, "spec", None)
        if spec is not None and getattr(spec, "id", None):
            kwargs = {key: item for key, item in (spec.kwargs or {}).items() if _is_json(item)}
            return {"id": spec.id, "kwargs": kwargs}
    return None


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _reference_run(env: Any, system: Any, seed: int, steps: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Seeded smooth actions (the middle half of the action space) stepped on the env: the actions
    and, per step, every articulation's joint positions and every dynamic body's position."""
    space = env.action_space
    low, high = np.asarray(space.low, dtype=float), np.asarray(space.high, dtype=float)
    ranges = np.stack([np.where(np.isfinite(low), low, -1.0), np.where(np.isfinite(high), high, 1.0)], axis=1)
    actions = seeded_controls(seed, steps, ranges, np.ones(len(ranges), dtype=bool), 0).ctrl
    articulations = _articulations(system)
    bodies = sorted(system.rigid_dynamic_components, key=lambda c: c.entity.name)
    qpos, xpos, env_states = [], [], []
    for action in actions:
        env.step(action.astype(np.float32))
        qpos.append(
            np.concatenate([np.asarray(a.qpos, dtype=float) for a in articulations])
            if articulations
            else np.zeros(0)
        )
        xpos.append(np.array([c.entity.pose.p for c in bodies], dtype=float).reshape(-1))
        env_state = _env_state(env)
        if env_state is not None:
            env_states.append(env_state)
    reference = {"qpos": np.array(qpos), "xpos": np.array(xpos)}
    if env_states:
        reference["env_state"] = np.array(env_states)
    return actions, reference
