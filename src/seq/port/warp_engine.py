"""MuJoCo Warp for the port: a scene's model on Warp, a start's state in it, seeded controls run.

Runs on Warp's default device (a GPU where there is one, else the CPU). Contact and constraint
buffers are sized from the start (its contacts, with room to spare), as a scaffolded benchmark
sizes them from the busiest start.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from seq.port.controls import Controls

CONTACT_ROOM = 64  # contacts a world may hold beyond its start's
ROWS_PER_CONTACT = 6  # constraint rows of one elliptic contact with condim 4 (at most)


def warp_modules() -> tuple[Any, Any]:
    """`warp` and `mujoco_warp`, Warp initialised quietly."""
    import warp

    warp.config.quiet = True  # no banner; and no line per kernel module loaded (Warp 1.19)
    if hasattr(warp, "LOG_WARNING"):
        warp.config.log_level = warp.LOG_WARNING
    import mujoco_warp

    warp.init()
    return warp, mujoco_warp


def unsupported(mujoco_model: Any) -> str | None:
    """Why MuJoCo Warp refuses this model, or None when it takes it."""
    _, mjw = warp_modules()
    try:
        mjw.put_model(mujoco_model)
    except (NotImplementedError, ValueError) as error:
        return str(error)
    return None


def buffer_sizes(mujoco_model: Any, contacts: int) -> tuple[int, int]:
    """(nconmax, njmax) for a world that starts with `contacts` contacts."""
    nconmax = contacts + CONTACT_ROOM
    njmax = nconmax * ROWS_PER_CONTACT + mujoco_model.neq * 6 + mujoco_model.njnt * 2 + mujoco_model.nv
    return nconmax, njmax


def run_warp(
    mujoco_model: Any, mujoco_data: Any, controls: Controls, contacts: int
) -> tuple[np.ndarray, np.ndarray]:
    """Step the start in `mujoco_data` on MuJoCo Warp (one world): qpos and xpos after each step."""
    _, mjw = warp_modules()
    nconmax, njmax = buffer_sizes(mujoco_model, contacts)
    model = mjw.put_model(mujoco_model)
    data = mjw.put_data(mujoco_model, mujoco_data, nworld=1, nconmax=nconmax, njmax=njmax)
    mocap_start = np.array(mujoco_data.mocap_pos)
    steps = len(controls.ctrl)
    qpos, xpos = np.zeros((steps, mujoco_model.nq)), np.zeros((steps, mujoco_model.nbody, 3))
    for t in range(steps):
        if mujoco_model.nu:
            data.ctrl.assign(controls.ctrl[t][None].astype(np.float32))
        if mujoco_model.nmocap:
            data.mocap_pos.assign((mocap_start + controls.mocap_offset[t])[None].astype(np.float32))
        mjw.step(model, data)
        qpos[t], xpos[t] = data.qpos.numpy()[0], data.xpos.numpy()[0]
    return qpos, xpos
