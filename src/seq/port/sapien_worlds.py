"""A SAPIEN export's starts in N worlds of one PhysX system, built with the benchmark's own scene
code (ManiSkill's `gymnasium.make(id, num_envs=N, ...)`, as the export recorded it): SAPIEN's GPU
PhysX where CUDA is, else its CPU PhysX (one world: the CPU system holds one). Each start is
written back into its world after the system starts (ManiSkill's `set_state` for that world, and
the articulations' drive targets), the same calls on either system.

`replay_sapien_here` drives each start with the export's seeded actions and holds the motion to
the export's reference run (the CPU PhysX of the benchmark's own reset): the first step more than
`atol` apart, and the object (actor or articulation) furthest off.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np

from seq.errors import SeqInputError
from seq.port import manifest as layout

POSE_WIDTH = 13  # ManiSkill's state of a body: position, quaternion, linear and angular velocity


class Backend(StrEnum):
    """Which PhysX runs the worlds: the GPU's where CUDA is (AUTO), or the one named."""

    AUTO = "auto"
    GPU = "gpu"
    CPU = "cpu"


class SapienWorlds:
    """`nworld` worlds of one task's build; `set_start(world, start_file)` writes a start back."""

    def __init__(self, scene: str | Path, task: str, nworld: int, backend: Backend = Backend.AUTO) -> None:
        import gymnasium
        import mani_skill.envs  # noqa: F401  (registers ManiSkill's envs)
        import torch

        self.directory = Path(scene)
        self.export = layout.read_manifest(self.directory)
        make = self.export.get("makes", {}).get(task)
        if make is None:
            raise SeqInputError(f"{self.directory}: export.json: makes: no entry for task {task!r}.")
        if backend == Backend.AUTO:
            backend = Backend.GPU if torch.cuda.is_available() else Backend.CPU
        if backend == Backend.CPU and nworld != 1:
            raise SeqInputError(
                f"nworld {nworld}: SAPIEN's CPU PhysX holds one world; ask for 1 or use a GPU."
            )
        self.backend, self.nworld, self.task = backend, nworld, task
        kwargs = {
            **make["kwargs"],
            "num_envs": nworld,
            "sim_backend": "physx_cuda" if backend == Backend.GPU else "physx_cpu",
        }
        if backend == Backend.GPU:
            kwargs["render_backend"] = "gpu"
        self.env = gymnasium.make(make["id"], **kwargs)
        self.env.reset(seed=0)  # the system starts here; starts are written back after
        self.unwrapped: Any = self.env.unwrapped  # ManiSkill's env: device, agent, scene, state
        self.starts = [s for s in self.export["starts"] if s["task"] == task]
        self.free = list(range(nworld))

    def claim(self) -> int:
        if not self.free:
            raise RuntimeError(f"all {self.nworld} worlds are taken; run at most {self.nworld} side by side.")
        return self.free.pop(0)

    def release(self, world: int) -> None:
        self.free.append(world)

    def set_start(self, world: int, start: dict[str, Any]) -> None:
        """Write an exported start into `world`: every body's and articulation's state, drive targets."""
        import torch

        with np.load(self.directory / start["file"]) as saved:
            arrays = {key: saved[key] for key in saved.files}
        state = torch.as_tensor(arrays["env_state"][None], dtype=torch.float32, device=self.unwrapped.device)
        self.unwrapped.set_state(state, env_idx=torch.tensor([world], device=self.unwrapped.device))
        robot = self.unwrapped.agent.robot
        targets = robot.get_drive_targets().clone()
        exported = arrays.get("articulation0.drive_target")
        if exported is not None and exported.shape[-1] == targets.shape[-1]:
            targets[world] = torch.as_tensor(exported, dtype=targets.dtype, device=targets.device)
            robot.set_joint_drive_targets(targets, joints=robot.get_active_joints())
        if self.backend == Backend.GPU:
            self.unwrapped.scene._gpu_apply_all()

    def step(self, actions: np.ndarray) -> None:
        """One control step of every world, `actions` one row per world."""
        import torch

        self.env.step(torch.as_tensor(actions, dtype=torch.float32, device=self.unwrapped.device))

    def state(self) -> np.ndarray:
        """ManiSkill's flat state of every world, one row each."""
        return self.unwrapped.get_state().cpu().numpy().astype(np.float64)

    def segments(self) -> list[tuple[str, int, int]]:
        """(object, offset, width) of each actor's and articulation's position numbers in `state()`:
        an actor's position, an articulation's joint positions."""
        found, offset = [], 0
        for group, items in self.unwrapped.get_state_dict().items():
            for name, value in items.items() if isinstance(items, dict) else ():
                width = int(value.shape[-1])
                if group == "actors":
                    found.append((f"actor {name}", offset, 3))
                elif group == "articulations":
                    dof = (width - POSE_WIDTH) // 2
                    found.append((f"articulation {name}", offset + POSE_WIDTH, dof))
                offset += width
        return found


def replay_sapien_here(
    scene: str, conditions: int | None, atol: float, steps: int | None, backend: str = Backend.AUTO.value
) -> dict[str, Any]:
    """Each start (the first `conditions`) replayed on the PhysX `backend` against the reference."""
    directory = Path(scene)
    manifest = layout.read_manifest(directory)
    chosen = manifest["starts"][: conditions or len(manifest["starts"])]
    steps = steps or int(manifest["steps"])
    results, used = [], Backend(backend)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for start in chosen:
        by_task.setdefault(start["task"], []).append(start)
    for task, starts in by_task.items():
        probe_gpu = Backend(backend) == Backend.GPU or (Backend(backend) == Backend.AUTO and _cuda())
        worlds = SapienWorlds(directory, task, len(starts) if probe_gpu else 1, Backend(backend))
        used = worlds.backend
        # the GPU system runs every start at once; the CPU one, one start after another
        for group in [starts] if worlds.nworld == len(starts) else [[s] for s in starts]:
            results.extend(_replay(worlds, directory, group, atol, steps))
    return {
        "engine": layout.Engine.SAPIEN.value,
        "scene": str(directory),
        "backend": used.value,
        "atol": atol,
        "steps": steps,
        "starts": results,
        "port_differs": any(r["apart"] is not None for r in results),
    }


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def _replay(
    worlds: SapienWorlds, directory: Path, starts: list[dict[str, Any]], atol: float, steps: int
) -> list[dict[str, Any]]:
    files = [np.load(directory / s["file"]) for s in starts]
    for world, start in enumerate(starts):
        worlds.set_start(world, start)
    segments = worlds.segments()
    rows = []
    for t in range(steps):
        worlds.step(np.stack([f["actions"][t] for f in files]))
        rows.append(worlds.state())
    results = []
    for world, (start, saved) in enumerate(zip(starts, files, strict=True)):
        reference = saved["ref.env_state"][:steps]
        ours = np.stack([row[world] for row in rows])
        gaps = np.stack(
            [
                np.abs(ours[:, o : o + w] - reference[:, o : o + w]).max(axis=1) if w else np.zeros(steps)
                for _, o, w in segments
            ],
            axis=1,
        )
        largest = gaps.max(axis=0)
        beyond = np.flatnonzero(gaps.max(axis=1) > atol)
        first = int(beyond[0]) if beyond.size else None
        furthest = int(largest.argmax())
        results.append(
            {
                "task": start["task"],
                "seed": start["seed"],
                "largest": float(largest.max()),
                "furthest": segments[furthest][0],
                "apart": None
                if first is None
                else {
                    "step": first + 1,
                    "object": segments[int(gaps[first].argmax())][0],
                    "gap": float(gaps[first].max()),
                },
            }
        )
    return results
