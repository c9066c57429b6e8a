"""Many starts of an exported scene as MuJoCo Warp worlds, stepped together.

What a ported benchmark runs on: one world per environment, each put at an exported start (its
full state and the model numbers its seed changed, set world by world through MuJoCo Warp's
per-world model fields), the options the benchmark's MuJoCo compiled pinned, and the contact and
constraint buffers sized from the busiest start. Needs `mujoco_warp` (the port environment).

>>> worlds = WarpWorlds("scene/", nworld=64)
>>> worlds.set_start(0, worlds.starts[0])
>>> worlds.step(ctrl)          # (nworld, nu)
>>> worlds.qpos                # (nworld, nq)

It is also the `batch` of a scaffolded benchmark's envs (`seq.engine.batch`): each episode
`claim`s a world and `release`s it at its end, stages its actuator inputs in `ctrl`, and the
engine calls `step()` once every running episode has staged its own.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np

from seq.errors import SeqInputError
from seq.port import scene as layout
from seq.port.mujoco_state import STATE_FIELDS, apply_fields, pin_options, set_state
from seq.port.warp_engine import buffer_sizes, warp_modules

# model fields that place a geom welded to the world: MuJoCo Warp computes such static geoms'
# poses once, when its data is made, so a start that changes one is placed here
STATIC_POSE_FIELDS = ("body_pos", "body_quat", "geom_pos", "geom_quat")


class WarpWorlds:
    """`nworld` worlds of one exported scene on MuJoCo Warp."""

    def __init__(
        self, scene: str | Path, nworld: int, scene_id: str | None = None,
        starts: list[layout.Start] | None = None,
    ) -> None:
        """`starts`: the starts the worlds will be put at (default: the scene's own exported ones);
        their model fields and contacts decide which fields are per world and the buffer sizes."""
        import mujoco

        self.directory = Path(scene)
        manifest = layout.read_manifest(self.directory)
        ids = [entry["id"] for entry in manifest["scenes"]]
        self.scene_id = scene_id or ids[0]
        if self.scene_id not in ids:
            raise SeqInputError(f"{scene}: no scene {self.scene_id!r}; it has {ids}.")
        self.starts = starts if starts is not None else [
            layout.read_start(self.directory, entry) for entry in manifest["starts"]
            if entry["scene"] == self.scene_id
        ]
        self.mujoco = mujoco
        self.host_model = layout.load_scene(mujoco, self.directory, self.scene_id)
        pin_options(self.host_model, layout.read_options(self.directory, self.scene_id)["scene"])
        self.nworld = nworld
        for start in self.starts:
            layout.check_start(mujoco, self.host_model, start)
        self.per_world_fields = sorted({field for start in self.starts for field in start.model_changes})
        host_data = mujoco.MjData(self.host_model)
        if self.starts:  # a model's own pose can pile its objects up (LIBERO's: 1,347 contacts)
            set_state(mujoco, self.host_model, host_data, self.starts[0].state)
        else:
            mujoco.mj_forward(self.host_model, host_data)
        busiest = max([host_data.ncon, *(start.contacts for start in self.starts)])
        self.nconmax, self.njmax = buffer_sizes(self.host_model, busiest)
        _, self.mjw = warp_modules()
        self.model = self.mjw.put_model(self.host_model, {field: nworld for field in self.per_world_fields})
        for field in self.per_world_fields:
            if not hasattr(self.model, field):
                raise SeqInputError(f"{self.directory}: a start changes model.{field}, which MuJoCo Warp's "
                                    "model does not hold per world.")
        self.data = self.mjw.put_data(self.host_model, host_data, nworld=nworld, nconmax=self.nconmax,
                                      njmax=self.njmax)
        self.ctrl = np.zeros((nworld, self.host_model.nu))  # each world's actuator inputs, held
        self._mocap_start = np.repeat(np.array(host_data.mocap_pos)[None], nworld, axis=0)
        self._busy: set[int] = set()
        roots = self.host_model.body_rootid[self.host_model.geom_bodyid]
        self._static_geoms = np.flatnonzero(
            (self.host_model.body_weldid[self.host_model.geom_bodyid] == 0)
            & (self.host_model.body_mocapid[roots] == -1)
        )

    def claim(self) -> int:
        """A world no episode holds (the lowest), now held."""
        free = next((world for world in range(self.nworld) if world not in self._busy), None)
        if free is None:
            raise RuntimeError(
                f"all {self.nworld} worlds hold an episode: run with --envs-per-worker {self.nworld} "
                "or fewer, or give the benchmark more worlds."
            )
        self._busy.add(free)
        return free

    def release(self, world: int) -> None:
        """`world`'s episode ended: the next `claim` may hand it out."""
        self._busy.discard(world)

    def set_start(self, world: int, start: layout.Start) -> None:
        """Put `world` at `start`: its state, and its seed's model numbers."""
        self.set_starts([world], [start])

    def set_starts(self, worlds: list[int], starts: list[layout.Start]) -> None:
        """Put each of `worlds` at its start, with one copy per field, then recompute them all."""
        for field in (*STATE_FIELDS, "time"):
            target = getattr(self.data, field, None)
            if target is None or not any(field in start.state for start in starts):
                continue
            values = target.numpy()
            for world, start in zip(worlds, starts, strict=True):
                if field in start.state:
                    values[world] = np.asarray(start.state[field]).reshape(values[world].shape)
            target.assign(values)
        for field in self.per_world_fields:
            target = getattr(self.model, field)
            values = target.numpy()
            scene_values = np.asarray(getattr(self.host_model, field))
            for world, start in zip(worlds, starts, strict=True):
                values[world] = scene_values.reshape(values[world].shape)
                if field in start.model_changes:
                    rows, changed = start.model_changes[field]
                    values[world][rows] = np.asarray(changed).reshape((len(rows), *values.shape[2:]))
            target.assign(values)
        if self._static_geoms.size and any(field in STATIC_POSE_FIELDS for field in self.per_world_fields):
            self._place_static_geoms(worlds, starts)
        mocap = self.data.mocap_pos.numpy() if self.host_model.nmocap else None
        if mocap is not None:
            self._mocap_start[worlds] = mocap[worlds]
        self.mjw.forward(self.model, self.data)

    def _place_static_geoms(self, worlds: list[int], starts: list[layout.Start]) -> None:
        """Each world's geoms welded to the world, where its start's model puts them: computed
        here by classic MuJoCo on a copy of the scene's model with the start's changes."""
        xpos, xmat = self.data.geom_xpos.numpy(), self.data.geom_xmat.numpy()
        for world, start in zip(worlds, starts, strict=True):
            model = copy.copy(self.host_model)
            apply_fields(model, {field: change for field, change in start.model_changes.items()
                                 if field in STATIC_POSE_FIELDS})
            data = self.mujoco.MjData(model)
            self.mujoco.mj_kinematics(model, data)
            xpos[world, self._static_geoms] = data.geom_xpos[self._static_geoms]
            xmat[world, self._static_geoms] = data.geom_xmat[self._static_geoms].reshape(-1, 3, 3)
        self.data.geom_xpos.assign(xpos)
        self.data.geom_xmat.assign(xmat)

    def step(self, ctrl: np.ndarray | None = None, mocap_offset: np.ndarray | None = None) -> None:
        """One physics step of every world: `ctrl` (nworld, nu; default: the inputs held in
        `self.ctrl`), `mocap_offset` (nworld, nmocap, 3) from where each world's start put its
        mocap bodies."""
        if self.host_model.nu:
            held = self.ctrl if ctrl is None else ctrl
            self.data.ctrl.assign(np.asarray(held, dtype=np.float32).reshape(self.nworld, -1))
        if mocap_offset is not None and self.host_model.nmocap:
            self.data.mocap_pos.assign((self._mocap_start + mocap_offset).astype(np.float32))
        self.mjw.step(self.model, self.data)

    @property
    def qpos(self) -> np.ndarray:
        return self.data.qpos.numpy()

    @property
    def xpos(self) -> np.ndarray:
        return self.data.xpos.numpy()

    def field(self, name: str) -> Any:
        """Any of MuJoCo Warp's data arrays as numpy (`qvel`, `sensordata`, `site_xpos`, ...)."""
        return getattr(self.data, name).numpy()
