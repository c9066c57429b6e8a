"""A distractor object in a MetaWorld scene: a free box or cylinder near the task's object.

MetaWorld builds each task's scene from its own XML; a condition whose `extra` names a
`distractor` gets an env of a subclass of the task's class whose model is that XML plus one free
body, `seq_distractor` (added through `mujoco.MjSpec` at the end of the world body, so every
index MetaWorld's own code uses into `qpos` stays where it was). At each reset the body is put
on the table at the object's start plus `distractor_along` of the way to the goal (for tasks
whose random vector holds one) plus (`distractor_dx`, `distractor_dy`) metres, or, where that is
inside another body (the tasks without a goal in their vector: a door, a drawer, a button box
stand where their "object" is), the nearest spot around it that is free. The body takes
part in contacts like any other, so traces name it; the policy's observation is MetaWorld's own
(the distractor is not in it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

BODY = "seq_distractor"
SHAPES = {"box": (0.025, 0.025, 0.025), "cylinder": (0.025, 0.03, 0.0)}  # half-sizes (cylinder: r, h)
KEYS = ("distractor", "distractor_along", "distractor_dx", "distractor_dy")
MASS = 0.1  # kilograms: light enough to push aside, heavy enough to be in the way


def shape_of(extra: Mapping[str, Any]) -> str | None:
    """The distractor a condition asks for (None: none), checked against `SHAPES`."""
    shape = extra.get("distractor")
    if shape in (None, "", "none"):
        return None
    if shape not in SHAPES:
        raise ValueError(f"MetaWorld's `distractor` must be one of {', '.join(SHAPES)}; not {shape!r}.")
    return str(shape)


def _with_distractor(model_path: str, shape: str) -> Any:
    """The task's model compiled with the distractor body added."""
    import mujoco

    spec = mujoco.MjSpec.from_file(model_path)
    body = spec.worldbody.add_body(name=BODY, pos=[0.0, 0.9, 0.1])
    # MetaWorld's scenes do not infer inertia from geoms: the body says its own (a solid box's)
    body.mass, body.explicitinertial = MASS, True
    body.inertia = [MASS * (2 * 0.025) ** 2 / 6] * 3
    body.ipos, body.iquat = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]
    body.add_freejoint(name=BODY + "_joint")
    kind = mujoco.mjtGeom.mjGEOM_BOX if shape == "box" else mujoco.mjtGeom.mjGEOM_CYLINDER
    body.add_geom(
        name=BODY + "_geom",
        type=kind,
        size=list(SHAPES[shape]),
        rgba=[0.9, 0.5, 0.1, 1.0],
        friction=[1.0, 0.005, 0.0001],
    )
    return spec.compile()


PENETRATION_M = 0.001  # deeper than this, the distractor starts inside another body
RING_STEP_M, RING_MAX_M, RING_SPOTS = 0.02, 0.2, 12  # where the nearest free spot is looked for


def _spots(wanted: np.ndarray) -> list[np.ndarray]:
    """Where to try the distractor: the place asked for, then rings around it, nearest first."""
    angles = np.arange(RING_SPOTS) * 2 * np.pi / RING_SPOTS
    rings = [
        wanted + r * np.column_stack([np.cos(angles), np.sin(angles)])
        for r in np.arange(RING_STEP_M, RING_MAX_M + 1e-9, RING_STEP_M)
    ]
    return [wanted, *np.concatenate(rings)]


def _inside(model: Any, data: Any) -> bool:
    """Whether the distractor, as placed, penetrates another body (a fixture: a door, a drawer's
    case, a button's box): MuJoCo would throw it out at the first step."""
    body = model.body(BODY).id
    return any(
        contact.dist < -PENETRATION_M
        and body in (model.geom_bodyid[contact.geom1], model.geom_bodyid[contact.geom2])
        for contact in data.contact[: data.ncon]
    )


def _on_table(model: Any, data: Any) -> bool:
    """Whether the table's top (z = 0, where the distractor is put) is right under the
    distractor's centre: a spot past the table's edge would drop it."""
    import mujoco

    body = model.body(BODY).id
    x, y = data.xpos[body][:2]
    start, down = np.array([x, y, 0.0005]), np.array([0.0, 0.0, -1.0])
    below = mujoco.mj_ray(model, data, start, down, None, 1, body, np.array([-1], dtype=np.int32))
    return 0.0 <= below < 0.005


def env_class(task_class: type, shape: str) -> type:
    """A subclass of MetaWorld's `task_class` whose scene holds the distractor."""
    import mujoco

    class WithDistractor(task_class):
        _seq_placement: tuple[float, float, float] = (0.0, 0.0, 0.0)

        def _initialize_simulation(self) -> tuple[Any, Any]:
            model = _with_distractor(self.fullpath, shape)
            model.vis.global_.offwidth = max(model.vis.global_.offwidth, self.width)
            model.vis.global_.offheight = max(model.vis.global_.offheight, self.height)
            return model, mujoco.MjData(model)

        def reset_model(self) -> Any:
            obs = super().reset_model()
            self._seq_place()
            return obs

        def _seq_place(self) -> None:
            along, dx, dy = self._seq_placement
            vector = np.asarray(self._last_rand_vec, dtype=float)
            start = vector[0:2]
            goal = vector[3:5] if len(vector) >= 6 else start
            wanted = start + along * (goal - start) + np.array([dx, dy])
            joint = self.model.joint(BODY + "_joint")
            address, velocity = int(joint.qposadr[0]), int(joint.dofadr[0])
            height = SHAPES[shape][2] if shape == "box" else SHAPES[shape][1]
            spots = _spots(wanted)
            for xy in [*spots, wanted]:  # none free: where it was asked for
                self.data.qpos[address : address + 7] = [xy[0], xy[1], height + 0.001, 1.0, 0.0, 0.0, 0.0]
                self.data.qvel[velocity : velocity + 6] = 0.0
                mujoco.mj_forward(self.model, self.data)
                if _on_table(self.model, self.data) and not _inside(self.model, self.data):
                    break

    WithDistractor.__name__ = WithDistractor.__qualname__ = task_class.__name__
    return WithDistractor


def place(env: Any, extra: Mapping[str, Any]) -> None:
    """Where the next reset puts the distractor (env: one built from `env_class`)."""
    env.unwrapped._seq_placement = (
        float(extra.get("distractor_along", 0.0)),
        float(extra.get("distractor_dx", 0.0)),
        float(extra.get("distractor_dy", 0.0)),
    )
