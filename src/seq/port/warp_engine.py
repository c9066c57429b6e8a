"""MuJoCo Warp for the port: its modules, what it refuses, and the buffers a world needs.

Runs on Warp's default device (a GPU where there is one, else the CPU). Contact and constraint
buffers are sized from the start (its contacts, with room to spare), as a scaffolded benchmark
sizes them from the busiest start.
"""

from __future__ import annotations

from typing import Any

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
